"""Admin of inboxes: per-channel settings on the form (helpdesk.admin.inbox_form), the webhook URL with what
to set up on the provider's side, and the inbox's members (told of its escalations that no team picks up)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest
from django.templatetags.static import static
from django.utils.html import format_html

from helpdesk.channels.api_channel import SIGNATURE_HEADER, TIMESTAMP_HEADER
from helpdesk.channels.provider_config import KEYS as PROVIDER_KEYS
from helpdesk.models import Inbox, InboxMember
from helpdesk.services.inbox_members import inbox_member_outsiders

from .inbox_form import InboxAdminForm, provider_field_name
from .scoping import AccountScopedAdminMixin, AccountScopedInlineMixin

# Write-only secrets of a channel, shown in its settings next to the server they log in to.
_CHANNEL_SECRET_FIELDS = {"email": ["new_smtp_password", "new_imap_password"]}

_CHANNEL_TITLES = {
    "api": "API channel settings",
    "telegram": "Telegram settings",
    "whatsapp": "WhatsApp settings",
    "slack": "Slack settings",
    "widget": "Website widget settings",
    "email": "E-mail settings",
}


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


class InboxMemberFormSet(forms.BaseInlineFormSet):
    """An inbox's members are people of the inbox's account: anyone else is refused on the row, whoever edits
    (the user choices are scoped too, but a superuser, or an admin of two accounts, sees users of others)."""

    def clean(self) -> None:
        super().clean()
        account_id = self.instance.account_id
        if account_id is None:
            return
        rows = [
            form
            for form in self.forms
            if getattr(form, "cleaned_data", None)
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("user") is not None
        ]
        outsiders = {
            user.pk
            for user in inbox_member_outsiders(
                account_id=account_id, users=[form.cleaned_data["user"] for form in rows]
            )
        }
        for form in rows:
            user = form.cleaned_data["user"]
            if user.pk in outsiders:
                form.add_error("user", f"{user} is not a member of {self.instance.account}.")


class InboxMemberInline(AccountScopedInlineMixin, admin.TabularInline):
    model = InboxMember
    formset = InboxMemberFormSet
    extra = 0
    fields = ["user", "created_at"]
    readonly_fields = ["created_at"]
    verbose_name = "member"
    verbose_name_plural = "members (told of this inbox's escalations that no team picks up)"


@admin.register(Inbox)
class InboxAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = InboxAdminForm
    inlines = [InboxMemberInline]
    list_display = ["id", "name", "channel_type", "account", "created_at"]
    list_filter = ["channel_type"]
    search_fields = ["name"]
    readonly_fields = ["webhook_setup"]

    def get_inlines(self, request: HttpRequest, obj: Inbox | None = None) -> list:
        # Members are people of the inbox's account: chosen once the inbox (and so its account) is saved.
        return list(self.inlines) if obj is not None and obj.pk else []

    def get_fieldsets(self, request: HttpRequest, obj: Inbox | None = None) -> list:
        # A saved inbox shows its own channel's settings (every channel has business hours); a new one shows
        # every channel's, folded (only the chosen channel's are saved).
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
            (
                "Members and assignment",
                {
                    "fields": ["auto_assign"],
                    "description": "Once an inbox has members (below, after saving), agents who are not among "
                    "them no longer see its conversations; administrators see all. An inbox with no members is "
                    "open to every agent of the account.",
                },
            ),
            (
                "Business hours and service level",
                {
                    "fields": ["sla_policy"],
                    "description": "Business hours, their time zone and the away message are among the channel "
                    "settings above; the SLA policy's targets count only those hours when it says so.",
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
