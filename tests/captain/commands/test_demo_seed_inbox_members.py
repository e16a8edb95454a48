"""The demo's API inbox has the demo agent as member, so its escalations without a team reach the agent."""

import pytest
from django.core.management import call_command

from helpdesk.models import Inbox, InboxMember

pytestmark = pytest.mark.django_db


def test_the_demo_agent_is_a_member_of_the_demo_api_inbox_once(settings):
    settings.DEBUG = True  # the embedded demo
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")
    api_inbox = Inbox.objects.get(channel_type=Inbox.ChannelType.API)
    assert list(InboxMember.objects.values_list("inbox_id", "user__username")) == [(api_inbox.pk, "agent")]
