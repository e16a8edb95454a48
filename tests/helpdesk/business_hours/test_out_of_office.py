"""Out-of-office replies: a customer handed to people outside the inbox's business hours is told when someone
will reply (the next opening, in the hours' time zone and the inbox's language), once per closed period; inside
business hours, or without hours, nothing is added."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from helpdesk.business_hours import DAYS
from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.services.conversations import conversation_escalate
from helpdesk.services.messages import message_ingest
from helpdesk.services.out_of_office import out_of_office_claim
from tests.factories import ConversationFactory, InboxFactory

pytestmark = pytest.mark.django_db


def closed_now() -> str:
    """Hours with no minute today or in the next two days, in any time zone: closed for the whole test."""
    return f"{DAYS[(datetime.now(UTC).weekday() + 3) % 7]} 09:00-17:00"


def away_inbox(**config: str) -> Inbox:
    return InboxFactory(
        provider_config={"business_hours": closed_now(), "time_zone": "Europe/Berlin", **config}
    )


def system_texts(conversation: Conversation) -> list[str]:
    return list(
        conversation.messages.filter(sender_type=Message.SenderType.SYSTEM).values_list("content", flat=True)
    )


def test_an_ai_handoff_at_night_says_when_people_reply_and_only_once():
    inbox = away_inbox(away_message="Our team works weekdays.")
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    message = conversation_escalate(
        conversation=conversation, reason="wants a person", customer_message="A colleague will take over."
    )
    assert message is not None
    assert message.content.startswith("A colleague will take over.\n\nOur team works weekdays.\n\n")
    assert "someone will reply from" in message.content and "(Europe/Berlin)" in message.content
    # Handed back and handed over again the same night: the customer already knows.
    again = conversation_escalate(
        conversation=conversation, reason="again", customer_message="Passing you on."
    )
    assert again is not None and again.content == "Passing you on."


def test_inside_business_hours_the_handoff_message_is_unchanged():
    inbox = InboxFactory(provider_config={"business_hours": "mon-sun 00:00-24:00"})
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    message = conversation_escalate(
        conversation=conversation, reason="r", customer_message="A colleague will help."
    )
    assert message is not None and message.content == "A colleague will help."
    assert Conversation.objects.get(pk=conversation.pk).away_replied_at is None


def test_a_message_to_an_inbox_without_ai_at_night_gets_the_away_reply_once():
    inbox = away_inbox()
    for n in range(3):
        message_ingest(inbox=inbox, inbound=InboundMessage(f"m{n}", InboundContact("c1"), f"hello {n}"))
    conversation = Conversation.objects.get(inbox=inbox)
    texts = system_texts(conversation)
    assert len(texts) == 1 and texts[0].startswith("We are away right now; someone will reply from ")


def test_an_automated_mail_gets_no_away_reply():
    inbox = away_inbox()
    inbound = InboundMessage("bounce-1", InboundContact("c1"), "Delivery failed", automated="bounce")
    message_ingest(inbox=inbox, inbound=inbound)
    assert system_texts(Conversation.objects.get(inbox=inbox)) == []


def test_the_away_reply_is_in_the_inboxs_language():
    inbox = away_inbox()
    inbox.language = "zh-hans"
    inbox.save(update_fields=["language"])
    message_ingest(inbox=inbox, inbound=InboundMessage("m1", InboundContact("c1"), "你好"))
    (text,) = system_texts(Conversation.objects.get(inbox=inbox))
    assert "我们现在不在工作时间" in text and "Europe/Berlin" in text


def test_once_per_closed_period_and_again_in_the_next_one():
    inbox = InboxFactory(provider_config={"business_hours": "mon-fri 09:00-17:00", "time_zone": "UTC"})
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    monday_night = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
    assert out_of_office_claim(conversation=conversation, at=monday_night)
    assert out_of_office_claim(conversation=conversation, at=monday_night.replace(hour=23)) == ""
    assert (
        out_of_office_claim(conversation=conversation, at=datetime(2026, 12, 1, 12, 0, tzinfo=UTC)) == ""
    )  # open
    tuesday_night = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
    assert "Wednesday" in out_of_office_claim(conversation=conversation, at=tuesday_night)
