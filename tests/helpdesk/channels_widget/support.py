"""A widget inbox and a visitor's calls to its public API, through Django's test client."""

from __future__ import annotations

import json
from typing import Any

from helpdesk.models import Inbox
from tests.factories import InboxFactory

PAGE = "http://127.0.0.1:8123"
SECRET = "widget-identity-secret"


def widget_inbox(**kwargs: Any) -> Inbox:
    return InboxFactory(
        channel_type=Inbox.ChannelType.WIDGET,
        secret=SECRET,
        callback_url="",
        provider_config={"allowed_origins": f"{PAGE} https://shop.example"},
        **kwargs,
    )


def url(inbox: Inbox, operation: str) -> str:
    return f"/widget/{inbox.webhook_token}/{operation}/"


def call(
    client,
    method: str,
    inbox: Inbox,
    operation: str,
    *,
    token: str = "",
    origin: str = PAGE,
    body=None,
    query="",
):
    headers = {"Origin": origin} if origin else {}
    if token:
        headers["X-Visitor-Token"] = token
    data = body if isinstance(body, bytes | str) else json.dumps(body if body is not None else {})
    target = url(inbox, operation) + (f"?{query}" if query else "")
    if method == "GET":
        return client.get(target, headers=headers)
    if method == "OPTIONS":
        return client.options(target, headers=headers)
    return client.generic(method, target, data=data, content_type="application/json", headers=headers)


def new_visitor(client, inbox: Inbox) -> str:
    response = call(client, "POST", inbox, "session")
    assert response.status_code == 200, response.content
    return str(response.json()["visitor_token"])


def send(client, inbox: Inbox, token: str, text: str, message_id: str = "m1"):
    return call(client, "POST", inbox, "messages", token=token, body={"id": message_id, "text": text})
