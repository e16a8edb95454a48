"""The README's demo account comes with people's side set up: its API inbox has business hours, an away message
and the SLA policy "Standard"; the account has the macro "Refund sent" and the rule "Urgent words", each once
however often the seed runs, and the rule labels a customer's urgent message."""

import pytest
from django.core.management import call_command

from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import AutomationRule, Inbox, Macro, SlaPolicy
from helpdesk.selectors.business_hours import inbox_hours
from helpdesk.services.automation_rules import automation_evaluate
from helpdesk.services.messages import message_ingest

pytestmark = pytest.mark.django_db


def test_the_demo_inbox_has_hours_an_sla_a_macro_and_a_rule_once(settings):
    settings.DEBUG = True  # the embedded demo
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")
    inbox = Inbox.objects.get(channel_type=Inbox.ChannelType.API)
    hours, zone = inbox_hours(inbox)
    assert zone.key == "Europe/Berlin" and hours[0] == [(8 * 60, 20 * 60)] and 6 not in hours
    assert inbox.sla_policy == SlaPolicy.objects.get(name="Standard")
    assert Macro.objects.filter(name="Refund sent").count() == 1
    rule = AutomationRule.objects.get(name="Urgent words")
    stored = message_ingest(
        inbox=inbox, inbound=InboundMessage("u1", InboundContact("c1"), "This is URGENT, my order is wrong")
    ).message
    automation_evaluate(event=rule.event, conversation_id=stored.conversation_id, message_id=stored.pk)
    conversation = stored.conversation
    conversation.refresh_from_db()
    assert conversation.priority == "urgent"
    assert list(conversation.labels.values_list("name", flat=True)) == ["urgent"]
