"""Webhooks of the provider channels: Telegram, WhatsApp Cloud and Slack.

Same contract as the API channel's view (helpdesk.api.webhooks): the inbox is found by the URL's token and the
channel type; a request refused before it is authenticated (unknown token, bad signature, rate limited) is only
counted: it stores nothing, not even a span; the per-inbox rate limit answers 429; the raw body is size-checked
before parsing (400), the provider's signature is checked over the raw bytes (401, nothing stored), a malformed
body is a 400 and never a 500, a re-delivered message is a 200 no-op, and an event that is not a customer message
(statuses, edits, bots, joins) is a 200 `{"status": "ignored"}` that stores nothing and starts no AI run.
Each channel module documents what it parses and ignores.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST
from opentelemetry.trace import Span

from helpdesk import tracing
from helpdesk.api.webhooks import admit, unknown_inbox
from helpdesk.channels import slack, telegram, whatsapp
from helpdesk.channels.base import InboundMessage, WebhookRejected, fit_for_storage, parse_json_body
from helpdesk.conf import helpdesk_setting
from helpdesk.delivery.outcomes import delivery_report_failure
from helpdesk.models import Inbox
from helpdesk.selectors import inbox_for_webhook
from helpdesk.services.messages import message_ingest

logger = logging.getLogger(__name__)

# Set on the webhook span when a verified request carried no customer message.
ATTR_IGNORED = "helpdesk.webhook.ignored"

# How a channel authenticates a request: raise WebhookRejected(401/403) unless the raw body and headers prove it
# comes from the provider.
Verifier = Callable[[HttpRequest, Inbox, bytes], None]
# What a channel does with an authenticated raw body: answer directly (a handshake) or return the customer
# messages it carried (possibly none).
Receiver = Callable[[HttpRequest, Inbox, bytes], HttpResponse | list[InboundMessage]]


def _rejected(exc: WebhookRejected) -> JsonResponse:
    return JsonResponse({"error": exc.code, "detail": exc.message}, status=exc.status)


def _json(body: bytes) -> object:
    return parse_json_body(body, max_depth=helpdesk_setting("WEBHOOK_MAX_JSON_DEPTH"))


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


def _handle(
    request: HttpRequest, *, webhook_token: str, channel_type: str, verify: Verifier, receive: Receiver
) -> HttpResponse:
    arrived = time.time_ns()
    inbox = inbox_for_webhook(webhook_token=webhook_token, channel_type=channel_type)
    if inbox is None:
        return unknown_inbox(channel_type)
    admitted = admit(request, inbox, lambda body: verify(request, inbox, body))
    if isinstance(admitted, HttpResponse):
        return admitted
    with tracing.webhook_span(
        channel=channel_type, inbox_id=inbox.id, account_id=inbox.account_id, start_time=arrived
    ) as span:
        try:
            received = receive(request, inbox, admitted)
            if not isinstance(received, HttpResponse):
                received = [fit_for_storage(m) for m in received]
        except WebhookRejected as exc:
            span.set_attribute(tracing.ATTR_REJECTED, exc.code)
            logger.info("%s webhook for inbox %s rejected: %s", channel_type, inbox.id, exc.code)
            return _rejected(exc)
        if isinstance(received, HttpResponse):
            return received
        return _store(span, inbox, received)


# ---- Telegram ----------------------------------------------------------------------------------------------


def _telegram_verify(request: HttpRequest, inbox: Inbox, body: bytes) -> None:
    telegram.verify(secret=inbox.secret, headers=request.headers)


def _telegram_receive(request: HttpRequest, inbox: Inbox, body: bytes) -> list[InboundMessage]:
    return telegram.parse(_json(body))


@csrf_exempt  # authenticated by the secret token header instead of a session
@require_POST
def telegram_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/telegram/<token>/`: one Telegram Update."""
    return _handle(
        request,
        webhook_token=webhook_token,
        channel_type=Inbox.ChannelType.TELEGRAM,
        verify=_telegram_verify,
        receive=_telegram_receive,
    )


# ---- WhatsApp Cloud ----------------------------------------------------------------------------------------


def _whatsapp_handshake_verify(request: HttpRequest, inbox: Inbox, body: bytes) -> None:
    # The verify token is the handshake's only credential: a wrong one is a failed authentication.
    whatsapp.handshake(params=request.GET, verify_token=str(inbox.provider_config.get("verify_token") or ""))


def _whatsapp_handshake(request: HttpRequest, inbox: Inbox, body: bytes) -> HttpResponse:
    # `_whatsapp_handshake_verify` has checked the token and that a challenge is present. Meta expects the bare
    # challenge, not JSON.
    return HttpResponse(request.GET["hub.challenge"], content_type="text/plain")


def _whatsapp_verify(request: HttpRequest, inbox: Inbox, body: bytes) -> None:
    whatsapp.verify(secret=inbox.secret, headers=request.headers, body=body)


def _whatsapp_receive(request: HttpRequest, inbox: Inbox, body: bytes) -> list[InboundMessage]:
    payload = _json(body)
    phone_number_id = str(inbox.provider_config.get("phone_number_id") or "")
    # Every message is checked against the columns before any status acts: a notification refused with 400
    # (a contact id too long, say) must change nothing, not mark our reply failed first.
    inbound_messages = [fit_for_storage(m) for m in whatsapp.parse(payload, phone_number_id=phone_number_id)]
    for failed in whatsapp.failed_statuses(payload, phone_number_id=phone_number_id):
        # Not a customer message, but the only way Meta tells us a reply never arrived (e.g. 131047).
        delivery_report_failure(
            inbox=inbox, provider_message_id=failed.provider_message_id, error=failed.error
        )
    return inbound_messages


@csrf_exempt  # authenticated by X-Hub-Signature-256 (POST) or the verify token (GET) instead of a session
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`GET /webhooks/whatsapp/<token>/`: Meta's verification handshake; `POST`: a signed notification."""
    verify: Verifier
    receive: Receiver
    if request.method == "GET":
        verify, receive = _whatsapp_handshake_verify, _whatsapp_handshake
    else:
        verify, receive = _whatsapp_verify, _whatsapp_receive
    return _handle(
        request,
        webhook_token=webhook_token,
        channel_type=Inbox.ChannelType.WHATSAPP,
        verify=verify,
        receive=receive,
    )


# ---- Slack -------------------------------------------------------------------------------------------------


def _slack_verify(request: HttpRequest, inbox: Inbox, body: bytes) -> None:
    slack.verify(secret=inbox.secret, headers=request.headers, body=body)


def _slack_receive(request: HttpRequest, inbox: Inbox, body: bytes) -> HttpResponse | list[InboundMessage]:
    interaction = slack.interaction_body(body, content_type=request.content_type or "")
    if interaction is not None:
        # A tap on a quick-reply button (the Interactivity Request URL is this one), verified like an event.
        return slack.parse_interaction(_json(interaction))
    payload = _json(body)
    challenge = slack.url_verification_challenge(payload)
    if challenge is not None:
        # Only reached with a valid signature: the challenge proves to Slack that this URL is ours.
        return JsonResponse({"challenge": challenge})
    return slack.parse(payload, bot_user_id=str(inbox.provider_config.get("bot_user_id") or ""))


@csrf_exempt  # authenticated by X-Slack-Signature instead of a session
@require_POST
def slack_webhook(request: HttpRequest, webhook_token: str) -> HttpResponse:
    """`POST /webhooks/slack/<token>/`: an Events API request (url_verification or event_callback), or an
    interactivity request (a tap on a quick-reply button)."""
    return _handle(
        request,
        webhook_token=webhook_token,
        channel_type=Inbox.ChannelType.SLACK,
        verify=_slack_verify,
        receive=_slack_receive,
    )
