"""Asking a provider where a file a customer sent is (`Channel.fetch_media`): the answer and its errors.

A channel's webhook reports only a reference (see each channel's `parse`); helpdesk.services.attachments records
it and later asks the inbox's channel for a `Download`: the file's URL, the headers it needs, and what the
provider declares about it. The download itself, with its checks (type, size, the bytes), is the service's.

Errors are our own wording, never the URL (a Telegram file URL holds the bot token) nor text the remote server
sent: people read them on the attachment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from helpdesk.outbound import ResponseTooLarge


class Refused(Exception):
    """The file is not accepted (type, size, policy); retrying will not change it. `str` is for people."""


class Failed(Exception):
    """The file could not be fetched now. `transient`: worth retrying later. `str` is for people."""

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class Download:
    """Where the file's bytes are, as the provider's metadata answer says."""

    url: str
    headers: dict[str, str]
    declared_type: str = ""
    declared_size: int = 0


def reported_size(value: Any) -> int:
    """A provider's size field: an integer, or (WhatsApp) a string of digits; 0 when unknown."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value)
    return 0


def provider_json(
    client: httpx.Client, url: str, *, headers: Mapping[str, str], provider: str
) -> tuple[int, dict[str, Any]]:
    """GET a provider's JSON metadata answer: (status, body). Failed for a network error, a 429/5xx (both
    transient) or an answer that is not a JSON object; the caller judges a 4xx JSON error body."""
    try:
        response = client.get(url, headers=dict(headers))
        response.read()
    except ResponseTooLarge as exc:
        raise Failed(f"{provider} answered with more than a metadata answer", transient=False) from exc
    except httpx.TimeoutException as exc:
        raise Failed(f"timed out talking to {provider}") from exc
    except httpx.HTTPError as exc:
        # No exception text: it can quote the URL (with Telegram's bot token) or bytes the server sent.
        raise Failed(f"network error talking to {provider} ({type(exc).__name__})") from exc
    if response.status_code == 429 or response.status_code >= 500:
        raise Failed(f"{provider} HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise Failed(f"{provider} HTTP {response.status_code}: not a {provider} answer", transient=False)
    return response.status_code, body
