"""The widget's away hours end to end with real parts (tests/e2e/conftest.py): outside the inbox's business hours
a visitor leaves their e-mail and asks in the widget (through Django's visitor API); a real Celery worker answers
with the scripted model server through the normal AI pipeline; the answer shows in the chat and follows by e-mail
over SMTP to a real SMTP server (aiosmtpd) on 127.0.0.1. The visitor answers that mail from their mail client
(a Mailgun delivery to the e-mail inbox): it returns to the chat, and the AI's answer to it is mailed, threaded.
An agent's later answer follows too, threaded under the mails before."""

from __future__ import annotations

import email
import email.policy

import pytest
from django.db import transaction

from helpdesk.models import Conversation, Message
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import AssistantInboxFactory, UserFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_threading import thread_fixture
from tests.helpdesk.channels_widget.support import call, new_visitor, send, widget_inbox
from tests.helpdesk.channels_widget.test_business_hours import closed_now
from tests.support.servers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPLY = "Yes, we ship to Norway; it takes three days."
OFFICE = "We will send it to your office."
VISITOR = "ann.lee@gmail.com"  # the sender of the reply fixture


def test_an_away_hours_question_gets_the_ai_answer_and_the_agents_by_e_mail_threaded(client, mail_stack):
    mail_inbox = email_inbox(**mail_stack.smtp_config())
    chat = widget_inbox(account=mail_inbox.account, name="Shop chat")
    chat.provider_config.update(
        business_hours=closed_now(), follow_up_inbox=str(mail_inbox.id), away_message="Back at 9."
    )
    chat.save()
    AssistantInboxFactory(inbox=chat, assistant__account=chat.account)
    mail_stack.answers.update({"office": OFFICE, "Norway": REPLY})

    token = new_visitor(client, chat)
    session = call(client, "POST", chat, "session", token=token).json()
    assert (session["away"], session["away_message"], session["ask_email"]) == (True, "Back at 9.", True)
    assert call(client, "POST", chat, "contact", token=token, body={"email": VISITOR}).status_code == 200
    assert send(client, chat, token, "Do you ship to Norway?").status_code == 201

    sink, log = mail_stack.sink, mail_stack.worker.log
    wait_for(lambda: sink.mails, timeout=90, what=f"the AI's answer by e-mail; worker log:\n{log()}")
    ai_reply = Message.objects.get(inbox=chat, message_type=Message.Type.OUTGOING, content=REPLY)
    shown = call(client, "GET", chat, "messages", token=token).json()["messages"]
    assert [m["text"] for m in shown if not m["incoming"]] == [REPLY]  # the chat shows it too

    # Ann answers the mail from Gmail: it returns to the chat, and the AI's answer to it is mailed.
    answer_mail = thread_fixture("gmail_reply_to_us", REPLY_ID=ai_reply.id, REPLY_TO="help@shop.example")
    assert post(client, mail_inbox, signed_fields(answer_mail)).status_code == 200
    assert not Conversation.objects.filter(inbox=mail_inbox).exists()
    wait_for(
        lambda: len(sink.mails) > 1, timeout=60, what=f"the AI's answer to the mail; worker log:\n{log()}"
    )

    with transaction.atomic():
        message_create_agent_reply(
            conversation=ai_reply.conversation, user=UserFactory(), content="Your parcel can leave today."
        )
    wait_for(
        lambda: len(sink.mails) > 2, timeout=60, what=f"the agent's answer by e-mail; worker log:\n{log()}"
    )

    first, second, third = (
        email.message_from_bytes(raw, policy=email.policy.default) for _, _, raw in sink.mails
    )
    assert [rcpts for _, rcpts, _ in sink.mails] == [[VISITOR]] * 3
    assert first.get_content().strip() == REPLY
    assert first["Message-ID"] == f"<helpdesk-reply-{ai_reply.id}@shop.example>"
    assert second.get_content().strip() == OFFICE
    assert second["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-thread@mail.gmail.com>"  # Ann's mail
    assert third.get_content().strip() == "Your parcel can leave today."
    assert third["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-thread@mail.gmail.com>"
    assert {first["Message-ID"], second["Message-ID"]} <= set(third["References"].split())
    texts = [m["text"] for m in call(client, "GET", chat, "messages", token=token).json()["messages"]]
    assert texts[-3:] == [
        "Thanks! Can you send it to my office instead?",
        OFFICE,
        "Your parcel can leave today.",
    ]
