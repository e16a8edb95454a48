"""WhatsApp templates: the variable count follows the body, gaps are refused, only a WhatsApp inbox holds one."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import Inbox, WhatsAppTemplate
from tests.factories import InboxFactory

pytestmark = pytest.mark.django_db


def test_variable_count_follows_the_body_and_fills() -> None:
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WHATSAPP)
    template = WhatsAppTemplate(
        inbox=inbox, name="order_update", language="en_US", body="Hi {{1}}, order {{2}} {{1}}"
    )
    template.full_clean()
    template.save()
    assert template.variables == 2
    assert template.filled(["Ann", "#42"]) == "Hi Ann, order #42 Ann"


def test_numbering_gap_refused() -> None:
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WHATSAPP)
    template = WhatsAppTemplate(inbox=inbox, name="gap", language="en_US", body="Hi {{1}}, see {{3}}")
    with pytest.raises(ValidationError, match="without gaps"):
        template.full_clean()


def test_only_a_whatsapp_inbox() -> None:
    inbox = InboxFactory(channel_type=Inbox.ChannelType.TELEGRAM)
    template = WhatsAppTemplate(inbox=inbox, name="hello", language="en_US", body="Hello")
    with pytest.raises(ValidationError) as raised:
        template.full_clean()
    assert "inbox" in raised.value.message_dict
