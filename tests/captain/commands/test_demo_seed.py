"""The demo seed is idempotent and produces a team whose routing graph is valid."""

import pytest
from django.core.management import call_command

from captain.agents import build_team
from captain.models import Assistant, FaqEntry, Scenario
from captain.services.routing import routing_graph
from helpdesk.models import Inbox, Membership

pytestmark = pytest.mark.django_db


def test_seeding_twice_creates_everything_once():
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")
    assistant = Assistant.objects.get()
    assert Inbox.objects.count() == 1 and Membership.objects.count() == 2
    assert sorted(Scenario.objects.values_list("key", flat=True)) == ["refunds", "shipping", "tech_support"]
    assert FaqEntry.objects.count() == 8
    assert set(build_team(assistant)) == {"assistant", "refunds", "shipping", "tech_support"}
    graph = routing_graph(assistant)
    assert graph is not None
