"""The rating request in each channel's native form, as the provider (a fake on 127.0.0.1) or the API channel's
callback receiver gets it, with each provider's documented limits asserted."""

from __future__ import annotations

from typing import Any

import pytest

from helpdesk.channels import api_channel, whatsapp
from helpdesk.channels.rating import RATING_CHOICES
from helpdesk.models import Message
from helpdesk.services.csat import DEFAULT_QUESTION
from helpdesk.tasks import message_deliver
from tests.support.outbox import delivery_of

from .conftest import (
    API_CONTACT,
    DM_CONTACT,
    SHEENA,
    TG_CHAT,
    conversation_with_customer,
    rating_request,
    resolve,
)

pytestmark = pytest.mark.django_db

STARS = ["⭐", "⭐⭐", "⭐⭐⭐", "⭐⭐⭐⭐", "⭐⭐⭐⭐⭐"]


def deliver_request(inbox, source_id: str, capture) -> Message:
    request = rating_request(resolve(conversation_with_customer(inbox, source_id), capture))
    assert message_deliver.apply(args=[request.id]).get() == "sent"
    return request


def test_telegram_inline_keyboard_one_star_row_per_rating(
    telegram_inbox, provider, django_capture_on_commit_callbacks
):
    deliver_request(telegram_inbox, TG_CHAT, django_capture_on_commit_callbacks)
    [request] = provider.requests
    assert request["path"].endswith("/sendMessage")
    assert request["json"] == {
        "chat_id": int(TG_CHAT),
        "text": DEFAULT_QUESTION,
        "reply_markup": {
            "inline_keyboard": [
                [{"text": stars, "callback_data": f"csat:{n}"}]
                for n, stars in zip(RATING_CHOICES, STARS, strict=True)
            ]
        },
    }
    # Bot API: callback_data is 1-64 bytes.
    for [button] in request["json"]["reply_markup"]["inline_keyboard"]:
        assert 1 <= len(button["callback_data"].encode()) <= 64


def assert_whatsapp_list_limits(interactive: dict[str, Any]) -> None:
    """Meta's documented limits for list messages: body <= 1024 (4096 for lists, the stricter one kept), button
    1-20 characters, at most 10 rows in all, row title <= 24, row id <= 200 and unique."""
    assert interactive["type"] == "list"
    assert 1 <= len(interactive["body"]["text"]) <= 1024
    assert 1 <= len(interactive["action"]["button"]) <= 20
    rows = [row for section in interactive["action"]["sections"] for row in section["rows"]]
    assert 1 <= len(rows) <= 10
    assert all(1 <= len(r["title"]) <= 24 and 1 <= len(r["id"]) <= 200 for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


def test_whatsapp_interactive_list_with_five_rows(
    whatsapp_inbox, provider, django_capture_on_commit_callbacks
):
    request = deliver_request(whatsapp_inbox, SHEENA, django_capture_on_commit_callbacks)
    [sent] = provider.requests
    body = sent["json"]
    assert {k: body[k] for k in ("messaging_product", "to", "type")} == {
        "messaging_product": "whatsapp",
        "to": SHEENA,
        "type": "interactive",
    }
    interactive = body["interactive"]
    assert_whatsapp_list_limits(interactive)
    assert interactive["body"] == {"text": DEFAULT_QUESTION}
    assert interactive["action"]["button"] == whatsapp.RATING_LIST_BUTTON
    [section] = interactive["action"]["sections"]
    assert section["rows"] == [
        {"id": f"csat:{n}", "title": s} for n, s in zip(RATING_CHOICES, STARS, strict=True)
    ]
    assert delivery_of(request).provider_message_id == "wamid.FAKE00000001"


def test_whatsapp_long_question_goes_as_text_then_the_list(
    whatsapp_inbox, provider, django_capture_on_commit_callbacks
):
    whatsapp_inbox.csat_message = "Please rate us. " * 80  # 1280 characters: over an interactive body
    whatsapp_inbox.save()
    deliver_request(whatsapp_inbox, SHEENA, django_capture_on_commit_callbacks)
    first, second = (r["json"] for r in provider.requests)
    assert first["type"] == "text" and first["text"]["body"] == whatsapp_inbox.csat_message.strip()
    assert second["type"] == "interactive"
    assert_whatsapp_list_limits(second["interactive"])


def test_slack_five_buttons_under_the_question(slack_inbox, provider, django_capture_on_commit_callbacks):
    deliver_request(slack_inbox, DM_CONTACT, django_capture_on_commit_callbacks)
    [sent] = provider.requests
    body = sent["json"]
    assert body["channel"] == "D0LAN2Q65" and body["text"] == DEFAULT_QUESTION
    section, actions = body["blocks"]
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": DEFAULT_QUESTION}}
    assert actions["type"] == "actions" and actions["block_id"] == "csat"
    assert actions["elements"] == [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": stars, "emoji": True},
            "value": n,
            "action_id": f"csat_{n}",
        }
        for n, stars in zip(RATING_CHOICES, STARS, strict=True)
    ]


def test_api_channel_event_says_csat_and_lists_the_choices(
    api_inbox, receiver, django_capture_on_commit_callbacks
):
    request = deliver_request(api_inbox, API_CONTACT, django_capture_on_commit_callbacks)
    [event] = receiver.events
    assert event["json"]["csat"] is True
    assert event["json"]["quick_replies"] == ["1", "2", "3", "4", "5"]
    assert event["json"]["suggestions"] == ["1", "2", "3", "4", "5"]
    assert event["json"]["text"] == DEFAULT_QUESTION
    assert event["json"]["message_id"] == request.id
    assert event["json"]["sender"]["type"] == "system"
    # Signed like every event, over the body as sent (csat included).
    headers = {k.title(): v for k, v in event["headers"].items()}
    api_channel.verify(secret=api_inbox.secret, headers=headers, body=event["body"], window_seconds=300)


def test_an_ordinary_reply_never_carries_csat(api_inbox, receiver):
    from tests.support.webhook_fixtures import outgoing_message

    message = outgoing_message(api_inbox, source_id=API_CONTACT)
    Message.objects.filter(pk=message.pk).update(quick_replies=["Is shipping free?"])
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [event] = receiver.events
    assert "csat" not in event["json"] and "quick_replies" not in event["json"]
