"""The README's demo: its API inbox auto-assigns, so a handoff to no team goes to the demo agent (its member)."""

import pytest
from django.core.management import call_command

from helpdesk.models import Conversation, Inbox
from helpdesk.services.conversations import conversation_escalate
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def test_a_handoff_on_the_demo_inbox_goes_to_the_demo_agent(settings):
    settings.DEBUG = True  # the embedded demo
    call_command("captain_demo_seed")
    inbox = Inbox.objects.get(channel_type=Inbox.ChannelType.API)
    assert inbox.auto_assign
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.PENDING)

    conversation_escalate(conversation=conversation, reason="Wants a person", customer_message="")

    conversation.refresh_from_db()
    assert conversation.assignee.username == "agent"
