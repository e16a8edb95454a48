"""The `HELPDESK = {...}` settings namespace, read lazily with defaults (DRF's `api_settings` shape).

This module is the one home of every default: a project's settings pass only what its deployment changes
(config/settings.py: the environment variables it documents; tests/test_settings.py holds it to that).
"""

from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

DEFAULTS: dict[str, Any] = {
    "AI_RESPONDER": "",
    "WEBHOOK_REPLAY_WINDOW_SECONDS": 300,
    "WEBHOOK_MAX_JSON_DEPTH": 20,
    # Webhook requests accepted per inbox per minute unless the inbox sets its own; 0 disables the limit.
    # High enough for a provider's legitimate burst (Meta batches, Telegram's 40 parallel connections).
    "WEBHOOK_RATE_LIMIT_PER_MINUTE": 6000,
    # Failed webhook authentications per client address and minute before further failures answer 429.
    "WEBHOOK_AUTH_FAILURES_PER_MINUTE": 60,
    # Password-reset requests per client address and hour (shared by every web process); 0 disables the limit.
    "PASSWORD_RESETS_PER_HOUR": 5,
    # An invitation's link works this many days (helpdesk.services.invitations): a week covers a holiday,
    # and a link forwarded or left in a mailbox does not open the account for ever.
    "INVITATION_DAYS": 7,
    "DELIVERY_MAX_RETRIES": 5,
    "OUTBOX_UNPUBLISHED_AFTER_SECONDS": 10,
    "DELIVERY_TIMEOUT_SECONDS": 10.0,
    "DELIVERY_BACKOFF_SECONDS": 2.0,
    "DELIVERY_BACKOFF_MAX_SECONDS": 300.0,
    # The outbound policy (helpdesk.outbound) for every URL a tenant configures: host names, addresses or
    # networks exempt from the "globally routable addresses only" rule, and that may use plain http; each with
    # `:port` (`[IPv6]:port`) for that port only, preferred: a bare entry admits every port of it.
    "OUTBOUND_ALLOWED_HOSTS": [],
    # Plain http for every host (not only allowlisted ones); https stays the default for a reason.
    "OUTBOUND_ALLOW_HTTP": False,
    # Largest answer read from a tenant's URL; a provider's JSON answer is a few hundred bytes.
    "OUTBOUND_MAX_RESPONSE_BYTES": 1_048_576,
    # Files customers send (helpdesk.services.attachments): the largest one fetched and stored, the time one
    # request to the provider may take, and how often a failed fetch is retried (with the delivery backoff).
    "ATTACHMENT_MAX_BYTES": 10 * 1024 * 1024,
    "ATTACHMENT_FETCH_TIMEOUT_SECONDS": 30.0,
    "ATTACHMENT_FETCH_MAX_RETRIES": 5,
    # Fernet keys for inbox secrets at rest (helpdesk.crypto): the first encrypts, all decrypt; empty derives
    # one from SECRET_KEY.
    "SECRETS_KEYS": [],
    # Audit log entries (helpdesk.models.AuditEntry) are kept this many days; 0 keeps them for ever. A year
    # covers the usual "who changed this last quarter" question and a yearly review.
    "AUDIT_RETENTION_DAYS": 365,
    # Finished event webhook deliveries (the delivery log) are kept this many days; 0 keeps them. A month is
    # enough to see why an integration missed something and to replay it.
    "WEBHOOK_DELIVERY_RETENTION_DAYS": 30,
    # Sign-in history (helpdesk.models.SignInEvent) is kept this many days; 0 keeps it. Three months answer "was
    # that me?" for a person and "who tried this account?" for an administrator.
    "SIGN_IN_RETENTION_DAYS": 90,
}


def helpdesk_setting(name: str) -> Any:
    if name not in DEFAULTS:
        raise KeyError(f"Unknown HELPDESK setting {name!r}")
    return getattr(settings, "HELPDESK", {}).get(name, DEFAULTS[name])


@cache
def _load_responder(path: str) -> Any:
    return import_string(path) if path else None


def ai_responder() -> Any:
    """The object that answers customers automatically (captain's, unless configured otherwise), or None.

    It offers `handles_inbox(inbox) -> bool`, `message_stored(message) -> None` (called inside the ingest
    transaction for a message it will answer, to record its job) and `message_received(message_id) -> None`
    (called after commit). Optional, looked up by name: `reply_sources`, `reroute_form(conversation=)` (the
    conversation page's "should have gone to" form, or None), `memory_panel(conversation=)` (the conversation
    page's AI memory panel, or None), `conversation_taken_over(conversation_id=)` (a person took the
    conversation over from the AI; called inside their transaction), `copilot_panel(conversation=, membership=)`
    (the composer's copilot: its template and URLs, or None) and `judge_quiet_conversation(conversation_id=,
    quiet_since=) -> bool` (the auto-resolve sweep asks the AI to judge a quiet conversation it handles; False
    when it could not be asked, so the sweep tries again later).
    """
    return _load_responder(helpdesk_setting("AI_RESPONDER"))
