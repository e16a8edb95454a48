"""The website widget's public visitor API, mounted at `/widget/<website_token>/`.

Called by the widget script (helpdesk/static/helpdesk/widget/widget.js) from the customer's own pages, so:
- CORS is limited to the inbox's allowed origins: a request from any other page (or naming none) is refused with
  403 before anything else, and only an allowed origin gets `Access-Control-Allow-Origin` back;
- no cookies: the visitor is named by the opaque visitor token (header `X-Visitor-Token`, or the query string of
  the event stream, which EventSource cannot give headers), never by a session; no CSRF token is needed for the
  same reason;
- every write counts against the inbox's rate limit (helpdesk.services.rate_limits, 429 with Retry-After).
Every refusal is a JSON `{"error": code, "detail": text}` with a 4xx status.

    POST session/      -> {"visitor_token", "name", "prechat", "away", "away_message", "ask_email"}   a new visitor, or the
                       same one when a valid token is sent; "away" outside the inbox's business hours
    GET  messages/     -> {"messages": [...]}   the visitor's thread, `?after=<id>` for what is new
    POST messages/     {"id", "text"} -> 201    the visitor writes (the AI answers through the normal pipeline;
                       "ai_answering": true when it took the message)
    POST files/        multipart {"id", "text", "file"} -> 201   the visitor sends a file (widget_files: checked
                       first, `400 file_refused` with the reason for a type or size we do not keep)
    POST identify/     {"identifier", "identifier_hash", "name", "email"} -> {"visitor_token"}  setUser
    POST attributes/   {"attributes": {key: value}} -> {"custom_attributes"}          setCustomAttributes
    POST labels/       {"label": "vip"} -> {"added": true|false}                      setLabel
    POST contact/      {"name", "email"} -> {"status": "saved"}                         the pre-chat form
    GET  events/       server-sent events: {"type": "message", "message_id"} when a reply is stored,
                       {"type": "typing"} while the AI or a person composes one (a person: the
                       `agent_typing` event of the conversation on the account's channel), {"type":
                       "typing_end"} when the AI is done
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from helpdesk.channels import widget
from helpdesk.channels.base import WebhookRejected, fit_for_storage
from helpdesk.channels.protocol import webhook_json
from helpdesk.channels.registry import channel_for
from helpdesk.models import Conversation, Inbox
from helpdesk.realtime.hub import Listener, get_hub
from helpdesk.realtime.publish import account_channel
from helpdesk.realtime.stream import can_stream, no_stream, sse_response, sse_stream, unavailable
from helpdesk.selectors import inbox_for_webhook
from helpdesk.selectors.visitors import customer_conversation_ids, customer_messages
from helpdesk.services.messages import IngestResult, message_ingest
from helpdesk.services.rate_limits import webhook_rate_limit_check
from helpdesk.services.visitors import (
    visitor_add_label,
    visitor_identify,
    visitor_set_attributes,
    visitor_set_contact,
)

from . import widget_files
from .webhooks import read_body, webhook_request

CHANNEL = Inbox.ChannelType.WIDGET
ALLOWED_HEADERS = f"Content-Type, {widget.VISITOR_HEADER}"
READY_SECONDS = 2.0
AI_LIVE_PREFIX = "captain:live:conversation:"
TYPING_EVERY_SECONDS = 2.0
# Someone composes a reply in a conversation: the AI (its run's live events, _typing_pump) or a person
# (`{"type": "agent_typing", "conversation_id"}` published on the account's channel by whoever tells it).
TYPING_KINDS = ("typing", "typing_end", "agent_typing")


def _error(status: int, code: str, detail: str) -> JsonResponse:
    return JsonResponse({"error": code, "detail": detail}, status=status)


def _with_cors(response: HttpResponse, origin: str) -> HttpResponse:
    response["Access-Control-Allow-Origin"] = origin
    response["Vary"] = "Origin"
    return response


def _inbox(website_token: str) -> Inbox | None:
    return inbox_for_webhook(webhook_token=website_token, channel_type=CHANNEL)


def _visitor_api(handler: Callable[[HttpRequest, Inbox], HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a visitor operation: the inbox, the preflight, the origin check and CORS headers, and every
    WebhookRejected turned into its JSON refusal. The origin is checked before anything is read or counted."""

    @csrf_exempt  # no cookies are read: the visitor token authenticates
    def view(request: HttpRequest, website_token: str) -> HttpResponse:
        inbox = _inbox(website_token)
        if inbox is None:
            return _error(404, "not_found", "Unknown widget.")
        try:
            origin = widget.checked_origin(inbox, request.headers)
        except WebhookRejected as exc:
            return _error(exc.status, exc.code, exc.message)
        if request.method == "OPTIONS":
            response = HttpResponse(status=204)
            response["Access-Control-Allow-Methods"] = "GET, POST"
            response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
            response["Access-Control-Max-Age"] = "600"
            return _with_cors(response, origin)
        try:
            answer = handler(request, inbox)
        except WebhookRejected as exc:
            answer = _error(exc.status, exc.code, exc.message)
        return _with_cors(answer, origin)

    return view


def _method(request: HttpRequest, *allowed: str) -> None:
    if request.method not in allowed:
        raise WebhookRejected(405, "method_not_allowed", f"Use {' or '.join(allowed)}.")


def _count(inbox: Inbox) -> HttpResponse | None:
    decision = webhook_rate_limit_check(inbox=inbox)
    if decision.allowed:
        return None
    response = _error(429, "rate_limited", f"More than {decision.limit} requests per minute.")
    response["Retry-After"] = str(decision.retry_after)
    return response


def _json_object(request: HttpRequest) -> dict[str, Any]:
    body = read_body(request, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    payload = webhook_json(body) if body else {}
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "Body must be a JSON object.")
    return payload


def _source_id(request: HttpRequest, inbox: Inbox) -> str:
    return widget.visitor_source_id(inbox, request.headers.get(widget.VISITOR_HEADER, ""))


def session(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    _method(request, "POST")
    if (limited := _count(inbox)) is not None:
        return limited
    token = request.headers.get(widget.VISITOR_HEADER, "")
    try:
        source_id = widget.visitor_source_id(inbox, token)
    except WebhookRejected:
        source_id = widget.new_anonymous_source_id()  # none yet, or not ours: a new visitor
    return JsonResponse(
        {
            "visitor_token": widget.visitor_token(inbox_id=inbox.pk, source_id=source_id),
            "name": inbox.name,
            "prechat": [] if widget.is_identified(source_id) else widget.prechat_fields(inbox),
            # Outside business hours: the away message, and the e-mail field so the answer can follow by mail.
            "away": (away := widget.is_away(inbox.provider_config, default_zone=inbox.account.time_zone)),
            "away_message": str((inbox.provider_config or {}).get("away_message") or ""),
            "ask_email": away and not widget.is_identified(source_id),  # setUser gives its own e-mail
        }
    )


def messages(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    _method(request, "GET", "POST")
    if request.method == "GET":
        source_id = _source_id(request, inbox)
        try:
            after = max(int(request.GET.get("after", "0")), 0)
        except ValueError:
            raise WebhookRejected(400, "invalid_after", "after must be a message id.") from None
        rows = customer_messages(inbox_id=inbox.pk, source_id=source_id, after_id=after)
        return JsonResponse({"messages": [asdict(row) for row in rows]})
    channel = channel_for(inbox)
    _source_id(request, inbox)  # a stranger's request is refused before its body is even read
    body = read_body(request, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    channel.verify(inbox, webhook_request(request, body))
    if (limited := _count(inbox)) is not None:
        return limited
    received = channel.parse(inbox, webhook_request(request, body))
    (inbound,) = [fit_for_storage(m) for m in received.messages]
    return _stored(message_ingest(inbox=inbox, inbound=inbound))


def files(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    """The visitor sends a file (widget_files: checked before anything is stored), stored like a text."""
    _method(request, "POST")
    source_id = _source_id(request, inbox)  # a stranger's request is refused before its body is even read
    body = read_body(request, widget_files.body_limit())
    if (limited := _count(inbox)) is not None:
        return limited
    fields, received = widget_files.received_file(request, body)
    inbound = widget.parse_file_message(source_id=source_id, fields=fields, file=received)
    return _stored(message_ingest(inbox=inbox, inbound=fit_for_storage(inbound)))


def _stored(result: IngestResult) -> JsonResponse:
    return JsonResponse(
        {
            "status": "accepted" if result.created else "duplicate",
            "message_id": result.message.id,
            "conversation_id": result.message.conversation_id,
            # The AI took it (its job was created with the message): the widget shows it typing until the
            # reply, and the run's live events keep it on (`typing` on the event stream).
            "ai_answering": result.created
            and result.message.conversation.status == Conversation.Status.PENDING,
        },
        status=201 if result.created else 200,
    )


def identify(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    """`setUser`: only a valid identifier hash names the visitor as the customer's user (403 otherwise,
    nothing changed)."""
    _method(request, "POST")
    source_id = _source_id(request, inbox)
    if (limited := _count(inbox)) is not None:
        return limited
    payload = _json_object(request)
    fields = {key: payload.get(key, "") for key in ("identifier", "identifier_hash", "name", "email")}
    if not all(isinstance(value, str) for value in fields.values()):
        raise WebhookRejected(
            400, "invalid_payload", "identifier, identifier_hash, name and email are strings."
        )
    widget.verify_identifier(inbox, fields["identifier"], fields["identifier_hash"])
    identified = visitor_identify(
        inbox=inbox,
        source_id=source_id,
        identified_id=widget.identified_source_id(fields["identifier"]),
        name=fields["name"][:200],
        email=fields["email"] if len(fields["email"]) <= 254 and "@" in fields["email"] else "",
    )
    return JsonResponse({"visitor_token": widget.visitor_token(inbox_id=inbox.pk, source_id=identified)})


def attributes(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    _method(request, "POST")
    source_id = _source_id(request, inbox)
    if (limited := _count(inbox)) is not None:
        return limited
    changes = _json_object(request).get("attributes")
    if not isinstance(changes, dict):
        raise WebhookRejected(400, "invalid_payload", "attributes must be an object.")
    try:
        stored = visitor_set_attributes(inbox=inbox, source_id=source_id, changes=changes)
    except ValidationError as exc:
        return _error(400, "invalid_attributes", json.dumps(exc.message_dict))
    return JsonResponse({"custom_attributes": stored})


def contact(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    """The pre-chat form's name and e-mail. An identified visitor is named by `setUser` only (409)."""
    _method(request, "POST")
    source_id = _source_id(request, inbox)
    if widget.is_identified(source_id):
        raise WebhookRejected(409, "identified", "An identified visitor's contact is set by setUser.")
    if (limited := _count(inbox)) is not None:
        return limited
    payload = _json_object(request)
    name, email = payload.get("name", ""), payload.get("email", "")
    if not isinstance(name, str) or not isinstance(email, str) or len(name) > 200 or len(email) > 254:
        raise WebhookRejected(400, "invalid_payload", "name and email are short strings.")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise WebhookRejected(400, "invalid_email", "email is not an e-mail address.") from None
    visitor_set_contact(inbox=inbox, source_id=source_id, name=name.strip(), email=email.strip())
    return JsonResponse({"status": "saved"})


def labels(request: HttpRequest, inbox: Inbox) -> HttpResponse:
    _method(request, "POST")
    source_id = _source_id(request, inbox)
    if (limited := _count(inbox)) is not None:
        return limited
    name = _json_object(request).get("label")
    if not isinstance(name, str) or not 0 < len(name) <= 100:
        raise WebhookRejected(400, "invalid_payload", "label must be a label's name.")
    return JsonResponse({"added": visitor_add_label(inbox=inbox, source_id=source_id, name=name)})


def _events_access(website_token: str, headers: Any, token: str) -> tuple[Inbox, str, list[int]]:
    inbox = _inbox(website_token)
    if inbox is None:
        raise WebhookRejected(404, "not_found", "Unknown widget.")
    origin = widget.checked_origin(inbox, headers)
    source_id = widget.visitor_source_id(inbox, token)
    return inbox, origin, customer_conversation_ids(inbox_id=inbox.pk, source_id=source_id)


async def events(request: HttpRequest, website_token: str) -> HttpResponse:
    """The visitor's live stream: one frame per message stored in one of their conversations as they were when
    it opened (ids only; the page reads the message through `messages/`)."""
    try:
        inbox, origin, conversation_ids = await sync_to_async(_events_access)(
            website_token, request.headers, request.GET.get("visitor_token", "")
        )
    except WebhookRejected as exc:
        return _error(exc.status, exc.code, exc.message)
    if not can_stream(request):
        return _with_cors(no_stream(), origin)
    followed = set(conversation_ids)
    hub = get_hub()
    listener = hub.listen(account_channel(inbox.account_id))
    if not await hub.wait_ready(READY_SECONDS):
        listener.close()
        return _with_cors(unavailable(), origin)

    def accept(event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "resync":
            return True
        if kind in TYPING_KINDS:
            # The visitor's own conversations only: the account's channel carries every visitor's.
            return event.get("conversation_id") in followed
        return (
            kind == "message"
            and not event.get("private")
            and event.get("inbox_id") == inbox.pk
            and event.get("conversation_id") in followed
        )

    # No re-reading while open: a visitor's new conversation starts with their own message, whose answer names
    # it, and the widget then opens a new stream (as it does after setUser). Streams cost no database reads.
    frames = _visitor_frames(
        sse_stream(listener, accept=accept), listener=listener, conversation_ids=followed
    )
    return _with_cors(sse_response(frames, listener), origin)


async def _visitor_frames(frames: Any, *, listener: Listener, conversation_ids: set[int]) -> Any:
    """The dashboard's frames cut down to what a visitor may see (the type and the message id), with `typing`
    while the AI composes a reply in one of their conversations. Started here, in the stream itself, so nothing
    is subscribed for a visitor who left before the first frame."""
    hub = get_hub()
    # The AI's run publishes its progress on captain's live channel of the conversation (helpdesk.realtime.hub
    # subscribes to it for the dashboard): only the fact that it is working is passed on, never its content.
    sources = [hub.listen(f"{AI_LIVE_PREFIX}{conversation_id}") for conversation_id in conversation_ids]
    pumps = [
        asyncio.create_task(_typing_pump(source, listener, conversation_id=conversation_id))
        for source, conversation_id in zip(sources, conversation_ids, strict=True)
    ]
    try:
        async for frame in frames:
            if frame.startswith(b"data: "):
                event = json.loads(frame[6:])
                # A person composing looks the same to the visitor as the AI doing so.
                kind = event.get("type")
                shown = {"type": "typing" if kind == "agent_typing" else kind}
                if event.get("message_id") is not None:
                    shown["message_id"] = event["message_id"]
                frame = f"data: {json.dumps(shown)}\n\n".encode()
            yield frame
    finally:
        for pump in pumps:
            pump.cancel()
        for source in sources:
            source.close()


async def _typing_pump(source: Listener, into: Listener, *, conversation_id: int) -> None:
    """`typing` (at most every TYPING_EVERY_SECONDS) while a run publishes, `typing_end` when it ends."""
    last = 0.0
    while True:
        message = await source.get(timeout=60.0)
        if message is None:
            continue
        if message.get("type") == "end":
            into.offer({"type": "typing_end", "conversation_id": conversation_id})
            last = 0.0
        elif time.monotonic() - last >= TYPING_EVERY_SECONDS:
            into.offer({"type": "typing", "conversation_id": conversation_id})
            last = time.monotonic()


urlpatterns = [
    path("<str:website_token>/session/", _visitor_api(session), name="widget-session"),
    path("<str:website_token>/messages/", _visitor_api(messages), name="widget-messages"),
    path("<str:website_token>/files/", _visitor_api(files), name="widget-files"),
    path("<str:website_token>/identify/", _visitor_api(identify), name="widget-identify"),
    path("<str:website_token>/attributes/", _visitor_api(attributes), name="widget-attributes"),
    path("<str:website_token>/labels/", _visitor_api(labels), name="widget-labels"),
    path("<str:website_token>/contact/", _visitor_api(contact), name="widget-contact"),
    path("<str:website_token>/events/", events, name="widget-events"),
]
