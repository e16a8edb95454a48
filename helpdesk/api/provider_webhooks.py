"""Webhooks of the provider channels: Telegram, WhatsApp Cloud and Slack.

Same contract as the API channel's view (helpdesk.api.webhooks): the inbox is found by the URL's token and the
channel type; a request refused before it is authenticated (unknown token, bad signature, rate limited) is only
counted: it stores nothing, not even a span; the per-inbox rate limit answers 429; the raw body is size-checked
before parsing (400), the provider's signature is checked over the raw bytes (401, nothing stored), a malformed
body is a 400 and never a 500, a re-delivered message is a 200 no-op, and an event that is not a customer message
(statuses, edits, bots, joins) is a 200 `{"status": "ignored"}` that stores nothing and starts no AI run.
Each channel module documents what it parses and ignores; the inbox's channel (`channel_for(inbox)`) verifies
and parses, these views store the messages it found (and report the deliveries it says failed).
"""

from __future__ import annotations

import logging
import time

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST
from opentelemetry.trace import Span

from helpdesk import tracing
from helpdesk.api.webhooks import admit, unknown_inbox, webhook_request
from helpdesk.channels.base import InboundMessage, WebhookRejected, fit_for_storage
from helpdesk.channels.protocol import WebhookAnswer
from helpdesk.channels.registry import channel_for
from helpdesk.delivery.outcomes import delivery_report_failure
from helpdesk.models import Inbox
from helpdesk.selectors import inbox_for_webhook
from helpdesk.services.messages import message_ingest

logger = logging.getLogger(__name__)

# Set on the webhook span when a verified request carried no customer message.
ATTR_IGNORED = "helpdesk.webhook.ignored"


def _rejected(exc: WebhookRejected) -> JsonResponse:
    return JsonResponse({"error": exc.code, "detail": exc.message}, status=exc.status)


def _answered(answer: WebhookAnswer) -> HttpResponse:
    if isinstance(answer.body, dict):
        return JsonResponse(answer.body)
    return HttpResponse(answer.body, content_type="text/plain")


def _store(span: Span, inbox: Inbox, inbound_messages: list[InboundMessage]) -> JsonResponse:
    if not inbound_messages:
        span.set_attribute(ATTR_IGNORED, True)
        return JsonResponse({"status": "ignored", "message_ids": []})
    results = [message_ingest(inbox=inbox, inbound=inbound) for inbound in inbound_messages]
    duplicate = all(not r.created for r in results)
    span.set_attribute(tracing.ATTR_DUPLICATE, duplicate)
    span.set_attribute(tracing.ATTR_MESSAGE_ID, results[0].message.id)
    span.set_attribute(tracing.ATTR_CONVERSATION_ID, results[0].message.conversation_id)
    return JsonResponse(
        {
            "status": "duplicate" if duplicate else "accepted",
            "message_ids": [r.message.id for r in results],
            "conversation_id": results[0].message.conversation_id,
        }
    )


def _handle(request: HttpRequest, *, webhook_token: str, channel_type: str) -> HttpResponse:
    arrived = time.time_ns()
    inbox = inbox_for_webhook(webhook_token=webhook_token, channel_type=channel_type)
    if inbox is None:
        return unknown_inbox(channel_type)
    channel = channel_for(inbox)
    admitted = admit(
        request,
        inbox,
        lambda body: channel.verify(inbox, webhook_request(request, body)),
        limit=channel.request_limit,
    )
    if isinstance(admitted, HttpResponse):
        return admitted
    with tracing.webhook_span(
        channel=channel_type, inbox_id=inbox.id, account_id=inbox.account_id, start_time=arrived
    ) as span:
        try:
            received = channel.parse(inbox, webhook_request(request, admitted))
            if received.answer is not None:
                return _answered(received.answer)
            # Every message is checked against the columns before any failure report acts: a notification
            # refused with 400 (a contact id too long, say) must change nothing, not mark our reply failed first.
            inbound_messages = [fit_for_storage(m) for m in received.messages]
            for failed in received.failures:
                delivery_report_failure(
                    inbox=inbox, provider_message_id=failed.provider_message_id, error=failed.error
                )
        except WebhookRejected as exc:
            span.set_attribute(tracing.ATTR_REJECTED, exc.code)
            logger.info("%s webhook for inbox %s rejected: %s", channel_type, inbox.id, exc.code)
            return _rejected(exc)
        return _store(span, inbox, inbound_messages)


# One entry point per provider: its URL, its HTTP methods and what stands in for a session. What the request
# means is the inbox's channel's business (helpdesk.channels, `verify` and `parse`).


@csrf_exempt  # authenticated by the secret token header instead of a session
@require_POST
def telegram_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/telegram/<token>/`: one Telegram Update."""
    return _handle(request, webhook_token=webhook_token, channel_type=Inbox.ChannelType.TELEGRAM)


@csrf_exempt  # authenticated by X-Hub-Signature-256 (POST) or the verify token (GET) instead of a session
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`GET /webhooks/whatsapp/<token>/`: Meta's verification handshake; `POST`: a signed notification."""
    return _handle(request, webhook_token=webhook_token, channel_type=Inbox.ChannelType.WHATSAPP)


@csrf_exempt  # authenticated by X-Slack-Signature instead of a session
@require_POST
def slack_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/slack/<token>/`: an Events API request (url_verification or event_callback), or an
    interactivity request (a tap on a quick-reply button)."""
    return _handle(request, webhook_token=webhook_token, channel_type=Inbox.ChannelType.SLACK)


@csrf_exempt  # authenticated by Mailgun's signature fields instead of a session
@require_POST
def email_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/email/<token>/`: one mail from a Mailgun inbound route (the raw MIME in `body-mime`)."""
    return _handle(request, webhook_token=webhook_token, channel_type=Inbox.ChannelType.EMAIL)
