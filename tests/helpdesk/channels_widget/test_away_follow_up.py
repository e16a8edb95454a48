"""The e-mail follow-up of an away-hours question (helpdesk.channels.widget.follow_up), against a real SMTP server
(aiosmtpd) on 127.0.0.1: the answer goes to the e-mail the visitor left, through the named e-mail inbox's SMTP
settings, each follow-up threaded under the one before; nothing is mailed for a question asked in hours, without
an e-mail, or through another account's inbox."""

from __future__ import annotations

import email
import email.policy
from typing import Any

import pytest

from helpdesk.channels.registry import channel_for
from helpdesk.models import Inbox, Message
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import UserFactory
from tests.helpdesk.channels_email.support import email_inbox
from tests.helpdesk.channels_widget.support import call, new_visitor, send, widget_inbox
from tests.helpdesk.channels_widget.test_business_hours import ALWAYS_OPEN, closed_now

pytestmark = pytest.mark.django_db


def inboxes(port: int, *, hours: str, **widget_config: Any) -> tuple[Inbox, Inbox]:
    mail = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    chat = widget_inbox(account=mail.account, name="Shop chat")
    chat.provider_config.update(business_hours=hours, follow_up_inbox=str(mail.id), **widget_config)
    chat.save()
    return mail, chat


def visitor_asks(client, inbox: Inbox, *, email_address: str = "ann@example.com") -> Message:
    token = new_visitor(client, inbox)
    if email_address:
        saved = call(client, "POST", inbox, "contact", token=token, body={"email": email_address})
        assert saved.status_code == 200, saved.content
    assert send(client, inbox, token, "Do you ship to Norway?").status_code == 201
    return Message.objects.get(inbox=inbox, message_type=Message.Type.INCOMING)


def answer(question: Message, text: str):
    reply = message_create_agent_reply(conversation=question.conversation, user=UserFactory(), content=text)
    reply = Message.objects.select_related("inbox", "conversation__contact").get(pk=reply.pk)
    return reply, channel_for(reply.inbox).send(reply, timeout=5.0, parts=None)  # type: ignore[arg-type]


def test_the_answer_to_an_away_question_follows_by_e_mail_threaded(client, sink):
    handler, port = sink
    _, chat = inboxes(port, hours=closed_now())
    question = visitor_asks(client, chat)

    first, result = answer(question, "Yes, we ship to Norway.")
    assert result.ok, result.error
    _, result = answer(question, "Delivery takes 3 days.")
    assert result.ok, result.error

    assert [(sender, rcpts) for sender, rcpts, _ in handler.mails] == [
        ("help@shop.example", ["ann@example.com"]),
        ("help@shop.example", ["ann@example.com"]),
    ]
    one, two = (email.message_from_bytes(raw, policy=email.policy.default) for _, _, raw in handler.mails)
    assert one["Subject"] == "Re: Shop chat"
    assert one.get_content().strip() == "Yes, we ship to Norway."
    assert one["Message-ID"] == f"<helpdesk-reply-{first.id}@shop.example>"
    assert two["In-Reply-To"] == one["Message-ID"]
    assert two["References"].split() == [one["Message-ID"]]
    # The reply address is signed for the e-mail inbox, where the answer arrives (it returns to the chat).
    assert one["Reply-To"].addresses[0].addr_spec.startswith(f"help+c{first.conversation_id}-")


def test_a_question_asked_in_business_hours_is_answered_in_the_chat_only(client, sink):
    handler, port = sink
    _, chat = inboxes(port, hours=ALWAYS_OPEN)
    _, result = answer(visitor_asks(client, chat), "Yes.")
    assert result.ok
    assert handler.mails == []


def test_a_visitor_who_left_no_e_mail_gets_no_mail(client, sink):
    handler, port = sink
    _, chat = inboxes(port, hours=closed_now())
    _, result = answer(visitor_asks(client, chat, email_address=""), "Yes.")
    assert result.ok
    assert handler.mails == []


def test_another_accounts_e_mail_inbox_is_never_used_and_the_failure_is_reported(client, sink):
    handler, port = sink
    _, chat = inboxes(port, hours=closed_now())
    stranger = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    assert stranger.account_id != chat.account_id
    chat.provider_config["follow_up_inbox"] = str(stranger.id)
    chat.save()

    _, result = answer(visitor_asks(client, chat), "Yes.")

    assert (result.ok, result.permanent) == (False, True)
    assert "not an e-mail inbox of this account" in (result.error or "")
    assert handler.mails == []
