"""Webhook rate limits: fixed one-minute windows counted in Redis, shared by every web process.

- Per inbox, authenticated requests only: over the limit a webhook is answered 429 with Retry-After and nothing
  is stored; the providers retry later (Meta for days, Telegram "a reasonable amount", Slack three times), so a
  burst is delayed rather than lost. Unsigned requests never count here, or anyone who knows a webhook URL could
  use up the tenant's limit.
- Per client address, failed authentication only: past the limit, the client's further failures are answered
  429 instead of 401. A correctly signed request is never refused by it (providers and proxies share addresses).

- Per contact, AI replies (`ai_reply_limit_check`): a customer message is handed to the AI at most `limit` times
  an hour per contact and inbox (the inbox's `ai_replies_per_hour` setting, else its channel's default: e-mail
  has one, chat channels none). Past it the message is stored and left for people: an auto-responder that does
  not say it is one, or a mail loop, cannot make the AI answer without end.
- Per client address, password-reset requests (`password_reset_check`, an hour's window): past the limit the
  form answers 429 and mails nothing.

When Redis cannot be reached the limiter FAILS OPEN: the message is stored as if there were no limit. Losing a
customer's message is worse than letting a flood through for the length of a Redis outage, and the webhook must
stay fast, so the client has short timeouts and, after a failure, Redis is not asked again for a few seconds.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import redis
from django.conf import settings

from helpdesk.channels.registry import UnknownChannel, channel_for
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Inbox

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60
AI_REPLY_WINDOW_SECONDS = 3600
PASSWORD_RESET_WINDOW_SECONDS = 3600
# Short enough that a Redis outage adds little to a webhook's latency (the goal is p95 < 250 ms).
SOCKET_TIMEOUT_SECONDS = 0.25
# After a Redis error, skip the limiter for this long instead of paying the timeout on every request.
FAIL_OPEN_PAUSE_SECONDS = 5.0

_paused_until: dict[str, float] = {}


@dataclass(frozen=True)
class RateLimitDecision:
    allowed: bool
    limit: int
    """Requests per minute for this inbox; 0 means no limit."""
    retry_after: int = 0
    """Whole seconds until the current window ends (when refused)."""
    counted: bool = True
    """False when Redis could not be asked and the request was let through (fail open)."""


def _now() -> float:
    """Wall-clock seconds; a function of its own so tests can pin the window without touching `time`."""
    return time.time()


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        url, socket_connect_timeout=SOCKET_TIMEOUT_SECONDS, socket_timeout=SOCKET_TIMEOUT_SECONDS
    )


def webhook_rate_limit_for(inbox: Inbox) -> int:
    """The inbox's own limit, else the server default; 0 disables the limit."""
    if inbox.webhook_rate_limit_per_minute is not None:
        return inbox.webhook_rate_limit_per_minute
    return int(helpdesk_setting("WEBHOOK_RATE_LIMIT_PER_MINUTE") or 0)


def _key(inbox: Inbox, window: int) -> str:
    # The token hash makes the key unique to this inbox row even if a deleted inbox's id is reused.
    token = hashlib.sha256(inbox.webhook_token.encode()).hexdigest()[:12]
    return f"helpdesk:webhook-rate:{inbox.pk}:{token}:{window}"


def webhook_rate_limit_check(*, inbox: Inbox, now: float | None = None) -> RateLimitDecision:
    """Count one authenticated webhook request for `inbox` and say whether it may proceed."""
    limit = webhook_rate_limit_for(inbox)
    return _count(lambda window: _key(inbox, window), limit, f"inbox {inbox.pk}", now)


def webhook_auth_failure_check(*, client: str, now: float | None = None) -> RateLimitDecision:
    """Count one failed webhook authentication from `client` (its address); refused past the per-client limit."""
    limit = int(helpdesk_setting("WEBHOOK_AUTH_FAILURES_PER_MINUTE") or 0)
    digest = hashlib.sha256(client.encode()).hexdigest()[:16]
    return _count(lambda window: f"helpdesk:webhook-auth-failures:{digest}:{window}", limit, "a client", now)


def password_reset_check(*, client: str, now: float | None = None) -> RateLimitDecision:
    """Count one password-reset request from `client` (its address); refused past the hourly limit, so the form
    cannot be used to flood someone's mailbox."""
    limit = int(helpdesk_setting("PASSWORD_RESETS_PER_HOUR") or 0)
    digest = hashlib.sha256(client.encode()).hexdigest()[:16]
    return _count(
        lambda window: f"helpdesk:password-resets:{digest}:{window}",
        limit,
        "a client",
        now,
        window_seconds=PASSWORD_RESET_WINDOW_SECONDS,
    )


def ai_reply_limit_for(inbox: Inbox) -> int:
    """AI replies per contact and hour on `inbox`: its `ai_replies_per_hour` setting (digits; "0": no limit),
    else its channel's default (`ai_replies_per_contact_per_hour`, an optional attribute of a channel)."""
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    configured = str(config.get("ai_replies_per_hour") or "")
    if configured.isdigit():
        return int(configured)
    try:
        channel = channel_for(inbox)
    except UnknownChannel:
        return 0
    return int(getattr(channel, "ai_replies_per_contact_per_hour", 0) or 0)


def ai_reply_limit_check(*, inbox: Inbox, contact_id: int, now: float | None = None) -> RateLimitDecision:
    """Count one message of `contact_id` handed to the AI on `inbox` and say whether it may be (this hour)."""
    token = hashlib.sha256(inbox.webhook_token.encode()).hexdigest()[:12]
    return _count(
        lambda window: f"helpdesk:ai-replies:{inbox.pk}:{token}:{contact_id}:{window}",
        ai_reply_limit_for(inbox),
        f"contact {contact_id} of inbox {inbox.pk}",
        now,
        window_seconds=AI_REPLY_WINDOW_SECONDS,
    )


def _count(
    key_for: Callable[[int], str],
    limit: int,
    what: str,
    now: float | None,
    *,
    window_seconds: int = WINDOW_SECONDS,
) -> RateLimitDecision:
    if limit <= 0:
        return RateLimitDecision(allowed=True, limit=0, counted=False)
    url = settings.REDIS_URL
    if _paused_until.get(url, 0.0) > time.monotonic():
        return RateLimitDecision(allowed=True, limit=limit, counted=False)
    current = _now() if now is None else now
    window = int(current // window_seconds)
    key = key_for(window)
    try:
        pipe = _client(url).pipeline(transaction=True)
        pipe.incr(key)
        # A little longer than the window so a slow clock between web processes cannot reset it early.
        pipe.expire(key, window_seconds + 5)
        count, _ = pipe.execute()
    except Exception as exc:
        # Any failure of the client, not only RedisError: under concurrent webhooks on PostgreSQL, redis-py
        # once surfaced a socket closed under a reading thread as `ValueError: I/O operation on closed file`,
        # and the webhook answered 500. A limiter that cannot count must let the message in.
        _paused_until[url] = time.monotonic() + FAIL_OPEN_PAUSE_SECONDS
        logger.warning(
            "webhook rate limit skipped for %s (Redis unavailable: %s: %s)",
            what,
            type(exc).__name__,
            exc,
        )
        return RateLimitDecision(allowed=True, limit=limit, counted=False)
    _paused_until.pop(url, None)
    if int(count) > limit:
        retry_after = max(1, math.ceil((window + 1) * window_seconds - current))
        return RateLimitDecision(allowed=False, limit=limit, retry_after=retry_after)
    return RateLimitDecision(allowed=True, limit=limit)
