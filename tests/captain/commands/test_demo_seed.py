"""The demo seed is idempotent and produces a team whose routing graph is valid."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from captain.assistants.models import Assistant, Scenario
from captain.assistants.services.agents import build_team
from captain.knowledge.models import FaqEntry
from captain.routing.services.routing import routing_graph
from helpdesk.models import Inbox, Membership

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _demo_mode(settings):
    settings.DEBUG = True  # the embedded demo; the refusal below sets it off


def test_refuses_with_debug_off_unless_forced(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="published credentials"):
        call_command("captain_demo_seed")
    assert not Inbox.objects.exists()

    call_command("captain_demo_seed", "--force", stdout=io.StringIO())
    assert Inbox.objects.count() == 3  # the API inbox, the website widget and the support e-mail


def test_a_restart_does_not_reset_a_changed_inbox_secret():
    call_command("captain_demo_seed", stdout=io.StringIO())
    Inbox.objects.update(secret="rotated-by-the-team")

    call_command("captain_demo_seed", stdout=io.StringIO())

    assert set(Inbox.objects.values_list("secret", flat=True)) == {"rotated-by-the-team"}


def test_seeding_twice_creates_everything_once():
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")
    assistant = Assistant.objects.get()
    assert Inbox.objects.count() == 3 and Membership.objects.count() == 2
    keys = sorted(Scenario.objects.values_list("key", flat=True))
    assert keys == ["invoices", "refunds", "shipping", "tech_support"]
    assert FaqEntry.objects.count() == 8
    assert set(build_team(assistant)) == {"assistant", "refunds", "shipping", "tech_support", "invoices"}
    graph = routing_graph(assistant)
    assert graph is not None
