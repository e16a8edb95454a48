"""WhatsApp message templates on the Cloud API: the list a business account holds (for a sync), and the message
object that sends one (the only kind Meta delivers outside the 24-hour customer-service window)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ObjectDoesNotExist

from helpdesk.outbound import OutboundRefused, outbound_client

from ..base import DeliveryResult
from ..media import Failed, provider_json
from ..protocol import SentParts
from ..provider_http import dict_or_empty, list_or_empty
from .cloud_api import DEFAULT_API_BASE_URL, DEFAULT_API_VERSION, SendResult, number_url, post_message

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message, WhatsAppTemplateSend

LIST_FIELDS = "name,language,status,category,components"
# A page holds up to 100 templates; an account rarely has more than a few hundred, and a server that keeps
# answering "next" must not keep the sync running for ever.
PAGE_LIMIT = 100
MAX_PAGES = 20


@dataclass(frozen=True)
class RemoteTemplate:
    name: str
    language: str
    status: str
    category: str
    header_text: str
    body: str


def template_message(*, name: str, language: str, values: Sequence[str]) -> dict[str, Any]:
    """The `/messages` object for a template: its body variables as text parameters, in order."""
    template: dict[str, Any] = {"name": name, "language": {"code": language}}
    if values:
        template["components"] = [
            {"type": "body", "parameters": [{"type": "text", "text": value} for value in values]}
        ]
    return {"type": "template", "template": template}


def sent_template(message: Message) -> WhatsAppTemplateSend | None:
    """The template `message` goes out as (helpdesk.services.whatsapp_templates), or None for a plain reply."""
    try:
        return message.whatsapp_template_send
    except ObjectDoesNotExist:
        return None


def send_template(
    message: Message, template: WhatsAppTemplateSend, *, timeout: float, parts: SentParts
) -> DeliveryResult:
    """Send the message as one template message. Once Meta accepted it (`parts` recorded its wamid) a retry of
    the delivery sends nothing more: the customer has it."""
    if parts.count:
        return DeliveryResult(ok=True, status_code=200)
    number = number_url(message.inbox)
    if isinstance(number, SendResult):
        return number.result
    values = [str(value) for value in template.values]
    outcome = post_message(
        message.inbox,
        number,
        message.conversation.contact_inbox.source_id,
        template_message(name=template.name, language=template.language, values=values),
        timeout,
    )
    if outcome.result.ok:
        parts.record(outcome.provider_message_id)
    return outcome.result


def _parse(item: Any) -> RemoteTemplate | None:
    data = dict_or_empty(item)
    header = body = ""
    for component in list_or_empty(data.get("components")):
        part = dict_or_empty(component)
        kind = str(part.get("type") or "").upper()
        text = part.get("text")
        if kind == "BODY" and isinstance(text, str):
            body = text
        elif kind == "HEADER" and str(part.get("format") or "").upper() == "TEXT" and isinstance(text, str):
            header = text
    name, language = data.get("name"), data.get("language")
    if not isinstance(name, str) or not name or not isinstance(language, str) or not language or not body:
        return None
    return RemoteTemplate(
        name=name,
        language=language,
        status=str(data.get("status") or "").lower(),
        category=str(data.get("category") or ""),
        header_text=header,
        body=body,
    )


def list_templates(inbox: Inbox, *, timeout: float = 15.0) -> list[RemoteTemplate]:
    """GET /{waba-id}/message_templates, following Meta's paging. Raises Failed (for people) when the inbox lacks
    the account id or token, the outbound policy refuses the URL, or Meta answers an error."""
    config = inbox.provider_config
    waba_id = str(config.get("waba_id") or "")
    if not inbox.access_token or not waba_id:
        raise Failed(
            "The inbox needs a WhatsApp access token and waba_id to sync templates.", transient=False
        )
    base = str(config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    version = str(config.get("api_version") or DEFAULT_API_VERSION)
    url: str | None = f"{base}/{version}/{waba_id}/message_templates?fields={LIST_FIELDS}&limit={PAGE_LIMIT}"
    auth = {"Authorization": f"Bearer {inbox.access_token}"}
    found: list[RemoteTemplate] = []
    try:
        with outbound_client(timeout=timeout) as client:
            for _page in range(MAX_PAGES):
                if url is None:
                    break
                status, body = provider_json(client, url, headers=auth, provider="WhatsApp")
                if status != 200:
                    code = dict_or_empty(body.get("error")).get("code")
                    raise Failed(f"WhatsApp HTTP {status} listing templates (code {code})", transient=False)
                found.extend(t for t in map(_parse, list_or_empty(body.get("data"))) if t is not None)
                following = dict_or_empty(body.get("paging")).get("next")
                url = following if isinstance(following, str) and following else None
    except OutboundRefused as exc:
        raise Failed(f"template list refused by the outbound policy: {exc}", transient=False) from exc
    return found
