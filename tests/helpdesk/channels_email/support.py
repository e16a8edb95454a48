"""An e-mail inbox and Mailgun-shaped signed inbound requests."""

from __future__ import annotations

import time
import uuid
from typing import Any

from helpdesk.channels.email.mailgun import signature
from helpdesk.models import Inbox
from tests.factories import InboxFactory

SIGNING_KEY = "key-mailgun-signing"
SMTP_PASSWORD = "smtp-password"


def email_inbox(**config: Any) -> Inbox:
    inbox: Inbox = InboxFactory(
        channel_type=Inbox.ChannelType.EMAIL,
        secret=SIGNING_KEY,
        callback_url="",
        provider_config={"from_address": "help@shop.example", "from_name": "Shop Support", **config},
    )
    inbox.smtp_password_set(SMTP_PASSWORD)
    inbox.save(update_fields=["smtp_password_encrypted"])
    return inbox


def multipart(fields: dict[str, bytes]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n"
        for name, value in fields.items()
    ]
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def signed_fields(
    raw_mail: bytes, *, key: str = SIGNING_KEY, at: float | None = None, token: str = ""
) -> dict:
    timestamp = str(int(time.time() if at is None else at))
    token = token or uuid.uuid4().hex
    return {
        "timestamp": timestamp.encode(),
        "token": token.encode(),
        "signature": signature(key, timestamp, token).encode(),
        "recipient": b"help@shop.example",
        "body-mime": raw_mail,
    }


def post(client, inbox: Inbox, fields: dict[str, bytes]):
    body, content_type = multipart(fields)
    return client.generic(
        "POST", f"/webhooks/email/{inbox.webhook_token}/", data=body, content_type=content_type
    )
