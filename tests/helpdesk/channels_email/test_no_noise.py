"""No noise in e-mail: automated mail from real clients and servers (tests/fixtures/email/automated/: Outlook's and
Gmail's out-of-office answers, a Postfix bounce, an Exchange non-delivery report, a cPanel auto-responder, a
newsletter) is stored for people and never answered; a contact gets at most the inbox's number of AI replies an
hour (helpdesk.services.rate_limits.ai_reply_limit_check, counted in the real test Redis), then their mail waits
for a person; an e-mail reply may be longer than a chat message."""

from __future__ import annotations

import pytest

from captain.answering.models import ReplyJob
from helpdesk.channels.email.channel import AI_REPLIES_PER_CONTACT_PER_HOUR
from helpdesk.channels.email.mime import parse_mail
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.services.inbox_channel import message_text_limit
from helpdesk.services.rate_limits import ai_reply_limit_for
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import FIXTURES

pytestmark = pytest.mark.django_db

AUTOMATED = {
    "outlook_out_of_office": "Auto-Submitted: auto-generated",
    "gmail_vacation": "Auto-Submitted: auto-replied",
    "postfix_bounce": "Auto-Submitted: auto-replied",
    "exchange_ndr": "delivery status notification",
    "cpanel_autoresponder": "Precedence: auto_reply",
    "newsletter_bulk": "Precedence: bulk",
}


def automated(name: str) -> bytes:
    return (FIXTURES / "automated" / f"{name}.eml").read_bytes()


def person_mail(n: int, sender: str = "ann.lee@gmail.com") -> bytes:
    return (
        f"From: Ann Lee <{sender}>\r\nTo: help@shop.example\r\nSubject: Question {n}\r\n"
        f"Message-ID: <q{n}-{sender}>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nQuestion number {n}?\r\n"
    ).encode()


@pytest.fixture
def inbox(redis_url) -> Inbox:
    return AssistantInboxFactory(inbox=email_inbox()).inbox


@pytest.mark.parametrize(("name", "reason"), AUTOMATED.items())
def test_automated_mail_of_real_clients_is_recognised(name, reason):
    assert parse_mail(automated(name)).automated == reason


@pytest.mark.parametrize("name", AUTOMATED)
def test_automated_mail_is_stored_for_people_and_never_handed_to_the_ai(client, inbox, name):
    response = post(client, inbox, signed_fields(automated(name)))

    assert response.status_code == 200, response.content
    message = Message.objects.get(inbox=inbox)
    assert message.content.strip()  # the text is kept for people to read
    assert ReplyJob.objects.count() == 0
    assert message.conversation.status == Conversation.Status.OPEN


def test_a_contact_gets_at_most_the_inboxs_ai_replies_an_hour_then_people_answer(client, inbox):
    inbox.provider_config["ai_replies_per_hour"] = "2"
    inbox.save()

    for n in range(3):
        assert post(client, inbox, signed_fields(person_mail(n))).status_code == 200

    handed = ReplyJob.objects.values_list("message__content", flat=True)
    assert sorted(handed) == ["Question number 0?", "Question number 1?"]
    third = Message.objects.get(inbox=inbox, content="Question number 2?")
    assert third.conversation.status == Conversation.Status.OPEN  # waits for a person
    assert third.conversation.messages.filter(
        message_type=Message.Type.ACTIVITY, content__contains="as often as the inbox allows"
    ).exists()

    # Another customer is not held back by Ann's count.
    assert post(client, inbox, signed_fields(person_mail(9, sender="bob@example.com"))).status_code == 200
    assert ReplyJob.objects.filter(message__content="Question number 9?").count() == 1


def test_the_limit_defaults_for_e_mail_only_and_zero_switches_it_off():
    mail = email_inbox()
    chat = InboxFactory(channel_type=Inbox.ChannelType.API)
    assert ai_reply_limit_for(mail) == AI_REPLIES_PER_CONTACT_PER_HOUR
    assert ai_reply_limit_for(chat) == 0
    mail.provider_config["ai_replies_per_hour"] = "0"
    assert ai_reply_limit_for(mail) == 0


def test_no_limit_means_every_mail_goes_to_the_ai(client, inbox):
    inbox.provider_config["ai_replies_per_hour"] = "0"
    inbox.save()
    for n in range(AI_REPLIES_PER_CONTACT_PER_HOUR + 2):
        assert post(client, inbox, signed_fields(person_mail(n))).status_code == 200
    assert ReplyJob.objects.count() == AI_REPLIES_PER_CONTACT_PER_HOUR + 2


def test_an_e_mail_reply_may_be_longer_than_any_chat_message():
    email_limit = message_text_limit(channel_type=Inbox.ChannelType.EMAIL)
    chat_limits = [
        message_text_limit(channel_type=kind)
        for kind in (Inbox.ChannelType.TELEGRAM, Inbox.ChannelType.WHATSAPP, Inbox.ChannelType.SLACK)
    ]
    assert email_limit is not None
    assert all(limit is not None and email_limit > limit for limit in chat_limits)
