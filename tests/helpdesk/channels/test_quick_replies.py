"""Quick replies (the AI's follow-up questions) on every channel: each provider's outbound body against a fake
provider on 127.0.0.1 with its documented limits asserted, taps coming back as ordinary customer messages, and
messages without quick replies sent exactly as before."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

import pytest

from helpdesk.channels import slack, telegram, whatsapp
from helpdesk.models import Delivery, Inbox, Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_provider import FakeProvider, whatsapp_error
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of
from tests.support.webhook_fixtures import FIXTURES, fixture_body, fixture_json, outgoing_message

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "Can I get the refund on another card?",
    "How do I track my refund?",
    "Is shipping free?",
]


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


def with_quick_replies(message: Message, questions: list[str]) -> Message:
    Message.objects.filter(pk=message.pk).update(quick_replies=questions)
    message.refresh_from_db()
    return message


def sent_bodies(provider: FakeProvider) -> list[dict[str, Any]]:
    return [request["json"] for request in provider.requests]


# ---- Telegram ----------------------------------------------------------------------------------------------

TG_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
TG_CHAT = "5112233445"


@pytest.fixture
def telegram_inbox(provider: FakeProvider) -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.TELEGRAM,
        inbox__secret="tg_secret-token-123",
        inbox__access_token=TG_TOKEN,
        inbox__provider_config={"api_base_url": provider.base_url},
    ).inbox


def test_telegram_reply_carries_a_one_time_reply_keyboard_one_button_per_row(telegram_inbox, provider):
    message = with_quick_replies(outgoing_message(telegram_inbox, source_id=TG_CHAT), QUESTIONS)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [body] = sent_bodies(provider)
    assert body == {
        "chat_id": int(TG_CHAT),
        "text": "Your refund is on its way.",
        "reply_markup": {
            "keyboard": [[{"text": q}] for q in QUESTIONS],
            "one_time_keyboard": True,
            "resize_keyboard": True,
        },
    }


def test_telegram_long_reply_shows_the_keyboard_with_its_last_part_only(telegram_inbox, provider):
    text = " ".join(f"w{i:04d}" for i in range(1500))  # three parts
    message = with_quick_replies(outgoing_message(telegram_inbox, source_id=TG_CHAT, content=text), QUESTIONS)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    bodies = sent_bodies(provider)
    assert ["reply_markup" in b for b in bodies] == [False, False, True]
    assert all(telegram.utf16_length(b["text"]) <= telegram.TEXT_LIMIT for b in bodies)


def test_telegram_without_quick_replies_sends_exactly_what_it_always_did(telegram_inbox, provider):
    message = outgoing_message(telegram_inbox, source_id=TG_CHAT)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert sent_bodies(provider) == [{"chat_id": int(TG_CHAT), "text": "Your refund is on its way."}]


# ---- WhatsApp Cloud ----------------------------------------------------------------------------------------

WA_SECRET = "d6f1c0ffee0ddba11c0ffee0ddba11c0"
WA_PHONE_NUMBER_ID = "106540352242922"
SHEENA = "16505551234"


@pytest.fixture
def whatsapp_inbox(provider: FakeProvider) -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.WHATSAPP,
        inbox__secret=WA_SECRET,
        inbox__access_token="EAAGm0PX4ZCpsBAKZCZA0ZD",
        inbox__provider_config={"phone_number_id": WA_PHONE_NUMBER_ID, "api_base_url": provider.base_url},
    ).inbox


def assert_whatsapp_button_limits(interactive: dict[str, Any]) -> None:
    """Meta's documented limits for reply buttons."""
    assert interactive["type"] == "button"
    assert 1 <= len(interactive["body"]["text"]) <= 1024
    buttons = interactive["action"]["buttons"]
    assert 1 <= len(buttons) <= 3
    titles = [b["reply"]["title"] for b in buttons]
    assert all(b["type"] == "reply" for b in buttons)
    assert all(1 <= len(t) <= 20 for t in titles)
    assert len(set(titles)) == len(titles)
    ids = [b["reply"]["id"] for b in buttons]
    assert all(1 <= len(i) <= 256 and i == i.strip() for i in ids)
    assert len(set(ids)) == len(ids)


def test_whatsapp_reply_is_an_interactive_message_with_three_reply_buttons(whatsapp_inbox, provider):
    message = with_quick_replies(outgoing_message(whatsapp_inbox, source_id=SHEENA), QUESTIONS)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [body] = sent_bodies(provider)
    assert {k: body[k] for k in ("messaging_product", "recipient_type", "to", "type")} == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": SHEENA,
        "type": "interactive",
    }
    interactive = body["interactive"]
    assert_whatsapp_button_limits(interactive)
    assert interactive["body"] == {"text": "Your refund is on its way."}
    replies = [b["reply"] for b in interactive["action"]["buttons"]]
    # A question longer than a title is shortened on the button and kept whole in the id.
    assert replies[0] == {"id": f"suggestion:{QUESTIONS[0]}", "title": "Can I get the refun…"}
    assert replies[1] == {"id": f"suggestion:{QUESTIONS[1]}", "title": "How do I track my r…"}
    assert replies[2] == {"id": f"suggestion:{QUESTIONS[2]}", "title": "Is shipping free?"}
    assert delivery_of(message).provider_message_id == "wamid.FAKE00000001"


def test_whatsapp_questions_that_start_alike_get_distinct_titles(whatsapp_inbox, provider):
    alike = ["How do I track my order?", "How do I track my refund?", "How do I track my parcel?", "Extra?"]
    message = with_quick_replies(outgoing_message(whatsapp_inbox, source_id=SHEENA), alike)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    interactive = sent_bodies(provider)[0]["interactive"]
    assert_whatsapp_button_limits(interactive)  # at most 3 buttons, unique titles
    assert [b["reply"]["id"] for b in interactive["action"]["buttons"]] == [
        f"suggestion:{q}" for q in alike[:3]
    ]


def test_whatsapp_reply_longer_than_a_button_body_goes_as_text_then_buttons(whatsapp_inbox, provider):
    text = "Here is how refunds work. " * 60  # 1,560 characters: more than an interactive body
    message = with_quick_replies(
        outgoing_message(whatsapp_inbox, source_id=SHEENA, content=text.strip()), QUESTIONS
    )
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    first, second = sent_bodies(provider)
    assert first["type"] == "text" and first["text"] == {"preview_url": False, "body": text.strip()}
    assert second["type"] == "interactive"
    assert_whatsapp_button_limits(second["interactive"])
    assert second["interactive"]["body"]["text"] == whatsapp.QUICK_REPLY_SHORT_BODY
    # The reply's own message is the one recorded (a retry must never send it twice).
    assert delivery_of(message).provider_message_id == "wamid.FAKE00000001"


def test_whatsapp_buttons_failing_after_the_text_arrived_do_not_fail_the_reply(
    whatsapp_inbox, provider, caplog
):
    provider.script("/messages", None, whatsapp_error(131009, "(#131009) Parameter value is not valid"))
    text = "Here is how refunds work. " * 60
    message = with_quick_replies(outgoing_message(whatsapp_inbox, source_id=SHEENA, content=text), QUESTIONS)
    with caplog.at_level(logging.WARNING, logger="helpdesk.channels.whatsapp"):
        assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert len(provider.requests) == 2
    assert delivery_of(message).status == Delivery.Status.SENT
    assert "quick replies not sent" in caplog.text


def test_whatsapp_without_quick_replies_sends_exactly_what_it_always_did(whatsapp_inbox, provider):
    message = outgoing_message(whatsapp_inbox, source_id=SHEENA)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert sent_bodies(provider) == [
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": SHEENA,
            "type": "text",
            "text": {"preview_url": False, "body": "Your refund is on its way."},
        }
    ]


def post_whatsapp(client, inbox: Inbox, body: bytes):
    return client.post(
        f"/webhooks/whatsapp/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers={whatsapp.SIGNATURE_HEADER: whatsapp.sign(WA_SECRET, body)},
    )


def test_whatsapp_button_reply_tap_is_an_ordinary_message_with_the_full_question(
    client, whatsapp_inbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post_whatsapp(client, whatsapp_inbox, fixture_body("whatsapp", "interactive_button_reply"))
    assert response.status_code == 200 and response.json()["status"] == "accepted"
    message = Message.objects.get()
    assert message.message_type == Message.Type.INCOMING
    assert message.content == "Can I get the refund on another card?"  # not the shortened title
    assert message.conversation.contact_inbox.source_id == SHEENA
    assert len(not_realtime(callbacks)) == 1  # answered by the AI like any message


def test_whatsapp_template_button_and_foreign_button_ids_keep_their_text(client, whatsapp_inbox):
    assert post_whatsapp(client, whatsapp_inbox, fixture_body("whatsapp", "button")).status_code == 200
    foreign = fixture_json("whatsapp", "interactive_button_reply")
    reply = foreign["entry"][0]["changes"][0]["value"]["messages"][0]
    reply["id"] = "wamid.other"
    reply["interactive"]["button_reply"] = {"id": "confirm-42", "title": "Yes, confirm"}
    assert post_whatsapp(client, whatsapp_inbox, json.dumps(foreign).encode()).status_code == 200
    assert [m.content for m in Message.objects.order_by("id")] == ["Talk to sales", "Yes, confirm"]


# ---- Slack -------------------------------------------------------------------------------------------------

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
DM_CONTACT = "D0LAN2Q65:U061F7AUR"


@pytest.fixture
def slack_inbox(provider: FakeProvider) -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.SLACK,
        inbox__secret=SLACK_SECRET,
        inbox__access_token="xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
        inbox__provider_config={"bot_user_id": "U0LAN0Z89", "api_base_url": provider.base_url},
    ).inbox


def assert_slack_block_limits(blocks: list[dict[str, Any]]) -> None:
    """Block Kit's documented limits: section text 3000, button text 75, value 2000, unique action ids."""
    assert len(blocks) <= 50
    *sections, actions = blocks
    assert all(s["type"] == "section" and len(s["text"]["text"]) <= 3000 for s in sections)
    assert actions["type"] == "actions"
    buttons = actions["elements"]
    assert 1 <= len(buttons) <= 25
    assert all(b["type"] == "button" and b["text"]["type"] == "plain_text" for b in buttons)
    assert all(1 <= len(b["text"]["text"]) <= 75 and len(b["value"]) <= 2000 for b in buttons)
    action_ids = [b["action_id"] for b in buttons]
    assert len(set(action_ids)) == len(action_ids) and all(len(a) <= 255 for a in action_ids)


def test_slack_reply_has_the_text_in_a_section_and_a_button_per_question(slack_inbox, provider):
    long_question = "Could you tell me whether the refund also covers the express shipping fee I paid?"
    assert len(long_question) > 75
    questions = [*QUESTIONS[:2], long_question]
    message = with_quick_replies(outgoing_message(slack_inbox, source_id=DM_CONTACT), questions)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [body] = sent_bodies(provider)
    assert body["channel"] == "D0LAN2Q65"
    assert body["text"] == "Your refund is on its way."  # still there: Slack's notification text
    assert_slack_block_limits(body["blocks"])
    section, actions = body["blocks"]
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "Your refund is on its way."}}
    buttons = actions["elements"]
    assert [b["value"] for b in buttons] == questions  # the full question, even when the label is shortened
    assert [b["text"]["text"] for b in buttons][:2] == QUESTIONS[:2]
    label = buttons[2]["text"]["text"]
    assert label.endswith("…") and len(label) <= 75 and long_question.startswith(label[:-1])


def test_slack_long_reply_is_split_over_sections_within_the_limit(slack_inbox, provider):
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(12))  # ~9,200 characters
    message = with_quick_replies(outgoing_message(slack_inbox, source_id=DM_CONTACT, content=text), QUESTIONS)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [body] = sent_bodies(provider)
    assert_slack_block_limits(body["blocks"])
    sections = body["blocks"][:-1]
    assert len(sections) >= 4
    assert [w for s in sections for w in s["text"]["text"].split()] == text.split()


def test_slack_without_quick_replies_sends_exactly_what_it_always_did(slack_inbox, provider):
    message = outgoing_message(slack_inbox, source_id=DM_CONTACT)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert sent_bodies(provider) == [{"channel": "D0LAN2Q65", "text": "Your refund is on its way."}]


def block_actions(**changes: Any) -> dict[str, Any]:
    payload = json.loads((FIXTURES / "slack_interactivity" / "block_actions.json").read_text())
    payload.update(changes)
    return payload


def post_interaction(client, inbox: Inbox, payload: dict[str, Any] | None, *, headers=None, body=None):
    body = body if body is not None else urlencode({"payload": json.dumps(payload)}).encode()
    headers = slack.signed_headers(SLACK_SECRET, body) if headers is None else headers
    return client.post(
        f"/webhooks/slack/{inbox.webhook_token}/",
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers=headers,
    )


def test_slack_button_tap_is_an_ordinary_message_from_that_user_in_that_channel(
    client, slack_inbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post_interaction(client, slack_inbox, block_actions())
    assert response.status_code == 200
    message = Message.objects.get()
    assert message.message_type == Message.Type.INCOMING
    assert message.content == "Can I get the refund on another card?"
    assert message.conversation.contact_inbox.source_id == DM_CONTACT
    assert message.provider_message_id == "slack-action:U061F7AUR:1718000160.123456"
    assert len(not_realtime(callbacks)) == 1
    # The same request again (a retry) is a no-op.
    assert post_interaction(client, slack_inbox, block_actions()).json()["status"] == "duplicate"
    assert Message.objects.count() == 1


def test_slack_tap_in_a_thread_stays_in_the_thread(client, slack_inbox):
    payload = block_actions()
    payload["message"]["thread_ts"] = "1718000000.000200"
    payload["channel"]["id"] = payload["container"]["channel_id"] = "C0LAN2Q65"
    assert post_interaction(client, slack_inbox, payload).status_code == 200
    source_id = Message.objects.get().conversation.contact_inbox.source_id
    assert source_id == "C0LAN2Q65:U061F7AUR:1718000000.000200"


def test_a_forged_slack_interaction_is_401_and_stores_nothing(client, slack_inbox):
    body = urlencode({"payload": json.dumps(block_actions())}).encode()
    forged = slack.signed_headers("not-the-signing-secret", body)
    response = post_interaction(client, slack_inbox, None, headers=forged, body=body)
    assert response.status_code == 401
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    "payload",
    [
        block_actions(type="view_submission"),
        block_actions(actions=[{**block_actions()["actions"][0], "action_id": "approve_order"}]),
    ],
    ids=["other-interaction", "other-button"],
)
def test_other_slack_interactions_are_ignored_with_200(client, slack_inbox, payload):
    response = post_interaction(client, slack_inbox, payload)
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [b"payload=%7Bnot-json", b"nothing=here", b"payload=a&payload=b", b"payload=%ff%fe"],
    ids=["bad-json", "no-payload", "two-payloads", "not-utf8"],
)
def test_a_malformed_slack_interaction_is_400_and_stores_nothing(client, slack_inbox, body):
    response = post_interaction(client, slack_inbox, None, body=body)
    assert response.status_code == 400
    assert Message.objects.count() == 0


# ---- API channel -------------------------------------------------------------------------------------------


@pytest.fixture
def receiver():
    with CallbackReceiver() as server:
        yield server


@pytest.fixture
def api_inbox(receiver: CallbackReceiver) -> Inbox:
    return AssistantInboxFactory(inbox__callback_url=receiver.url).inbox


def test_api_channel_event_lists_the_suggestions(api_inbox, receiver):
    message = with_quick_replies(outgoing_message(api_inbox, source_id="customer-7"), QUESTIONS)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [event] = receiver.events
    assert event["json"]["suggestions"] == QUESTIONS
    assert event["json"]["text"] == "Your refund is on its way."


def test_api_channel_event_without_suggestions_is_unchanged(api_inbox, receiver):
    message = outgoing_message(api_inbox, source_id="customer-7")
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [event] = receiver.events
    assert set(event["json"]) == {
        "event",
        "message_id",
        "conversation_id",
        "contact_id",
        "text",
        "sender",
        "created_at",
    }
