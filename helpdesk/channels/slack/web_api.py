"""Slack's Web API: chat.postMessage for a reply (its errors classified) and files.info for a customer's file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .. import rating
from ..base import DeliveryResult
from ..media import Download, Failed, provider_json, reported_size
from ..provider_http import (
    ProviderAnswer,
    SendResult,
    dict_or_empty,
    post_json,
    retry_after_seconds,
    shorten_text,
)
from .blocks import quick_reply_blocks, rating_blocks
from .webhook import destination

if TYPE_CHECKING:
    from helpdesk.models import Inbox

DEFAULT_API_BASE_URL = "https://slack.com"
TEXT_LIMIT = 40_000
# chat.postMessage errors worth retrying; every other `ok: false` error (invalid_auth, channel_not_found,
# not_in_channel, is_archived, account_inactive, token_revoked, msg_too_long ...) fails the same way each time.
TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


def fit_text(text: str) -> list[str]:
    """Slack limit: 40,000 characters, so a longer reply is shortened with an ellipsis (never split)."""
    return [shorten_text(text, TEXT_LIMIT)]


def send(
    *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
) -> SendResult:
    """Post one message with chat.postMessage (in the customer's thread when they wrote in one), with the quick
    replies as buttons under the text."""
    if not inbox.access_token:
        return SendResult(DeliveryResult(ok=False, permanent=True, error="The inbox has no Slack bot token."))
    target = destination(source_id)
    payload: dict[str, Any] = {"channel": target.channel, "text": text}
    if rating.is_rating_request(quick_replies):
        payload["blocks"] = rating_blocks(text)
    elif quick_replies:
        # With blocks, Slack shows the blocks and uses `text` only for notifications.
        payload["blocks"] = quick_reply_blocks(text, quick_replies)
    if target.thread_ts:
        payload["thread_ts"] = target.thread_ts
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    answer = post_json(
        f"{base}/api/chat.postMessage",
        payload=payload,
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


# chat.postMessage's documented error codes (and the Web API's common ones). A delivery error names a code
# only when it is one of these: the `error` field is text from whatever server `api_base_url` names.
KNOWN_ERRORS = TRANSIENT_ERRORS | frozenset(
    {
        "access_denied",
        "account_inactive",
        "as_user_not_supported",
        "cannot_reply_to_message",
        "channel_not_found",
        "deprecated_endpoint",
        "duplicate_channel_not_found",
        "ekm_access_denied",
        "enterprise_is_restricted",
        "invalid_arguments",
        "invalid_auth",
        "invalid_blocks",
        "invalid_charset",
        "invalid_form_data",
        "is_archived",
        "message_limit_exceeded",
        "messages_tab_disabled",
        "method_deprecated",
        "missing_scope",
        "msg_too_long",
        "no_permission",
        "no_text",
        "not_allowed_token_type",
        "not_authed",
        "not_in_channel",
        "org_login_required",
        "rate_limited",
        "restricted_action",
        "restricted_action_read_only_channel",
        "restricted_action_thread_only_channel",
        "team_access_not_granted",
        "token_expired",
        "token_revoked",
        "too_many_attachments",
        "two_factor_setup_required",
    }
)


def known_error(code: Any) -> str:
    if not code:
        return "no error code"
    return code if isinstance(code, str) and code in KNOWN_ERRORS else "unrecognised error code"


def classify(answer: ProviderAnswer) -> SendResult:
    """HTTP 429 (with Retry-After) and 5xx are transient; HTTP 200 `ok: false` is classified by its error."""
    body = dict_or_empty(answer.body)
    status = answer.status_code
    retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
    if status == 429 or status >= 500:
        error = f"Slack HTTP {status}: {known_error(body.get('error'))}"
        return SendResult(DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status))
    if 200 <= status < 300 and body.get("ok") is True:
        return SendResult(DeliveryResult(ok=True, status_code=status), str(body.get("ts") or ""))
    code = str(body.get("error") or "")
    error = f"Slack HTTP {status}: {known_error(code)}"
    if code in TRANSIENT_ERRORS or (200 <= status < 300 and not code):
        # No JSON verdict at all on a 2xx: something in between answered, not Slack. Try again later.
        return SendResult(DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status))
    return SendResult(DeliveryResult(ok=False, permanent=True, error=error, status_code=status))


def fetch_media(client: httpx.Client, inbox: Inbox, file_id: str) -> Download:
    """files.info (bot token) answers the file's url_private_download; that URL needs the bot token too."""
    if not inbox.access_token:
        raise Failed("the inbox has no Slack bot token", transient=False)
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    auth = {"Authorization": f"Bearer {inbox.access_token}"}
    status, body = provider_json(
        client,
        f"{base}/api/files.info?file={quote(file_id, safe='')}",
        headers=auth,
        provider="Slack",
    )
    file = body.get("file") if status == 200 and body.get("ok") is True else None
    if not isinstance(file, dict):
        error = str(body.get("error") or "")
        raise Failed(
            f"Slack HTTP {status}: "
            + (error if error in ("file_not_found", "file_deleted", "missing_scope") else "error"),
            transient=error in ("ratelimited", "internal_error", "service_unavailable"),
        )
    url = file.get("url_private_download") or file.get("url_private")
    if not isinstance(url, str) or not url:
        raise Failed("Slack did not give a download URL for the file", transient=False)
    return Download(
        url=url,
        headers=auth,
        declared_type=str(file.get("mimetype") or ""),
        declared_size=reported_size(file.get("size")),
    )
