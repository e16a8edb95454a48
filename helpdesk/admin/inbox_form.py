"""The inbox's admin form: write-only credentials, and one field per documented setting of each channel
(merged into and out of `provider_config`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from helpdesk.channels.provider_config import KEYS as PROVIDER_KEYS
from helpdesk.channels.provider_config import MAX_VALUE_LENGTH as PROVIDER_VALUE_LENGTH
from helpdesk.channels.provider_config import validate_provider_config
from helpdesk.models import Inbox
from helpdesk.outbound import validate_outbound_url


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
            "auto_assign",
            "sla_policy",
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
        policy, account = (
            cleaned.get("sla_policy"),
            cleaned.get("account") or getattr(self.instance, "account", None),
        )
        if policy is not None and account is not None and policy.account_id != account.pk:
            self.add_error("sla_policy", "Choose an SLA policy of this inbox's account.")
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


# What each key means, from the channel modules' docstrings (helpdesk/channels/<channel>).
PROVIDER_FIELD_TEXTS: dict[str, tuple[str, str]] = {
    "phone_number_id": ("Phone number ID", "Meta's phone number id (digits); required to send replies."),
    "verify_token": ("Verify token", "Any text you choose; type the same in Meta's webhook settings."),
    "waba_id": (
        "WhatsApp Business Account ID",
        "Meta's business account id (digits); needed to sync message templates.",
    ),
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
    "time_zone": (
        "Time zone",
        'Of the business hours, e.g. "Europe/Berlin". Empty: the account\'s time zone.',
    ),
    "away_message": (
        "Away message",
        "Told to a customer who is handed to people outside business hours (the next opening time is added); the "
        "website widget also shows it with a field for the visitor's e-mail.",
    ),
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
