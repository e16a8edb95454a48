"""Django admin for the helpdesk, scoped per tenant.

Superusers see everything. Other staff users see and change only objects of accounts where they hold an
*admin* Membership: `AccountScopedAdminMixin` filters querysets, scopes foreign-key choices and re-checks on
save, and the same rule grants the permissions (no Django model permissions are needed for an account's admin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest
from django.templatetags.static import static
from django.utils.html import format_html

from helpdesk.channels.api_channel import SIGNATURE_HEADER, TIMESTAMP_HEADER
from helpdesk.channels.provider_config import KEYS as PROVIDER_KEYS
from helpdesk.channels.provider_config import MAX_VALUE_LENGTH as PROVIDER_VALUE_LENGTH
from helpdesk.channels.provider_config import validate_provider_config
from helpdesk.models import (
    Account,
    CannedResponse,
    Contact,
    ContactInbox,
    Conversation,
    CsatResponse,
    CustomAttributeDefinition,
    Delivery,
    Inbox,
    Label,
    Membership,
    Message,
    Notification,
    Team,
    TeamMember,
)
from helpdesk.outbound import validate_outbound_url
from helpdesk.services.attributes import attribute_definition_clean

if TYPE_CHECKING:
    from django.contrib.admin.options import BaseModelAdmin, InlineModelAdmin

    # The mixins below are typed as the admin classes they are mixed into, so `super()`, `self.model` and the
    # permission methods they override resolve against Django's. The form-field scoping serves any admin.
    _AnyAdmin = BaseModelAdmin[Any]
    _ModelAdmin = admin.ModelAdmin
    _InlineAdmin = InlineModelAdmin
else:
    # At run time they are plain mixins: the concrete admins name Django's classes, which take no type arguments.
    _AnyAdmin = object
    _ModelAdmin = _InlineAdmin = Generic

_ModelT = TypeVar("_ModelT", bound=models.Model)
_ParentT = TypeVar("_ParentT", bound=models.Model)

# ---- tenant scoping ----------------------------------------------------------------------------------------


_ADMIN_ACCOUNT_IDS_ATTR = "_helpdesk_admin_account_ids"


def admin_account_ids(request: HttpRequest) -> frozenset[int]:
    """Accounts the request's user administers (cached on the request)."""
    cached: frozenset[int] | None = getattr(request, _ADMIN_ACCOUNT_IDS_ATTR, None)
    if cached is None:
        user = request.user
        cached = frozenset(
            Membership.objects.filter(user_id=user.pk, role=Membership.Role.ADMIN).values_list(
                "account_id", flat=True
            )
            if user.is_authenticated and user.is_active and user.is_staff
            else []
        )
        setattr(request, _ADMIN_ACCOUNT_IDS_ATTR, cached)  # HttpRequest declares no such attribute
    return cached


def account_lookup_for(model: type[models.Model]) -> str | None:
    """The ORM path from `model` to its account id, or None if the model is not owned by an account."""
    if model is Account:
        return "pk"
    names = {f.name for f in model._meta.get_fields()}
    for path in ("account", "assistant__account", "inbox__account", "conversation__account"):
        if path.split("__")[0] in names:
            return f"{path}_id" if "__" not in path else path
    return None


def scoped_queryset(model: type[models.Model], account_ids: frozenset[int]) -> QuerySet:
    """`model`'s rows of `account_ids`; for users, members of those accounts; nothing otherwise."""
    manager = model._default_manager
    if model is get_user_model():
        return manager.filter(memberships__account_id__in=account_ids).distinct()
    lookup = account_lookup_for(model)
    if lookup is None:
        return manager.none()  # unknown ownership: offer nothing rather than another tenant's rows
    return manager.filter(**{f"{lookup}__in": account_ids})


def account_id_of(obj: models.Model) -> int | None:
    lookup = account_lookup_for(type(obj))
    if lookup is None:
        return None
    if lookup == "pk":
        return obj.pk
    value: Any = obj
    *parents, last = lookup.split("__")
    for name in parents:
        value = getattr(value, name, None)
        if value is None:
            return None
    return getattr(value, last if last.endswith("_id") else f"{last}_id", None)


def _related_model(
    db_field: models.ForeignKey[Any, Any] | models.ManyToManyField[Any, Any],
) -> type[models.Model]:
    # Typed `type[Model] | "self"`, but Django resolves "self" and "app.Model" to the class when the app registry
    # loads, before any admin form is built.
    return cast(type[models.Model], db_field.related_model)


class _ScopedFormfieldsMixin(_AnyAdmin):
    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.ModelChoiceField[Any] | None:
        if not request.user.is_superuser:
            kwargs["queryset"] = scoped_queryset(_related_model(db_field), admin_account_ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(
        self, db_field: models.ManyToManyField[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.ModelMultipleChoiceField[Any] | None:
        if not request.user.is_superuser:
            kwargs["queryset"] = scoped_queryset(_related_model(db_field), admin_account_ids(request))
        return super().formfield_for_manytomany(db_field, request, **kwargs)


# Write-only credentials. A changelist filter on one (`?secret__startswith=a`) answers "some rows" or "none",
# which recovers the value a character at a time; no lookup may name them, at any depth of a relation path.
SECRET_FIELD_NAMES = frozenset(
    {
        "secret",
        "access_token",
        "webhook_token",
        "password",
        "api_key_encrypted",
        "smtp_password_encrypted",
        "imap_password_encrypted",
    }
)


class AccountScopedAdminMixin(_ScopedFormfieldsMixin, _ModelAdmin[_ModelT]):
    """For a ModelAdmin: non-superuser staff reach only the accounts they administer."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if SECRET_FIELD_NAMES.intersection(lookup.split(LOOKUP_SEP)):
            return False  # the admin answers 400 (DisallowedModelAdminLookup)
        return super().lookup_allowed(lookup, value, request)

    read_only: bool = False
    """No one adds or changes rows (ledgers, run records); superusers may still delete where allowed."""
    superuser_only_add: bool = False
    superuser_only_delete: bool = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[_ModelT]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        lookup = account_lookup_for(self.model)
        if lookup is None:
            return queryset.none()
        return queryset.filter(**{f"{lookup}__in": admin_account_ids(request)})

    def _in_scope(self, request: HttpRequest, obj: models.Model | None) -> bool:
        account_ids = admin_account_ids(request)
        return bool(account_ids) and (obj is None or account_id_of(obj) in account_ids)

    def has_module_permission(self, request: HttpRequest) -> bool:
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return bool(admin_account_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._in_scope(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._in_scope(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_add_permission(request, *args)
        return not self.superuser_only_add and self._in_scope(request, None)

    def has_delete_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return not (self.read_only or self.superuser_only_delete) and self._in_scope(request, obj)

    def save_model(self, request: HttpRequest, obj: _ModelT, form: Any, change: bool) -> None:
        # The scoped form fields already refuse other tenants' choices; this is the last line, e.g. for a
        # custom form that forgot to scope a field.
        if not request.user.is_superuser and account_id_of(obj) not in admin_account_ids(request):
            raise PermissionDenied
        super().save_model(request, obj, form, change)


class AccountScopedInlineMixin(_ScopedFormfieldsMixin, _InlineAdmin[_ModelT, _ParentT]):
    """For an inline: its parent page is already scoped; this scopes the inline's choices and permissions."""

    read_only: bool = False

    def _allowed(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or bool(admin_account_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._allowed(request)

    def has_add_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_add_permission(request, obj)
        return self._allowed(request)

    def has_change_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._allowed(request)

    def has_delete_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return self._allowed(request)


# ---- accounts ----------------------------------------------------------------------------------------------


class MembershipInline(AccountScopedInlineMixin, admin.TabularInline):
    """People of the account: role, and what automatic assignment and notifications need to know of them."""

    model = Membership
    extra = 0
    fields = [
        "user",
        "role",
        "availability",
        "max_open_assignments",
        "email_notifications",
        "escalation_notifications",
    ]


@admin.register(Account)
class AccountAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "name", "time_zone", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "time_zone"]}),
        (
            "Auto-resolve",
            {
                "fields": ["auto_resolve_ai_after_minutes", "auto_resolve_waiting_after_hours"],
                "description": "Quiet conversations are closed (or, when the AI judges people are needed, handed "
                "over) after these times. Leave a field empty to turn that rule off.",
            },
        ),
    ]
    # Tenants are created and removed by the site operator.
    superuser_only_add = True
    superuser_only_delete = True


class AttributeDefinitionAdminForm(forms.ModelForm):
    """The same checks as the API's (helpdesk.services.attributes): a list needs its choices, other kinds have
    none, the key is lowercase."""

    class Meta:
        model = CustomAttributeDefinition
        fields = ["account", "applies_to", "key", "label", "description", "kind", "choices"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        candidate = CustomAttributeDefinition(
            account_id=getattr(cleaned.get("account"), "pk", None) or self.instance.account_id,
            applies_to=cleaned.get("applies_to") or self.instance.applies_to,
            key=cleaned.get("key") or self.instance.key,
            label=cleaned.get("label", ""),
            description=cleaned.get("description", ""),
            kind=cleaned.get("kind", ""),
            choices=cleaned.get("choices") or [],
        )
        try:
            attribute_definition_clean(candidate)
        except ValidationError as exc:
            for field, messages_ in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, messages_)
            return cleaned
        cleaned["label"], cleaned["choices"] = candidate.label, candidate.choices
        return cleaned


@admin.register(CustomAttributeDefinition)
class CustomAttributeDefinitionAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Typed attributes of contacts and conversations; the values are edited in the dashboard or the API."""

    form = AttributeDefinitionAdminForm
    list_display = ["key", "label", "applies_to", "kind", "account"]
    list_filter = ["applies_to", "kind"]
    search_fields = ["key", "label"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: CustomAttributeDefinition | None = None
    ) -> list[str]:
        # Values are stored under the key: renaming it or moving it to another account would orphan them.
        return ["account", "applies_to", "key"] if obj is not None and obj.pk else []


# ---- inboxes -----------------------------------------------------------------------------------------------


class InboxAdminForm(forms.ModelForm):
    """Secret and access token are write-only: never rendered; left blank they keep the stored value."""

    new_secret = forms.CharField(
        label="Secret",
        required=False,
        strip=True,
        max_length=200,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=(
            "API: shared HMAC secret. Telegram: the webhook secret_token. WhatsApp: the Meta app secret. "
            "Slack: the signing secret. Blank keeps the current one (a new inbox gets a generated one)."
        ),
    )
    new_access_token = forms.CharField(
        label="Access token",
        required=False,
        strip=True,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Telegram bot token, WhatsApp access token or Slack bot token (xoxb-). Blank keeps the current one.",
    )
    # E-mail: stored encrypted (helpdesk.crypto), never rendered; blank keeps the stored one.
    new_smtp_password = forms.CharField(
        label="SMTP password",
        required=False,
        strip=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted. Blank keeps the current one.",
    )
    new_imap_password = forms.CharField(
        label="IMAP password",
        required=False,
        strip=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted. Never set: the SMTP password is used. Blank keeps the current one.",
    )

    class Meta:
        model = Inbox
        fields = [
            "account",
            "name",
            "channel_type",
            "callback_url",
            "provider_config",
            "webhook_rate_limit_per_minute",
            "greeting_message",
            "handoff_message",
            "after_resolution",
            "csat_survey_enabled",
            "csat_message",
            "language",
        ]
        labels = {"provider_config": "Other provider settings (JSON)"}
        help_texts = {
            "provider_config": "Advanced: settings that have no field above, as a JSON object. The fields above "
            "take precedence for their own keys."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Each stored setting of this inbox's channel is shown in its own field; the JSON box keeps the rest, so
        # a key the fields do not know is neither lost nor hidden.
        stored = self.instance.provider_config if isinstance(self.instance.provider_config, dict) else {}
        own = PROVIDER_KEYS.get(self.instance.channel_type, {}) if self.instance.pk else {}
        for key in own:
            name = provider_field_name(self.instance.channel_type, key)
            if name in self.fields and isinstance(stored.get(key), str):
                self.initial[name] = stored[key]
        if "provider_config" in self.fields:
            self.initial["provider_config"] = {k: v for k, v in stored.items() if k not in own}
        if "after_resolution" in self.fields:
            # Left out of a submission (a scripted POST): the stored policy, or the default for a new inbox.
            self.fields["after_resolution"].required = False
        if "language" in self.fields:
            self.fields["language"].required = False  # likewise: the stored language, or English

    def clean_after_resolution(self) -> str:
        return self.cleaned_data.get("after_resolution") or self.instance.after_resolution

    def clean_language(self) -> str:
        return self.cleaned_data.get("language") or self.instance.language

    def clean_callback_url(self) -> str:
        # The server POSTs every reply there: the outbound policy decides which hosts it may be.
        url = self.cleaned_data.get("callback_url") or ""
        if url:
            validate_outbound_url(url)
        return url

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's clean() returns its cleaned_data, typed as Optional for overrides
        cleaned = self.cleaned_data
        # Its keys depend on the channel type, so it is checked here rather than in clean_provider_config.
        channel = cleaned.get("channel_type")
        if "provider_config" in cleaned and channel:
            if cleaned["provider_config"] is None:  # the field left empty: no settings, not JSON null
                cleaned["provider_config"] = {}
            if not self._merge_provider_fields(channel, cleaned):
                return cleaned
            try:
                validate_provider_config(channel, cleaned["provider_config"])
            except ValidationError as exc:
                self.add_error("provider_config", exc)
        return cleaned

    def _merge_provider_fields(self, channel: str, cleaned: dict[str, Any]) -> bool:
        """Put the chosen channel's setting fields into `provider_config` (an emptied field removes its key:
        the channel's default applies). Each value is checked on its own field first, so the error sits next
        to what was typed. Other channels' fields are ignored. False when a field has an error."""
        config = cleaned["provider_config"]
        if not isinstance(config, dict):
            return True  # the validator names the problem ("must be a JSON object")
        merged = dict(config)
        ok = True
        for key in PROVIDER_KEYS.get(channel, {}):
            name = provider_field_name(channel, key)
            if self.add_prefix(name) not in self.data:
                continue  # not on the submitted page (e.g. a scripted POST with JSON only): leave the key alone
            value = (cleaned.get(name) or "").strip()
            if not value:
                merged.pop(key, None)
                continue
            try:
                validate_provider_config(channel, {key: value})
            except ValidationError as exc:
                self.add_error(name, _field_message(key, exc))
                ok = False
                continue
            merged[key] = value
        cleaned["provider_config"] = merged
        return ok

    def save(self, commit: bool = True) -> Inbox:
        secret = self.cleaned_data.get("new_secret")
        if secret:
            self.instance.secret = secret
        access_token = self.cleaned_data.get("new_access_token")
        smtp_password = self.cleaned_data.get("new_smtp_password") or ""
        if access_token and self.instance.channel_type == Inbox.ChannelType.EMAIL:
            smtp_password = smtp_password or access_token  # an e-mail inbox keeps no plain password
        elif access_token:
            self.instance.access_token = access_token
        if smtp_password:
            self.instance.smtp_password_set(smtp_password)
        if self.cleaned_data.get("new_imap_password"):
            self.instance.imap_password_set(self.cleaned_data["new_imap_password"])
        return super().save(commit=commit)


def provider_field_name(channel: str, key: str) -> str:
    return f"{channel}_{key}"


def _field_message(key: str, exc: ValidationError) -> str:
    """'provider_config["phone_number_id"] must be ...' -> 'Must be ...' (shown on the field itself)."""
    message = exc.messages[0]
    prefix = f'provider_config["{key}"] '
    if message.startswith(prefix):
        message = message[len(prefix) :]
    return message[:1].upper() + message[1:]


# What each key means, from the channel modules' docstrings (helpdesk/channels/<channel>.py).
PROVIDER_FIELD_TEXTS: dict[str, tuple[str, str]] = {
    "phone_number_id": ("Phone number ID", "Meta's phone number id (digits); required to send replies."),
    "verify_token": ("Verify token", "Any text you choose; type the same in Meta's webhook settings."),
    "api_version": ("Graph API version", 'e.g. "v21.0". Empty: v21.0.'),
    "bot_user_id": (
        "Bot user ID",
        'Our bot\'s Slack user id (e.g. "U0123ABCD"), so its own messages are ignored.',
    ),
    "api_base_url": ("API base URL", "Empty: the provider's public API. Only for a proxy or a test server."),
    "prechat_fields": (
        "Pre-chat form",
        'Asked before a new visitor\'s first message: "name", "email" or "name email".',
    ),
    "smtp_host": ("SMTP host", "Your mail server for replies; it must be allowed by the outbound policy."),
    "smtp_port": ("SMTP port", "Empty: 587 (starttls) or 465 (ssl)."),
    "smtp_security": ("SMTP security", '"starttls" (default), "ssl" or "none".'),
    "smtp_username": ("SMTP username", "The password goes in SMTP password below."),
    "from_address": ("From address", "The support address replies are sent from."),
    "from_name": ("From name", "Empty: the inbox name."),
    "greeting": (
        "Greeting",
        'First line of every reply, e.g. "Hello {name}," ({name}: the customer\'s name).',
    ),
    "sign_off": ("Sign-off", 'Last line of every reply, e.g. "Best regards, Acme support".'),
    "ai_replies_per_hour": (
        "AI replies per contact and hour",
        "Past this the AI leaves a contact's mail to people (stops mail loops). Empty: 10; 0: no limit.",
    ),
    "imap_host": ("IMAP host", "To poll a mailbox for new mail (instead of, or besides, a Mailgun route)."),
    "imap_port": ("IMAP port", "Empty: 993 (ssl) or 143."),
    "imap_security": ("IMAP security", '"ssl" (default), "starttls" or "none".'),
    "imap_username": ("IMAP username", "Empty: the SMTP username. The password goes in IMAP password below."),
    "imap_folder": ("IMAP folder", "Empty: INBOX."),
    "business_hours": (
        "Business hours",
        'e.g. "mon-fri 09:00-17:30; sat 10:00-14:00" (other days closed). Empty: always open, never away.',
    ),
    "time_zone": ("Time zone", 'Of the business hours, e.g. "Europe/Berlin". Empty: UTC.'),
    "away_message": ("Away message", "Shown outside business hours, with a field for the visitor's e-mail."),
    "follow_up_inbox": (
        "Follow-up e-mail inbox",
        "The id of an e-mail inbox of this account: replies to a question asked outside business hours are "
        "also sent by e-mail through its SMTP settings to the e-mail the visitor left.",
    ),
    "allowed_origins": (
        "Allowed origins",
        'The sites the widget may run on, separated by spaces, e.g. "https://shop.example https://www.shop.example".',
    ),
}

# Write-only secrets of a channel, shown in its settings next to the server they log in to.
_CHANNEL_SECRET_FIELDS = {"email": ["new_smtp_password", "new_imap_password"]}

_CHANNEL_TITLES = {
    "telegram": "Telegram settings",
    "whatsapp": "WhatsApp settings",
    "slack": "Slack settings",
    "widget": "Website widget settings",
    "email": "E-mail settings",
}


def _add_provider_fields() -> None:
    """One optional text field per documented key of each channel (helpdesk.channels.provider_config.KEYS, the
    list the validator enforces), declared on the form class so the admin's fieldsets may name them."""
    for channel, keys in PROVIDER_KEYS.items():
        for key in keys:
            label, help_text = PROVIDER_FIELD_TEXTS.get(key, (key.replace("_", " ").capitalize(), ""))
            field = forms.CharField(
                label=label,
                required=False,
                max_length=PROVIDER_VALUE_LENGTH,
                help_text=help_text,
                widget=forms.TextInput(attrs={"size": 60}),
            )
            name = provider_field_name(channel, key)
            InboxAdminForm.base_fields[name] = field
            InboxAdminForm.declared_fields[name] = field


_add_provider_fields()


_WEBHOOK_PATHS: dict[str, str] = {
    Inbox.ChannelType.API: "api",
    Inbox.ChannelType.TELEGRAM: "telegram",
    Inbox.ChannelType.WHATSAPP: "whatsapp",
    Inbox.ChannelType.SLACK: "slack",
    Inbox.ChannelType.EMAIL: "email",
}

# What to do on the provider's side with the webhook URL, per channel type.
_PROVIDER_SETUP: dict[str, str] = {
    Inbox.ChannelType.TELEGRAM: (
        "Call <code>setWebhook</code> with this URL and <code>secret_token</code> = the inbox secret; "
        "put the bot token in Access token. Replies use sendMessage (split at 4096 characters)."
    ),
    Inbox.ChannelType.WHATSAPP: (
        "In the Meta app's WhatsApp webhook settings use this URL as callback URL and "
        "the <em>Verify token</em> above as verify token, and subscribe to <code>messages</code>. "
        "Secret = the app secret; Access token = a system-user token; set the <em>Phone number ID</em> above. "
        "Replies are split at 4096 characters."
    ),
    Inbox.ChannelType.EMAIL: (
        "In Mailgun, add an inbound route for the support address whose action forwards the raw MIME to this URL. "
        "Secret = the Mailgun webhook signing key; fill in the SMTP settings, the SMTP password "
        "and the From address above."
    ),
    Inbox.ChannelType.SLACK: (
        "Use this URL as the app's Event Subscriptions request URL and subscribe to <code>message.im</code> "
        "(and <code>message.channels</code> if wanted). Secret = the signing secret; Access token = the bot "
        "token (chat:write); set the <em>Bot user ID</em> above so our own messages are ignored. "
        "Replies over 40,000 characters are shortened. For quick-reply buttons (follow-up suggestions), also set "
        "Interactivity &amp; Shortcuts &rarr; Request URL to this URL."
    ),
}


def inbox_webhook_url(inbox: Inbox) -> str:
    path = _WEBHOOK_PATHS.get(inbox.channel_type, "api")
    return f"{settings.PUBLIC_BASE_URL.rstrip('/')}/webhooks/{path}/{inbox.webhook_token}/"


@admin.register(Inbox)
class InboxAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = InboxAdminForm
    list_display = ["id", "name", "channel_type", "account", "created_at"]
    list_filter = ["channel_type"]
    search_fields = ["name"]
    readonly_fields = ["webhook_setup"]

    def get_fieldsets(self, request: HttpRequest, obj: Inbox | None = None) -> list:
        # A saved inbox shows its own channel's settings; a new one shows every channel's, folded (only the
        # chosen channel's are saved).
        channels = [obj.channel_type] if obj is not None and obj.pk else list(_CHANNEL_TITLES)
        provider = [
            (
                _CHANNEL_TITLES[channel],
                {
                    "fields": [provider_field_name(channel, key) for key in PROVIDER_KEYS.get(channel, {})]
                    + _CHANNEL_SECRET_FIELDS.get(channel, []),
                    "classes": [] if obj is not None and obj.pk else ["collapse"],
                },
            )
            for channel in channels
            if PROVIDER_KEYS.get(channel)
        ]
        return [
            (None, {"fields": ["account", "name", "channel_type", "new_secret", "callback_url"]}),
            (
                "Provider channels (Telegram, WhatsApp, Slack)",
                {"fields": ["new_access_token", "webhook_rate_limit_per_minute"]},
            ),
            *provider,
            ("Messages", {"fields": ["greeting_message", "handoff_message", "language"]}),
            (
                "After resolution",
                {
                    "fields": ["after_resolution", "csat_survey_enabled", "csat_message"],
                    "description": "What happens when a customer writes after their conversation was resolved, "
                    "and whether they are asked to rate it.",
                },
            ),
            ("Webhook", {"fields": ["webhook_setup"]}),
            ("Other provider settings (advanced)", {"fields": ["provider_config"], "classes": ["collapse"]}),
        ]

    @admin.display(description="Webhook URL and setup")
    def webhook_setup(self, inbox: Inbox) -> str:
        if not inbox.pk:
            return "Save the inbox to get its webhook URL."
        if inbox.channel_type == Inbox.ChannelType.WIDGET:
            return format_html(
                'Put this tag on the pages of the allowed origins:<br><code>&lt;script src="{src}" '
                'data-website-token="{token}" async&gt;&lt;/script&gt;</code><br>The secret is the identity '
                "secret: your server sends <code>identifier_hash</code> = hex HMAC-SHA256(secret, identifier) "
                "with <code>setUser</code>.",
                src=f"{settings.PUBLIC_BASE_URL.rstrip('/')}{static('helpdesk/widget/widget.js')}",
                token=inbox.webhook_token,
            )
        if inbox.channel_type != Inbox.ChannelType.API:
            # The setup text is our own constant markup (no braces), so it can be part of the format string.
            setup = _PROVIDER_SETUP.get(inbox.channel_type, "")
            return format_html("<code>{}</code><br>" + setup, inbox_webhook_url(inbox))
        return format_html(
            "<code>{url}</code><br>POST JSON to this URL with the headers "
            "<code>{ts}: &lt;unix seconds&gt;</code> "
            'and <code>{sig}: sha256=&lt;hex HMAC-SHA256(secret, "{{timestamp}}.{{raw body}}")&gt;</code>. '
            "Replies are POSTed, signed the same way, to the callback URL.",
            url=inbox_webhook_url(inbox),
            ts=TIMESTAMP_HEADER,
            sig=SIGNATURE_HEADER,
        )

    def save_model(self, request: HttpRequest, obj: Inbox, form: InboxAdminForm, change: bool) -> None:
        generated = not change and not form.cleaned_data.get("new_secret")
        super().save_model(request, obj, form, change)
        if generated:
            # Shown once, right after creation, so it can be copied into the sender; never rendered again.
            self.message_user(
                request, f"Generated webhook secret (shown only now): {obj.secret}", level=messages.WARNING
            )


# ---- contacts and conversations ----------------------------------------------------------------------------


class ContactInboxInline(AccountScopedInlineMixin, admin.TabularInline):
    model = ContactInbox
    extra = 0
    read_only = True
    # Tuples: a list would be inferred as `fields`' wider element type, which readonly_fields does not take.
    fields = ("inbox", "source_id")
    readonly_fields = fields


@admin.register(Contact)
class ContactAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "name", "email", "account", "created_at"]
    search_fields = ["name", "email"]
    inlines = [ContactInboxInline]


@admin.register(Label)
class LabelAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "account"]
    search_fields = ["name"]


RECENT_MESSAGES = 50


def delivery_status_display(message: Message) -> str:
    """The outbox state from the message's `Delivery` (select it with the message); notes have none."""
    delivery: Delivery | None = getattr(message, "delivery", None)
    return delivery.get_status_display() if delivery is not None else "Not sent"


class RecentMessagesFormSet(forms.BaseInlineFormSet):
    """Only the latest RECENT_MESSAGES messages: a long thread must not make the change page huge."""

    def get_queryset(self) -> QuerySet:
        if not hasattr(self, "_recent"):
            everything = super().get_queryset()
            recent_ids = list(
                everything.order_by("-created_at", "-id").values_list("pk", flat=True)[:RECENT_MESSAGES]
            )
            self._recent = (
                everything.filter(pk__in=recent_ids).select_related("delivery").order_by("created_at", "id")
            )
        return self._recent


class MessageInline(AccountScopedInlineMixin, admin.TabularInline):
    model = Message
    formset = RecentMessagesFormSet
    extra = 0
    read_only = True
    verbose_name_plural = f"Messages (latest {RECENT_MESSAGES})"
    fields = (
        "created_at",
        "message_type",
        "private",
        "sender_type",
        "ai_agent_name",
        "content",
        "delivery_status",
    )
    readonly_fields = fields  # a tuple, as in ContactInboxInline
    can_delete = False
    show_change_link = True

    @admin.display(description="Delivery status")
    def delivery_status(self, message: Message) -> str:
        return delivery_status_display(message)


@admin.register(Conversation)
class ConversationAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "status", "priority", "inbox", "contact", "assignee", "last_activity_at"]
    # RelatedOnly: the inbox filter lists only inboxes of conversations this user can see.
    list_filter = ["status", "priority", ("inbox", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["inbox", "contact", "assignee"]
    search_fields = ["contact__name", "contact__email"]
    superuser_only_add = True  # conversations come from channels
    fields = [
        "account",
        "inbox",
        "contact",
        "status",
        "priority",
        "assignee",
        "labels",
        "ai_agent_key",
        "waiting_since",
        "escalation_reason",
        "last_activity_at",
        "created_at",
    ]
    # Status changes have side effects (activity line, AI hand-back): make them in the dashboard or the API.
    readonly_fields = [
        "account",
        "inbox",
        "contact",
        "status",
        "ai_agent_key",
        "waiting_since",
        "escalation_reason",
        "last_activity_at",
        "created_at",
    ]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Read-only: messages are written by channels, people and the AI through services."""

    read_only = True
    list_display = [
        "id",
        "conversation",
        "message_type",
        "private",
        "sender_type",
        "delivery_status",
        "created_at",
    ]
    list_filter = ["message_type", "delivery__status"]
    list_select_related = ["conversation", "delivery"]
    search_fields = ["content"]

    @admin.display(description="Delivery status")
    def delivery_status(self, message: Message) -> str:
        return delivery_status_display(message)

    def get_readonly_fields(self, request: HttpRequest, obj: Message | None = None) -> list[str]:
        return [f.name for f in Message._meta.concrete_fields]


# ---- teams, canned responses, satisfaction, notifications ---------------------------------------------------


class TeamMemberFormSet(forms.BaseInlineFormSet):
    """A team's members are people of the team's account: a user of another account (or none) is refused on
    the row, whoever edits (the user choices are scoped too, but a superuser sees every user)."""

    def clean(self) -> None:
        super().clean()
        account_id = self.instance.account_id
        if account_id is None:
            return
        members = set(Membership.objects.filter(account_id=account_id).values_list("user_id", flat=True))
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE") or data.get("user") is None:
                continue
            if data["user"].pk not in members:
                form.add_error("user", f"{data['user']} is not a member of {self.instance.account}.")


class TeamMemberInline(AccountScopedInlineMixin, admin.TabularInline):
    model = TeamMember
    formset = TeamMemberFormSet
    extra = 0
    fields = ["user", "last_assigned_at"]
    readonly_fields = ["last_assigned_at"]
    verbose_name = "member"
    verbose_name_plural = "members"


@admin.register(Team)
class TeamAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Teams pick up the escalations of the scenarios and routing nodes that name them, round-robin among
    their online members with room for more (helpdesk.services.assignment)."""

    list_display = ["name", "account", "auto_assign", "member_count"]
    list_filter = ["auto_assign", ("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "description"]
    fields = ["account", "name", "description", "auto_assign"]
    inlines = [TeamMemberInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Team | None = None) -> list[str]:
        # Scenarios and conversations of the account point at it: a team stays in its account.
        return ["account"] if obj is not None and obj.pk else []

    @admin.display(description="Members")
    def member_count(self, obj: Team) -> int:
        return obj.team_members.count()


@admin.register(CannedResponse)
class CannedResponseAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Saved replies; agents type `/` and the short code in the composer."""

    list_display = ["short_code", "account", "preview", "created_at"]
    list_filter = [("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["short_code", "content"]
    fields = ["account", "short_code", "content"]

    @admin.display(description="Content")
    def preview(self, obj: CannedResponse) -> str:
        return obj.content[:80]


@admin.register(CsatResponse)
class CsatResponseAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Customers' ratings (read only: they come from the customers' answers in their channel)."""

    read_only = True
    list_display = ["conversation", "rating", "comment", "account", "created_at"]
    list_filter = ["rating"]
    list_select_related = ["conversation", "account"]
    search_fields = ["comment"]

    def get_readonly_fields(self, request: HttpRequest, obj: CsatResponse | None = None) -> list[str]:
        return [f.name for f in CsatResponse._meta.concrete_fields]


@admin.register(Notification)
class NotificationAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """What people were told (read only: escalations, assignments and mentions write them)."""

    read_only = True
    list_display = ["created_at", "user", "kind", "text", "read_at", "account"]
    list_filter = ["kind"]
    list_select_related = ["user", "account"]
    search_fields = ["text"]

    def get_readonly_fields(self, request: HttpRequest, obj: Notification | None = None) -> list[str]:
        return [f.name for f in Notification._meta.concrete_fields]
