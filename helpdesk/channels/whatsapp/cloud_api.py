"""WhatsApp Cloud API calls: sending a reply (text, or interactive with quick replies), Meta's answer
classified, and a customer's media looked up."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import httpx

from .. import rating
from ..base import DeliveryResult
from ..media import Download, Failed, provider_json, reported_size
from ..provider_http import (
    ProviderAnswer,
    SendResult,
    dict_or_empty,
    list_or_empty,
    post_json,
    retry_after_seconds,
    split_text,
)
from .interactive import INTERACTIVE_BODY_LIMIT, QUICK_REPLY_SHORT_BODY, rating_list, reply_buttons

if TYPE_CHECKING:
    from helpdesk.models import Inbox

# The package's name, as before the split: log settings and readers filter on it.
logger = logging.getLogger("helpdesk.channels.whatsapp")

DEFAULT_API_BASE_URL = "https://graph.facebook.com"
DEFAULT_API_VERSION = "v21.0"
TEXT_LIMIT = 4096
# Graph API error codes that mean "try again later": rate limits and Meta's own temporary trouble.
# Everything else (190 expired token, 131047 outside the 24-hour window, 131026 undeliverable, 100 bad
# parameter, permission errors ...) will fail the same way on every retry.
TRANSIENT_ERROR_CODES = frozenset({1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131048, 131056, 133004})
REENGAGEMENT_ERROR_CODE = 131047


def fit_text(text: str) -> list[str]:
    """WhatsApp limit: a text body holds 4096 characters, so a longer reply is split into several messages."""
    return split_text(text, TEXT_LIMIT)


def number_url(inbox: Inbox) -> str | SendResult:
    """`{api base}/{version}/{phone_number_id}` of the inbox's business number (its `/messages` and `/media`
    live under it), or the failed send saying what the inbox lacks."""
    config = inbox.provider_config
    phone_number_id = str(config.get("phone_number_id") or "")
    if not inbox.access_token or not phone_number_id:
        return SendResult(
            DeliveryResult(
                ok=False, permanent=True, error="The inbox needs a WhatsApp access token and phone_number_id."
            )
        )
    base = str(config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    version = str(config.get("api_version") or DEFAULT_API_VERSION)
    return f"{base}/{version}/{phone_number_id}"


def post_message(
    inbox: Inbox, number: str, source_id: str, message: dict[str, Any], timeout: float
) -> SendResult:
    """Send one message object (`{"type": ..., ...}`) to the customer and classify Meta's answer."""
    answer = post_json(
        f"{number}/messages",
        payload={"messaging_product": "whatsapp", "recipient_type": "individual", "to": source_id, **message},
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


def send(
    *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
) -> SendResult:
    """Send one text part through the Cloud API and classify Meta's answer. With quick replies the part goes as
    an interactive message with reply buttons; a part longer than an interactive body goes as text first, then
    the buttons follow under a short body (their failure alone does not fail the delivery: the reply arrived)."""
    number = number_url(inbox)
    if isinstance(number, SendResult):
        return number

    def post(message: dict[str, Any]) -> SendResult:
        return post_message(inbox, number, source_id, message, timeout)

    text_message = {"type": "text", "text": {"preview_url": False, "body": text}}
    if not quick_replies:
        return post(text_message)

    def interactive(body: str) -> dict[str, Any]:
        form = (
            rating_list(body)
            if rating.is_rating_request(quick_replies)
            else reply_buttons(body, quick_replies)
        )
        return {"type": "interactive", "interactive": form}

    if len(text) <= INTERACTIVE_BODY_LIMIT:
        return post(interactive(text))
    sent = post(text_message)
    if sent.result.ok:
        buttons = post(interactive(QUICK_REPLY_SHORT_BODY))
        if not buttons.result.ok:
            logger.warning("WhatsApp quick replies not sent: %s", buttons.result.error)
    return sent


# Graph API error codes we recognise, and what a delivery error says for each. Only the numeric code and our
# wording reach people: Meta's message and details are text from whatever server `api_base_url` names.
KNOWN_ERRORS: dict[int, str] = {
    REENGAGEMENT_ERROR_CODE: "outside the 24-hour customer service window (only a template message can reopen it)",
    1: "temporary Meta API error",
    2: "Meta service temporarily unavailable",
    4: "application rate limit reached",
    10: "permission denied",
    17: "user rate limit reached",
    100: "invalid parameter (check phone_number_id and the recipient)",
    190: "access token expired or not valid",
    200: "permission denied",
    341: "application limit reached",
    368: "temporarily blocked for policy violations",
    80007: "rate limit reached",
    130429: "throughput rate limit reached",
    131000: "temporary Meta error",
    131005: "access denied",
    131008: "a required parameter is missing",
    131009: "a parameter value is not valid",
    131016: "Meta service temporarily unavailable",
    131021: "recipient cannot be the sender",
    131026: "message undeliverable (the number may not be on WhatsApp)",
    131030: "recipient is not in the test number's allowed list",
    131031: "the business account is locked",
    131042: "a business payment issue blocks sending",
    131048: "spam rate limit reached",
    131051: "message type not supported",
    131056: "too many messages to this recipient",
    133004: "the phone number's server is temporarily unavailable",
    133010: "the phone number is not registered",
}


def known_error(code: Any) -> str:
    # Meta's codes have at most 7 digits; anything else is not Meta talking (and could be 4,000 digits long).
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 10**9:
        return "no error code"
    return f"code {code}: {KNOWN_ERRORS.get(code, 'unrecognised error')}"


def classify(answer: ProviderAnswer) -> SendResult:
    """Meta answers `{"messages": [{"id": wamid}]}` or `{"error": {"message", "type", "code", ...}}`."""
    body = dict_or_empty(answer.body)
    status = answer.status_code
    if 200 <= status < 300:
        messages = list_or_empty(body.get("messages"))
        wamid = dict_or_empty(messages[0]).get("id") if messages else None
        if isinstance(wamid, str) and wamid:
            return SendResult(DeliveryResult(ok=True, status_code=status), wamid)
    error = dict_or_empty(body.get("error"))
    code = error.get("code")
    message = f"WhatsApp HTTP {status} {known_error(code)}"
    retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
    if status == 429 or status >= 500 or code in TRANSIENT_ERROR_CODES or 200 <= status < 300:
        # A 2xx without a wamid is a proxy in the way, not Meta's verdict: try again later.
        return SendResult(
            DeliveryResult(ok=False, error=message, retry_after=retry_after, status_code=status)
        )
    return SendResult(DeliveryResult(ok=False, permanent=True, error=message, status_code=status))


def fetch_media(client: httpx.Client, inbox: Inbox, media_id: str) -> Download:
    """GET /{version}/{media-id} (bearer) answers the media URL, its type and size; the URL needs the bearer too
    and expires after a few minutes, so it is never stored."""
    if not inbox.access_token:
        raise Failed("the inbox has no WhatsApp access token", transient=False)
    config = inbox.provider_config
    base = str(config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    version = str(config.get("api_version") or DEFAULT_API_VERSION)
    auth = {"Authorization": f"Bearer {inbox.access_token}"}
    status, body = provider_json(client, f"{base}/{version}/{media_id}", headers=auth, provider="WhatsApp")
    url = body.get("url") if status == 200 else None
    if not isinstance(url, str) or not url:
        raise Failed(f"WhatsApp HTTP {status}: no download URL for the media", transient=False)
    return Download(
        url=url,
        headers=auth,
        declared_type=str(body.get("mime_type") or ""),
        declared_size=reported_size(body.get("file_size")),
    )
