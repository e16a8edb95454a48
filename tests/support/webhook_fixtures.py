"""Provider payload fixtures (tests/fixtures/webhooks/<channel>/*.json) and outgoing messages to send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpdesk.delivery import send
from helpdesk.models import Delivery, Inbox, Message
from tests.factories import ConversationFactory, MessageFactory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "webhooks"


def fixture_body(channel: str, name: str) -> bytes:
    """The fixture's exact bytes: signatures are computed over what is sent, so it is never re-serialised."""
    return (FIXTURES / channel / f"{name}.json").read_bytes()


def fixture_json(channel: str, name: str) -> Any:
    return json.loads(fixture_body(channel, name))


def outgoing_message(inbox: Inbox, *, source_id: str, content: str = "Your refund is on its way.") -> Message:
    """A queued AI reply in a conversation with the contact known on `inbox` as `source_id`."""
    conversation = ConversationFactory(contact_inbox__inbox=inbox, contact_inbox__source_id=source_id)
    return MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content=content,
        delivery=Delivery.Status.QUEUED,
    )


def record_backoffs(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """Record the `retry_after` each retry of the delivery task was computed with (the provider's floor)."""
    seen: list[float | None] = []
    original = send.backoff_seconds

    def recording(attempt: int, *, base: float, cap: float, retry_after: float | None = None) -> float:
        seen.append(retry_after)
        return original(attempt, base=base, cap=cap, retry_after=retry_after)

    monkeypatch.setattr(send, "backoff_seconds", recording)
    return seen
