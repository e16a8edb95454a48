"""Slack: sending the files a person attached to a reply (helpdesk.channels.outbound_files).

Slack's upload flow for apps, three requests per file, all through the outbound policy:
1. `files.getUploadURLExternal` (form: `filename`, `length`; bot token) answers an `upload_url` and a `file_id`;
2. the bytes are POSTed to that `upload_url` (Slack's upload host; no redirect is followed);
3. `files.completeUploadExternal` (JSON: the file id and title, `channel_id`, and `thread_ts` when the customer
   wrote in a thread) shares the file in the conversation.
Only the share is the delivery's part (recorded with the file id): a retry after a failed share uploads again,
and an upload never shared is not shown to anybody.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import DeliveryResult
from .outbound_files import OutboundFile
from .provider_http import SendResult, dict_or_empty, list_or_empty, post_form, post_json, post_request
from .slack import DEFAULT_API_BASE_URL, classify, destination

if TYPE_CHECKING:
    from helpdesk.models import Inbox


def _upload_target(
    inbox: Inbox, base: str, file: OutboundFile, timeout: float
) -> tuple[str, str] | SendResult:
    answer = post_form(
        f"{base}/api/files.getUploadURLExternal",
        fields={"filename": file.file_name, "length": str(file.size)},
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    body = dict_or_empty(answer.body)
    url, file_id = body.get("upload_url"), body.get("file_id")
    if body.get("ok") is True and isinstance(url, str) and url and isinstance(file_id, str) and file_id:
        return url, file_id
    verdict = classify(answer)
    if verdict.result.ok:  # ok:true without the upload URL: not Slack's documented answer; try again later
        return SendResult(DeliveryResult(ok=False, error="Slack gave no upload URL", status_code=200))
    return verdict


def send_file(*, inbox: Inbox, source_id: str, file: OutboundFile, timeout: float) -> SendResult:
    """Upload one file and share it in the customer's channel (and thread)."""
    if not inbox.access_token:
        return SendResult(DeliveryResult(ok=False, permanent=True, error="The inbox has no Slack bot token."))
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    target_or_error = _upload_target(inbox, base, file, timeout)
    if isinstance(target_or_error, SendResult):
        return target_or_error
    upload_url, file_id = target_or_error
    uploaded = post_request(
        upload_url,
        headers={},
        timeout=timeout,
        files={"file": (file.file_name, file.read(), file.content_type)},
    )
    if isinstance(uploaded, DeliveryResult):
        return SendResult(uploaded)
    if not 200 <= uploaded.status_code < 300:
        transient = uploaded.status_code == 429 or uploaded.status_code >= 500
        error = f"Slack file upload HTTP {uploaded.status_code}"
        return SendResult(DeliveryResult(ok=False, permanent=not transient, error=error))
    where = destination(source_id)
    payload: dict[str, Any] = {
        "files": [{"id": file_id, "title": file.file_name}],
        "channel_id": where.channel,
    }
    if where.thread_ts:
        payload["thread_ts"] = where.thread_ts
    answer = post_json(
        f"{base}/api/files.completeUploadExternal",
        payload=payload,
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    shared = classify(answer)
    if not shared.result.ok:
        return shared
    files = list_or_empty(dict_or_empty(answer.body).get("files"))
    shared_id = dict_or_empty(files[0]).get("id") if files else None
    return SendResult(shared.result, shared_id if isinstance(shared_id, str) else file_id)
