"""Channel webhooks: verify over the raw body, parse, store, answer fast. The AI runs later, in a worker."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from helpdesk import tracing
from helpdesk.channels.base import WebhookRejected, fit_for_storage
from helpdesk.channels.protocol import WebhookRequest
from helpdesk.channels.registry import channel_for
from helpdesk.client_address import client_ip
from helpdesk.models import Inbox
from helpdesk.selectors import inbox_for_webhook
from helpdesk.services.messages import message_ingest
from helpdesk.services.rate_limits import (
    RateLimitDecision,
    webhook_auth_failure_check,
    webhook_rate_limit_check,
)

logger = logging.getLogger(__name__)


def read_body(request: HttpRequest, limit: int) -> bytes:
    """The raw body, refused before parsing when larger than `limit` (declared or actual size)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError as exc:
        raise WebhookRejected(400, "invalid_length", "Content-Length is not a number.") from exc
    if declared > limit:
        raise WebhookRejected(400, "too_large", f"Body is larger than {limit} bytes.")
    body = request.read(limit + 1)
    if len(body) > limit:
        raise WebhookRejected(400, "too_large", f"Body is larger than {limit} bytes.")
    return body


def webhook_request(request: HttpRequest, body: bytes) -> WebhookRequest:
    """The request as the inbox's channel verifies and parses it: `body` is the raw body `read_body` read."""
    return WebhookRequest(
        method=request.method or "",
        headers=request.headers,
        body=body,
        query=request.GET,
        content_type=request.content_type or "",
    )


def _rejected(exc: WebhookRejected) -> JsonResponse:
    return JsonResponse({"error": exc.code, "detail": exc.message}, status=exc.status)


def _too_many(decision: RateLimitDecision, detail: str) -> JsonResponse:
    response = JsonResponse({"error": "rate_limited", "detail": detail}, status=429)
    response["Retry-After"] = str(decision.retry_after)
    return response


def unknown_inbox(channel: str) -> JsonResponse:
    """The answer to a webhook URL whose token names no inbox of this channel (counted, nothing stored)."""
    tracing.webhook_rejected(channel=channel, reason="unknown_inbox")
    return JsonResponse({"error": "not_found", "detail": "Unknown inbox."}, status=404)


def admit(
    request: HttpRequest, inbox: Inbox, verify: Callable[[bytes], None], *, limit: int | None = None
) -> bytes | HttpResponse:
    """Read and authenticate the body, then count it against the inbox's rate limit: the body, or the answer.
    The body may be as large as HELPDESK_MAX_BODY_BYTES, or the channel's own `limit` when that is larger.

    Authentication comes first (an HMAC is cheap): unsigned requests to a known webhook URL must not use up the
    tenant's limit. A failed authentication counts against its client address instead, and past that limit is
    answered 429 rather than 401; a correctly signed request is never refused by that count.
    Nothing refused here is stored, not even a span (the caller opens it after this): it is only counted.
    """
    channel = inbox.channel_type
    try:
        body = read_body(request, max(limit or 0, settings.DATA_UPLOAD_MAX_MEMORY_SIZE))
        verify(body)
    except WebhookRejected as exc:
        if exc.status in (401, 403):
            failures = webhook_auth_failure_check(client=client_ip(request) or "unknown")
            if not failures.allowed:
                tracing.webhook_rejected(channel=channel, reason="auth_failures_limited", inbox_id=inbox.id)
                return _too_many(failures, "Too many failed authentications from this address.")
        tracing.webhook_rejected(channel=channel, reason=exc.code, inbox_id=inbox.id)
        return _rejected(exc)
    decision = webhook_rate_limit_check(inbox=inbox)
    if not decision.allowed:
        tracing.webhook_rejected(channel=channel, reason="rate_limited", inbox_id=inbox.id)
        return _too_many(decision, f"More than {decision.limit} webhook requests per minute.")
    return body


@csrf_exempt  # authenticated by the HMAC signature instead of a session
@require_POST
def api_channel_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/api/<token>/`: the generic signed API channel."""
    arrived = time.time_ns()
    inbox = inbox_for_webhook(webhook_token=webhook_token, channel_type=Inbox.ChannelType.API)
    if inbox is None:
        return unknown_inbox(Inbox.ChannelType.API)
    channel = channel_for(inbox)
    admitted = admit(request, inbox, lambda body: channel.verify(inbox, webhook_request(request, body)))
    if isinstance(admitted, HttpResponse):
        return admitted
    with tracing.webhook_span(
        channel=inbox.channel_type, inbox_id=inbox.id, account_id=inbox.account_id, start_time=arrived
    ) as span:
        try:
            received = channel.parse(inbox, webhook_request(request, admitted))
            inbound_messages = [fit_for_storage(m) for m in received.messages]
        except WebhookRejected as exc:
            # Authenticated, so kept: the sender's own integration is broken and the debug log shows it.
            span.set_attribute(tracing.ATTR_REJECTED, exc.code)
            logger.info("webhook for inbox %s rejected: %s", inbox.id, exc.code)
            return _rejected(exc)
        results = [message_ingest(inbox=inbox, inbound=inbound) for inbound in inbound_messages]
        duplicate = all(not r.created for r in results)
        span.set_attribute(tracing.ATTR_DUPLICATE, duplicate)
        if results:
            span.set_attribute(tracing.ATTR_MESSAGE_ID, results[0].message.id)
            span.set_attribute(tracing.ATTR_CONVERSATION_ID, results[0].message.conversation_id)
        return JsonResponse(
            {
                "status": "duplicate" if duplicate else "accepted",
                "message_ids": [r.message.id for r in results],
                "conversation_id": results[0].message.conversation_id if results else None,
            }
        )
