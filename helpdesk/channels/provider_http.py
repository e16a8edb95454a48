"""What the three provider channels (Telegram, WhatsApp Cloud, Slack) share: one sent part's result, the HTTP
call with its error handling, fitting a reply into a channel's length limit, and sending it in parts.

The HTTP call goes through the outbound policy (helpdesk.outbound): `api_base_url` is tenant configuration.
Delivery errors are built by each channel's `classify` from the status code and the provider's own error code
matched against our tables, never from the response text: people read them in the conversation."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from helpdesk.outbound import OutboundRefused, outbound_client

from .base import DeliveryResult
from .outbound_files import MissingFile, OutboundFile, outbound_files

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

    from .protocol import SentParts

logger = logging.getLogger(__name__)

ELLIPSIS = "…"


@dataclass(frozen=True)
class SendResult:
    """What a provider channel's `send` reports for one text part."""

    result: DeliveryResult
    """ok / transient / permanent, for the delivery task's retry policy."""
    provider_message_id: str = ""
    """The provider's id for the message it accepted (Telegram message_id, WhatsApp wamid, Slack ts)."""


@dataclass(frozen=True)
class ProviderAnswer:
    """A provider's HTTP answer, decoded once: status, headers, and the JSON body when there is one."""

    status_code: int
    headers: Mapping[str, str]
    body: Any
    """Decoded JSON, or None when the body is not JSON (an HTML error page from a proxy, say). Only its
    documented fields are read, and only matched against known values for an error message."""


def post_json(
    url: str, *, payload: dict[str, Any], headers: Mapping[str, str], timeout: float
) -> ProviderAnswer | DeliveryResult:
    """POST `payload` as JSON. A network error comes back as a transient DeliveryResult, never an exception:
    the provider may or may not have got the request, and the delivery task decides whether to try again.
    A URL or answer the outbound policy refuses is a permanent DeliveryResult: it fails the same way each time."""
    return post_request(url, headers=headers, timeout=timeout, json=payload)


def post_form(
    url: str,
    *,
    fields: Mapping[str, str],
    files: Mapping[str, tuple[str, bytes, str]] | None = None,
    headers: Mapping[str, str],
    timeout: float,
) -> ProviderAnswer | DeliveryResult:
    """POST form `fields` (multipart/form-data when there are `files`: name -> (file name, bytes, type)), with
    the same error handling as `post_json` (how Telegram and WhatsApp take an uploaded file)."""
    return post_request(url, headers=headers, timeout=timeout, data=dict(fields), files=files)


def post_request(
    url: str, *, headers: Mapping[str, str], timeout: float, **body: Any
) -> ProviderAnswer | DeliveryResult:
    """POST with `body` (httpx's json / data / files / content) through the outbound policy; see `post_json`."""
    try:
        with outbound_client(timeout=timeout) as client:
            response = client.post(url, headers=dict(headers), **body)
    except OutboundRefused as exc:
        # The reason never contains the URL's path, where Telegram keeps the bot token.
        return DeliveryResult(
            ok=False, permanent=True, error=f"provider API refused by the outbound policy: {exc}"
        )
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        # A misconfigured api_base_url fails the same way on every retry; people see the error on the message.
        return DeliveryResult(ok=False, permanent=True, error="The provider API base URL is not a valid URL.")
    except httpx.TimeoutException:
        return DeliveryResult(ok=False, error=f"timed out after {timeout:g} s talking to the provider")
    except httpx.HTTPError as exc:
        # Deliberately no URL in the message (Telegram's URL contains the bot token), and no exception text:
        # an HTTP parser's complaint quotes the bytes the server sent.
        return DeliveryResult(ok=False, error=f"{type(exc).__name__}: network error talking to the provider")
    try:
        body_json: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        body_json = None
    return ProviderAnswer(status_code=response.status_code, headers=response.headers, body=body_json)


def retry_after_seconds(value: Any) -> float | None:
    """A Retry-After header (delta seconds) or a provider's JSON `retry_after`; None when absent or unusable."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return max(seconds, 0.0)


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, which is how Telegram counts its 4096 limit (an emoji counts twice)."""
    return len(text.encode("utf-16-le")) // 2


def _longest_prefix(text: str, limit: int, size: Callable[[str], int]) -> int:
    """Number of characters of `text` whose `size` fits in `limit` (at least 1, so splitting always advances)."""
    if size is len:
        return max(1, min(len(text), limit))
    used = 0
    for index, char in enumerate(text):
        used += size(char)
        if used > limit:
            return max(1, index)
    return len(text)


def split_text(text: str, limit: int, *, size: Callable[[str], int] = len) -> list[str]:
    """Split `text` into parts of at most `limit` (measured by `size`), in order.

    Cuts prefer a paragraph break, then a line break, then a space, in the second half of the allowed window, so
    sentences are rarely cut; a text without any break is cut hard. Deterministic: the delivery task relies on
    the same text always giving the same parts to resume a half-sent reply after a retry.
    """
    parts: list[str] = []
    rest = text
    while size(rest) > limit:
        cut = _longest_prefix(rest, limit, size)
        window = rest[:cut]
        # A break right after the window is the best cut of all; otherwise look back for one.
        for separator in ("\n\n", "\n", " ") if not rest[cut : cut + 1].isspace() else ():
            position = window.rfind(separator)
            if position >= cut // 2:
                cut = position + len(separator)
                break
        part = rest[:cut].rstrip()
        if part:
            parts.append(part)
        rest = rest[cut:].lstrip("\n ")
    if rest.strip() or not parts:
        parts.append(rest)
    return parts


def shorten_text(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with an ellipsis, for channels where one long message beats several."""
    if len(text) <= limit:
        return text
    return text[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def dict_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class PartSender(Protocol):
    """A provider module's `send`: one text part, with the quick replies it offers."""

    def __call__(
        self, *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
    ) -> SendResult: ...


class FileSender(Protocol):
    """A provider module's `send_file`: one file of the reply (helpdesk.channels.outbound_files)."""

    def __call__(self, *, inbox: Inbox, source_id: str, file: OutboundFile, timeout: float) -> SendResult: ...


def send_in_parts(
    message: Message,
    *,
    parts: SentParts,
    timeout: float,
    fit_text: Callable[[str], list[str]],
    send_part: PartSender,
    send_file: FileSender | None = None,
) -> DeliveryResult:
    """Send `message` as the parts `fit_text` makes of it, then its files one by one (`send_file`), in order,
    from the first part not yet accepted (a retry resumes there); each accepted part's provider id is recorded
    at once (`parts.record`). The quick replies go with the last text part, where the customer reads on. A reply
    of files alone (no text) sends no text part."""
    files = outbound_files(message) if send_file is not None else []
    texts = fit_text(message.content) if message.content.strip() or not files else []
    source_id = message.conversation.contact_inbox.source_id
    quick_replies = [q for q in message.quick_replies or [] if isinstance(q, str) and q.strip()]
    total = len(texts) + len(files)
    for index in range(parts.count, total):
        if index < len(texts):
            outcome = send_part(
                inbox=message.inbox,
                source_id=source_id,
                text=texts[index],
                timeout=timeout,
                quick_replies=quick_replies if index == len(texts) - 1 else [],
            )
        else:
            assert send_file is not None  # files is empty without a sender
            try:
                outcome = send_file(
                    inbox=message.inbox, source_id=source_id, file=files[index - len(texts)], timeout=timeout
                )
            except MissingFile as exc:
                outcome = SendResult(DeliveryResult(ok=False, permanent=True, error=str(exc)))
        if not outcome.result.ok:
            if total > 1:
                error = f"part {index + 1} of {total}: {outcome.result.error}"
                return replace(outcome.result, error=error)
            return outcome.result
        parts.record(outcome.provider_message_id)
    return DeliveryResult(ok=True, status_code=200)
