"""The texts the AI sends customers by default (the handoff and resolution messages) are in the inbox's language;
a builder's own text is sent as written."""

from __future__ import annotations

import pytest

from captain.answering.services.outcomes import handoff_message_for
from captain.assistants.models import DEFAULT_HANDOFF_MESSAGE, DEFAULT_RESOLUTION_MESSAGE, customer_text
from tests.factories import AssistantFactory, ConversationFactory

pytestmark = [pytest.mark.django_db]


def test_a_chinese_inbox_gets_the_default_handoff_message_in_chinese():
    assistant = AssistantFactory(handoff_message=DEFAULT_HANDOFF_MESSAGE)
    conversation = ConversationFactory(contact_inbox__inbox__language="zh-hans")
    assert (
        handoff_message_for(conversation, assistant) == "正在为您转接我们团队的同事，他们很快会在这里回复您。"
    )
    conversation.inbox.language = "en"
    assert handoff_message_for(conversation, assistant).startswith("I'm connecting you with a member")


def test_a_builders_own_text_and_the_inboxs_own_text_are_sent_as_written():
    assistant = AssistantFactory(handoff_message="Un momento, por favor.")
    conversation = ConversationFactory(contact_inbox__inbox__language="zh-hans")
    assert handoff_message_for(conversation, assistant) == "Un momento, por favor."
    conversation.inbox.handoff_message = "稍等，马上为您转人工。"
    assert handoff_message_for(conversation, AssistantFactory()) == "稍等，马上为您转人工。"


def test_the_default_resolution_message_follows_the_language():
    assert customer_text(DEFAULT_RESOLUTION_MESSAGE, DEFAULT_RESOLUTION_MESSAGE, "zh-hans").startswith(
        "很高兴"
    )
    assert (
        customer_text(DEFAULT_RESOLUTION_MESSAGE, DEFAULT_RESOLUTION_MESSAGE, "en")
        == DEFAULT_RESOLUTION_MESSAGE
    )
