"""A visitor's reply to an away-hours follow-up mail returns to the widget chat it follows up
(helpdesk.channels.email.threading, `followed_conversations`), against a real SMTP server (aiosmtpd) on
127.0.0.1: the follow-up is really sent, and the reply is built from what the visitor's mail client got (its
Message-ID, its Reply-To). Threading stays as strict as for e-mail: only the visitor's own chat, by our
Message-ID or the signed reply address, and only while the chat sends its follow-ups through this inbox."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from captain.answering.models import ReplyJob
from helpdesk.channels.base import InboundContact, InboundMessage, Thread
from helpdesk.channels.email.mime import ParsedMail
from helpdesk.channels.email.threading import thread_of
from helpdesk.channels.widget import visitor_token
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.services.messages import message_ingest
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.test_mime import FIXTURES
from tests.helpdesk.channels_email.test_threading import deliver, thread_fixture
from tests.helpdesk.channels_widget.support import call
from tests.helpdesk.channels_widget.test_away_follow_up import answer, inboxes, visitor_asks
from tests.helpdesk.channels_widget.test_business_hours import ALWAYS_OPEN, closed_now
from tests.support.row_state import rolled_back

pytestmark = pytest.mark.django_db

VISITOR = "ann.lee@gmail.com"  # the sender of the reply fixtures


def sent(handler, index: int = -1) -> EmailMessage:
    mail = email.message_from_bytes(handler.mails[index][2], policy=email.policy.default)
    assert isinstance(mail, EmailMessage)
    return mail


def followed_up(client, sink) -> tuple[Inbox, Inbox, Message, Message]:
    """Ann asked in the chat away-hours and left her e-mail; an agent's answer was mailed to her.
    (the e-mail inbox, the chat inbox, her question, the answer)."""
    handler, port = sink
    mail_inbox, chat = inboxes(port, hours=closed_now())
    question = visitor_asks(client, chat, email_address=VISITOR)
    reply, result = answer(question, "Your parcel left our warehouse today.")
    assert result.ok, result.error
    assert sent(handler)["Message-ID"] == f"<helpdesk-reply-{reply.id}@shop.example>"
    return mail_inbox, chat, question, reply


def test_a_reply_to_the_follow_up_mail_returns_to_the_chat_and_its_answer_is_mailed(client, sink):
    handler, _ = sink
    mail_inbox, chat, question, reply = followed_up(client, sink)

    message = deliver(
        client, mail_inbox, thread_fixture("gmail_reply_to_us", REPLY_ID=reply.id, REPLY_TO="x")
    )

    assert (message.conversation_id, message.inbox_id) == (question.conversation_id, chat.id)
    assert message.content == "Thanks! Can you send it to my office instead?"
    assert not Conversation.objects.filter(inbox=mail_inbox).exists()  # no stray e-mail conversation
    token = visitor_token(inbox_id=chat.id, source_id=question.conversation.contact_inbox.source_id)
    shown = call(client, "GET", chat, "messages", token=token).json()["messages"]
    assert "Thanks! Can you send it to my office instead?" in [m["text"] for m in shown]  # the chat shows it

    # In business hours now: the answer to a question that came by e-mail still goes by e-mail, threaded.
    chat.provider_config["business_hours"] = ALWAYS_OPEN
    chat.save()
    answer(message, "Done: it goes to your office.")
    assert len(handler.mails) == 2
    second = sent(handler)
    assert second["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-thread@mail.gmail.com>"
    assert f"<helpdesk-reply-{reply.id}@shop.example>" in second["References"].split()
    assert handler.mails[-1][1] == [VISITOR]


def test_a_reply_without_headers_returns_to_the_chat_by_the_signed_reply_address(client, sink):
    handler, _ = sink
    mail_inbox, chat, question, _ = followed_up(client, sink)
    reply_to = sent(handler)["Reply-To"].addresses[0].addr_spec
    assert reply_to.startswith(f"help+c{question.conversation_id}-")

    message = deliver(client, mail_inbox, thread_fixture("webmail_no_headers", REPLY_TO=reply_to))

    assert (message.conversation_id, message.inbox_id) == (question.conversation_id, chat.id)


def test_someone_else_replying_with_the_same_headers_and_address_starts_an_e_mail_conversation(client, sink):
    handler, _ = sink
    mail_inbox, _, question, reply = followed_up(client, sink)
    reply_to = sent(handler)["Reply-To"].addresses[0].addr_spec
    for raw in (
        thread_fixture("gmail_reply_to_us", REPLY_ID=reply.id, REPLY_TO="x"),
        thread_fixture("webmail_no_headers", REPLY_TO=reply_to),
    ):
        message = deliver(client, mail_inbox, raw.replace(VISITOR.encode(), b"eve@evil.example"))
        assert message.inbox_id == mail_inbox.id
        assert message.conversation_id != question.conversation_id
    assert Message.objects.filter(conversation=question.conversation).count() == 2  # question and answer


def test_a_chat_that_no_longer_sends_its_follow_ups_here_is_not_continued(client, sink):
    mail_inbox, chat, question, reply = followed_up(client, sink)
    chat.provider_config["follow_up_inbox"] = ""
    chat.save()

    message = deliver(
        client, mail_inbox, thread_fixture("gmail_reply_to_us", REPLY_ID=reply.id, REPLY_TO="x")
    )

    assert message.inbox_id == mail_inbox.id
    assert message.conversation_id != question.conversation_id


def test_a_forged_reply_address_for_the_chat_starts_an_e_mail_conversation(client, sink):
    mail_inbox, _, question, _ = followed_up(client, sink)
    forged = f"help+c{question.conversation_id}-{'0' * 24}@shop.example"

    message = deliver(client, mail_inbox, thread_fixture("webmail_no_headers", REPLY_TO=forged))

    assert message.inbox_id == mail_inbox.id
    assert message.conversation_id != question.conversation_id


def test_the_ingest_service_checks_again_that_the_sender_is_the_chats_visitor(client, sink):
    """Even a Thread naming the chat (as a channel would after a race) is not followed for another sender:
    helpdesk.services.messages checks the contact's e-mail itself."""
    mail_inbox, chat, question, _ = followed_up(client, sink)
    thread = Thread(
        conversation_id=question.conversation_id,
        how="references",
        inbox_id=chat.id,
        source_id=question.conversation.contact_inbox.source_id,
    )
    inbound = InboundMessage(
        provider_message_id="<eve-1@evil.example>",
        contact=InboundContact(source_id="eve@evil.example", email="eve@evil.example"),
        text="Send it to me instead.",
        thread=thread,
    )

    stored = message_ingest(inbox=mail_inbox, inbound=inbound).message

    assert stored.inbox_id == mail_inbox.id
    assert stored.conversation_id != question.conversation_id


def test_replies_by_mail_into_the_chat_count_against_the_e_mail_inboxs_ai_limit(client, sink, redis_url):
    """An auto-responder that does not say it is one, answering every follow-up mail, would otherwise loop with
    the AI through the chat (whose own channel has no limit)."""
    mail_inbox, chat, question, reply = followed_up(client, sink)
    AssistantInboxFactory(inbox=chat, assistant__account=chat.account)
    Conversation.objects.filter(pk=question.conversation_id).update(status=Conversation.Status.PENDING)
    mail_inbox.provider_config["ai_replies_per_hour"] = "1"
    mail_inbox.save()
    first = thread_fixture("gmail_reply_to_us", REPLY_ID=reply.id, REPLY_TO="x")
    second = first.replace(b"gmail-thread@", b"gmail-thread-2@")

    deliver(client, mail_inbox, first)
    later = deliver(client, mail_inbox, second)

    assert later.conversation_id == question.conversation_id
    assert list(ReplyJob.objects.values_list("message__provider_message_id", flat=True)) == [
        "<CAF=k2pT3x7Q+gmail-thread@mail.gmail.com>"
    ]
    later.conversation.refresh_from_db()
    assert later.conversation.status == Conversation.Status.OPEN


@hsettings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sender=st.emails(), right_headers=st.booleans(), right_token=st.booleans())
def test_no_other_sender_reaches_the_chat_whatever_headers_and_address_they_copy(
    client, sink, sender, right_headers, right_token
):
    """Fuzz: any sender but the visitor, with our real Message-ID and/or the real signed reply address of the
    follow-up, is threaded nowhere near the chat."""
    with rolled_back():
        handler, _ = sink
        mail_inbox, _, question, reply = followed_up(client, sink)
        reply_to = sent(handler)["Reply-To"].addresses[0].addr_spec
        mail = ParsedMail(
            message_id="<fuzz@example.org>",
            sender=sender.lower(),
            sender_name="",
            subject="Re: Shop chat",
            text="hello",
            in_reply_to=f"<helpdesk-reply-{reply.id}@shop.example>" if right_headers else "",
            references=(f"<helpdesk-reply-{reply.id}@shop.example>",) if right_headers else (),
            automated="",
            recipients=(reply_to,) if right_token else (),
        )
        thread = thread_of(mail_inbox, mail)
        if sender.lower() == VISITOR:
            return  # the visitor herself: that is the threading the other tests check
        assert thread.conversation_id != question.conversation_id
        assert thread.inbox_id is None


def test_the_visitors_out_of_office_answer_to_a_follow_up_is_kept_in_the_chat_and_never_answered(
    client, sink
):
    handler, _ = sink
    mail_inbox, chat, question, reply = followed_up(client, sink)
    AssistantInboxFactory(inbox=chat, assistant__account=chat.account)
    Conversation.objects.filter(pk=question.conversation_id).update(status=Conversation.Status.PENDING)
    vacation = (FIXTURES / "automated" / "gmail_vacation.eml").read_bytes()

    message = deliver(
        client, mail_inbox, vacation.replace(b"helpdesk-reply-10@", f"helpdesk-reply-{reply.id}@".encode())
    )

    assert (message.conversation_id, message.inbox_id) == (question.conversation_id, chat.id)
    assert ReplyJob.objects.count() == 0
    assert len(handler.mails) == 1  # only the follow-up itself
