"""The customer's answer to the rating request, through each channel's signed webhook: native button taps and
plain numbers are ratings of the resolved conversation (stored there, no reopening, no AI), a comment may follow,
and anything else takes the normal path."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from captain.answering.models import ReplyJob
from helpdesk.channels import api_channel, slack, telegram, whatsapp
from helpdesk.models import Conversation, CsatResponse, Inbox, Message
from helpdesk.services.csat import THANKS_ASK_COMMENT, THANKS_FOR_COMMENT, rating_in
from tests.support.fake_provider import Answer
from tests.support.webhook_fixtures import fixture_body, fixture_json

from .conftest import (
    API_CONTACT,
    DM_CONTACT,
    SHEENA,
    SLACK_SECRET,
    TG_CHAT,
    TG_SECRET,
    WA_SECRET,
    conversation_with_customer,
    outgoing_system,
    resolve,
)

pytestmark = pytest.mark.django_db


def post_telegram(client, inbox: Inbox, body: bytes):
    return client.post(
        f"/webhooks/telegram/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers={telegram.SECRET_HEADER: TG_SECRET},
    )


def post_whatsapp(client, inbox: Inbox, body: bytes):
    return client.post(
        f"/webhooks/whatsapp/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers={whatsapp.SIGNATURE_HEADER: whatsapp.sign(WA_SECRET, body)},
    )


def post_slack_interaction(client, inbox: Inbox, body: bytes, *, secret: str = SLACK_SECRET):
    form = urlencode({"payload": body.decode()}).encode()
    return client.post(
        f"/webhooks/slack/{inbox.webhook_token}/",
        data=form,
        content_type="application/x-www-form-urlencoded",
        headers=slack.signed_headers(secret, form),
    )


def post_api(client, inbox: Inbox, text: str, message_id: str, contact_id: str = API_CONTACT):
    body = json.dumps(
        {"message_id": message_id, "contact": {"id": contact_id, "name": "Ann"}, "text": text}
    ).encode()
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=api_channel.signed_headers(inbox.secret, body),
    )


def assert_rated_in_place(conversation: Conversation, response, rating: int, text: str) -> Message:
    """The answer is an incoming message of the resolved conversation, recorded as its rating, not for the AI."""
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "accepted"
    assert response.json()["conversation_id"] == conversation.pk
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED
    assert Conversation.objects.filter(contact_inbox=conversation.contact_inbox).count() == 1
    [message_id] = response.json()["message_ids"]
    message = Message.objects.get(pk=message_id)
    assert message.message_type == Message.Type.INCOMING and message.content == text
    assert not ReplyJob.objects.filter(message=message).exists()
    assert CsatResponse.objects.get(conversation=conversation).rating == rating
    return message


# ---- native buttons, one per channel -------------------------------------------------------------------------


def test_telegram_star_button_rates_and_the_tap_is_answered(
    client, telegram_inbox, provider, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(telegram_inbox, TG_CHAT), django_capture_on_commit_callbacks
    )
    provider.script("/answerCallbackQuery", Answer(200, {"ok": True, "result": True}))
    with django_capture_on_commit_callbacks() as callbacks:
        response = post_telegram(client, telegram_inbox, fixture_body("telegram", "callback_query_csat"))
    message = assert_rated_in_place(conversation, response, 4, "4")
    assert message.provider_message_id == "tg-callback:4382bfdwdsb323b2e1"
    # Telegram shows a spinner on the button until answerCallbackQuery; it is answered after commit.
    for callback in callbacks:
        if "_answer_button_tap" in callback.__qualname__:
            callback()
    [answered] = [r for r in provider.requests if r["path"].endswith("/answerCallbackQuery")]
    assert answered["json"] == {"callback_query_id": "4382bfdwdsb323b2e1", "text": "⭐⭐⭐⭐"}
    assert [m.content for m in outgoing_system(conversation)][1:] == [THANKS_ASK_COMMENT]

    # Telegram re-delivers the update: a duplicate, nothing new.
    again = post_telegram(client, telegram_inbox, fixture_body("telegram", "callback_query_csat"))
    assert again.json()["status"] == "duplicate"
    assert Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING).count() == 2
    assert outgoing_system(conversation).count() == 2


def test_telegram_other_callback_queries_are_still_ignored(client, telegram_inbox):
    response = post_telegram(client, telegram_inbox, fixture_body("telegram", "callback_query"))
    assert response.json()["status"] == "ignored"
    assert not Message.objects.exists()


def test_whatsapp_list_choice_rates(client, whatsapp_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(whatsapp_inbox, SHEENA), django_capture_on_commit_callbacks
    )
    response = post_whatsapp(client, whatsapp_inbox, fixture_body("whatsapp", "interactive_list_reply_csat"))
    assert_rated_in_place(conversation, response, 5, "5")


def test_slack_star_button_rates(client, slack_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(slack_inbox, DM_CONTACT), django_capture_on_commit_callbacks
    )
    response = post_slack_interaction(
        client, slack_inbox, fixture_body("slack_interactivity", "block_actions_csat")
    )
    message = assert_rated_in_place(conversation, response, 2, "2")
    assert message.provider_message_id == "slack-action:U061F7AUR:1718000960.654321"


def test_a_forged_slack_rating_is_401_and_records_nothing(
    client, slack_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(slack_inbox, DM_CONTACT), django_capture_on_commit_callbacks
    )
    body = fixture_body("slack_interactivity", "block_actions_csat")
    response = post_slack_interaction(client, slack_inbox, body, secret="not-the-signing-secret")
    assert response.status_code == 401
    assert not CsatResponse.objects.exists()
    assert Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING).count() == 1


def test_a_slack_rating_button_with_a_foreign_value_is_ignored(client, slack_inbox):
    payload = fixture_json("slack_interactivity", "block_actions_csat")
    payload["actions"][0]["value"] = "9"
    response = post_slack_interaction(client, slack_inbox, json.dumps(payload).encode())
    assert response.json()["status"] == "ignored"


# ---- plain numbers and comments (every channel; shown on the API channel and WhatsApp text) -------------------


def test_a_typed_number_rates_then_the_next_text_is_the_comment(
    client, api_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert_rated_in_place(conversation, post_api(client, api_inbox, "4", "m-rate"), 4, "4")

    comment = post_api(client, api_inbox, "Quick and friendly, thanks!", "m-comment")
    assert comment.json()["conversation_id"] == conversation.pk
    csat = CsatResponse.objects.get(conversation=conversation)
    assert (csat.rating, csat.comment) == (4, "Quick and friendly, thanks!")
    assert [m.content for m in outgoing_system(conversation)][1:] == [THANKS_ASK_COMMENT, THANKS_FOR_COMMENT]

    # Once commented, the next message is a new question: the normal path (this inbox starts a new conversation)
    # and the AI answers it.
    later = post_api(client, api_inbox, "Also, can I change my address?", "m-new")
    assert later.json()["conversation_id"] != conversation.pk
    new_message = Message.objects.get(pk=later.json()["message_ids"][0])
    assert ReplyJob.objects.filter(message=new_message).exists()
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED


def test_whatsapp_typed_stars_rate(client, whatsapp_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(whatsapp_inbox, SHEENA), django_capture_on_commit_callbacks
    )
    payload = fixture_json("whatsapp", "text_message")
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["text"]["body"] = "⭐️⭐️⭐️"
    response = post_whatsapp(client, whatsapp_inbox, json.dumps(payload).encode())
    assert_rated_in_place(conversation, response, 3, "⭐️⭐️⭐️")


def test_a_second_rating_changes_it_and_asks_nothing_more(
    client, api_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    post_api(client, api_inbox, "3", "m-1")
    assert_rated_in_place(conversation, post_api(client, api_inbox, "5/5", "m-2"), 5, "5/5")
    assert outgoing_system(conversation).count() == 2  # the request and one thank-you
    assert Message.objects.filter(
        conversation=conversation, content="The customer changed their rating from 3/5 to 5/5."
    ).exists()


def test_a_message_that_is_not_a_rating_takes_the_normal_path(
    client, api_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    response = post_api(client, api_inbox, "2 questions about my order", "m-q")
    assert response.json()["conversation_id"] != conversation.pk
    assert not CsatResponse.objects.exists()


def test_reopen_inbox_a_non_rating_reopens_but_a_rating_does_not(
    client, api_inbox, django_capture_on_commit_callbacks
):
    api_inbox.after_resolution = Inbox.AfterResolution.REOPEN
    api_inbox.save()
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert_rated_in_place(conversation, post_api(client, api_inbox, "1", "m-rate"), 1, "1")
    post_api(client, api_inbox, "It still does not work", "m-comment")  # the comment: still resolved
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED
    response = post_api(client, api_inbox, "Hello? Anyone?", "m-again")
    assert response.json()["conversation_id"] == conversation.pk
    conversation.refresh_from_db()
    assert conversation.status != Conversation.Status.RESOLVED  # reopened by the inbox's policy


def test_a_late_rating_takes_the_normal_path(client, api_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        csat_requested_at=timezone.now() - timedelta(days=8)
    )
    response = post_api(client, api_inbox, "5", "m-late")
    assert response.json()["conversation_id"] != conversation.pk
    assert not CsatResponse.objects.exists()


def test_a_late_comment_takes_the_normal_path(client, api_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    post_api(client, api_inbox, "4", "m-rate")
    CsatResponse.objects.update(created_at=timezone.now() - timedelta(hours=1))
    response = post_api(client, api_inbox, "Where is my parcel?", "m-q")
    assert response.json()["conversation_id"] != conversation.pk
    assert CsatResponse.objects.get().comment == ""


def test_only_the_contacts_own_last_conversation_is_rated(
    client, api_inbox, django_capture_on_commit_callbacks
):
    resolved = resolve(conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks)
    # Another customer's "5" is theirs: no rating for someone else's conversation.
    other = post_api(client, api_inbox, "5", "m-other", contact_id="customer-8")
    assert other.json()["conversation_id"] != resolved.pk
    # The customer has a newer open conversation: their "5" belongs there.
    newer = post_api(client, api_inbox, "Hi again", "m-newer")
    again = post_api(client, api_inbox, "5", "m-5")
    assert again.json()["conversation_id"] == newer.json()["conversation_id"] != resolved.pk
    assert not CsatResponse.objects.exists()


def test_a_message_with_a_file_is_never_taken_as_a_rating(
    client, whatsapp_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(whatsapp_inbox, SHEENA), django_capture_on_commit_callbacks
    )
    payload = fixture_json("whatsapp", "image_with_caption")
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["image"]["caption"] = "5"
    response = post_whatsapp(client, whatsapp_inbox, json.dumps(payload).encode())
    assert response.json()["conversation_id"] != conversation.pk
    assert not CsatResponse.objects.exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        (" 4 ", 4),
        ("4/5", 4),
        ("3 / 5", 3),
        ("2 stars", 2),
        ("1 star", 1),
        ("5!", 5),
        ("4 ⭐", 4),
        ("⭐⭐⭐", 3),
        ("⭐️⭐️", 2),
        ("★★★★★", 5),
        ("0", None),
        ("6", None),
        ("45", None),
        ("4.5", None),
        ("5 but the bot was slow", None),
        ("2 questions about my order", None),
        ("⭐⭐⭐⭐⭐⭐", None),
        ("", None),
    ],
)
def test_what_counts_as_a_rating(text, expected):
    assert rating_in(text) == expected


def _typed(channel: str, text: str) -> bytes:
    """The channel's ordinary text-message fixture with `text` as what the customer typed."""
    payload = fixture_json(channel, "text_message" if channel != "slack" else "message")
    if channel == "telegram":
        payload["message"]["text"] = text
    elif channel == "whatsapp":
        payload["entry"][0]["changes"][0]["value"]["messages"][0]["text"]["body"] = text
    else:
        payload["event"]["text"] = text
    return json.dumps(payload).encode()


def test_a_typed_number_rates_on_every_provider_channel(
    client, telegram_inbox, whatsapp_inbox, slack_inbox, django_capture_on_commit_callbacks
):
    telegram_conversation = resolve(
        conversation_with_customer(telegram_inbox, TG_CHAT), django_capture_on_commit_callbacks
    )
    response = post_telegram(client, telegram_inbox, _typed("telegram", "5"))
    assert_rated_in_place(telegram_conversation, response, 5, "5")

    whatsapp_conversation = resolve(
        conversation_with_customer(whatsapp_inbox, SHEENA), django_capture_on_commit_callbacks
    )
    response = post_whatsapp(client, whatsapp_inbox, _typed("whatsapp", "3/5"))
    assert_rated_in_place(whatsapp_conversation, response, 3, "3/5")

    slack_conversation = resolve(
        conversation_with_customer(slack_inbox, DM_CONTACT), django_capture_on_commit_callbacks
    )
    body = _typed("slack", "1")
    response = client.post(
        f"/webhooks/slack/{slack_inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=slack.signed_headers(SLACK_SECRET, body),
    )
    assert_rated_in_place(slack_conversation, response, 1, "1")
