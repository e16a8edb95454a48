"""Sending a WhatsApp template on a conversation: the variables are checked, the message people read is the
filled body, and the delivery sends Meta's template message (exact JSON) once, to a Graph server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery.exceptions import Retry

from helpdesk.models import Conversation, Delivery, Inbox, Message, WhatsAppTemplate
from helpdesk.services.whatsapp_templates import TemplateRefused, whatsapp_template_send
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, UserFactory
from tests.support.fake_provider import FakeProvider, http_500
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db

PHONE_NUMBER_ID = "106540352242922"
SHEENA = "16505551234"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def conversation(provider: FakeProvider) -> Conversation:
    inbox = AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.WHATSAPP,
        inbox__access_token="EAAGm0PX4ZCpsBAKZCZA0ZD",
        inbox__provider_config={"phone_number_id": PHONE_NUMBER_ID, "api_base_url": provider.base_url},
    ).inbox
    conversation = ConversationFactory(contact_inbox__inbox=inbox, contact_inbox__source_id=SHEENA)
    MessageFactory(conversation=conversation, content="Where is my parcel?")
    return conversation


@pytest.fixture
def template(conversation: Conversation) -> WhatsAppTemplate:
    return WhatsAppTemplate.objects.create(
        inbox=conversation.inbox, name="order_update", language="en_US", body="Hi {{1}}, order {{2}} shipped."
    )


def test_template_reply_reads_filled_and_goes_out_as_a_template(
    conversation: Conversation, template: WhatsAppTemplate, provider: FakeProvider
) -> None:
    agent = UserFactory()
    message = whatsapp_template_send(
        conversation=conversation, template=template, variables=["Ann", "#42"], by=agent
    )
    assert message.content == "Hi Ann, order #42 shipped."
    assert (message.message_type, message.sender_user) == (Message.Type.OUTGOING, agent)
    assert message.whatsapp_template_send.values == ["Ann", "#42"]
    provider.script("/messages", http_500())
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert message_deliver.apply(args=[message.id]).get() == "skipped"  # a duplicate task sends nothing
    assert len(provider.requests) == 2  # the failed try and the accepted one: never twice to the customer
    assert provider.requests[-1]["json"] == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": SHEENA,
        "type": "template",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": [
                {
                    "type": "body",
                    "parameters": [{"type": "text", "text": "Ann"}, {"type": "text", "text": "#42"}],
                }
            ],
        },
    }
    assert delivery_of(message).status == Delivery.Status.SENT
    assert delivery_of(message).provider_message_id == "wamid.FAKE00000001"


@pytest.mark.parametrize(
    ("variables", "error"),
    [
        (["Ann"], "needs 2 values, 1 given"),
        (["Ann", "#42", "x"], "needs 2 values, 3 given"),
        (["Ann", " "], "filled"),
    ],
)
def test_wrong_variables_are_refused_and_nothing_is_stored(
    conversation: Conversation, template: WhatsAppTemplate, variables: list[str], error: str
) -> None:
    with pytest.raises(TemplateRefused, match=error):
        whatsapp_template_send(
            conversation=conversation, template=template, variables=variables, by=UserFactory()
        )
    assert not conversation.messages.filter(message_type=Message.Type.OUTGOING).exists()


def test_unapproved_or_another_inbox_template_refused(
    conversation: Conversation, template: WhatsAppTemplate
) -> None:
    template.status = WhatsAppTemplate.Status.PENDING
    template.save()
    with pytest.raises(TemplateRefused, match="approved"):
        whatsapp_template_send(
            conversation=conversation, template=template, variables=["a", "b"], by=UserFactory()
        )
    other = WhatsAppTemplate.objects.create(
        inbox=AssistantInboxFactory(inbox__channel_type=Inbox.ChannelType.WHATSAPP).inbox,
        name="x",
        language="en_US",
        body="Hello",
    )
    with pytest.raises(TemplateRefused, match="another inbox"):
        whatsapp_template_send(conversation=conversation, template=other, variables=[], by=UserFactory())
