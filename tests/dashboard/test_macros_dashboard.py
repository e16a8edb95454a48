"""Macros in the dashboard: run from the conversation page's Macros box and from the list's bulk bar on the
ticked conversations; a macro the person may not run, or none ticked, is refused with a clear message."""

from __future__ import annotations

import pytest

from helpdesk.models import Conversation, Macro
from helpdesk.models.automation import Visibility
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def run_url(team) -> str:
    return f"/app/accounts/{team.account.id}/macros/run/"


@pytest.fixture
def close_as_done(team) -> Macro:
    return Macro.objects.create(
        account=team.account,
        name="Close as done",
        actions=[{"kind": "add_label", "value": "done"}, {"kind": "resolve"}],
    )


def test_the_conversation_page_offers_the_macros_and_runs_one(agent_client, team, close_as_done):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    page = agent_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.pk}/"
    ).content.decode()
    assert "data-macro-picker" in page and "Close as done" in page
    response = agent_client.post(
        run_url(team),
        {"macro": close_as_done.pk, "ids": [conversation.pk], "from": "conversation"},
        follow=True,
    )
    assert response.redirect_chain[-1][0].endswith(f"/conversations/{conversation.pk}/")
    assert "Macro “Close as done” ran on 1 conversation: 2 actions done." in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED


def test_the_list_runs_a_macro_on_the_ticked(agent_client, team, close_as_done):
    ticked = [ConversationFactory(contact_inbox__inbox=team.inbox, status="open").pk for _ in range(3)]
    left = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    listing = agent_client.get(f"/app/accounts/{team.account.id}/lists/needs-people/").content.decode()
    assert "Run macro on the ticked" in listing
    response = agent_client.post(
        f"{run_url(team)}?list=needs-people", {"macro": close_as_done.pk, "ids": ticked}, follow=True
    )
    assert response.redirect_chain[-1][0].endswith("/lists/needs-people/")
    assert "ran on 3 conversations: 6 actions done." in response.content.decode()
    assert Conversation.objects.filter(pk__in=ticked, status="resolved").count() == 3
    left.refresh_from_db()
    assert left.status == "open"


def test_someone_elses_personal_macro_or_nothing_ticked_is_refused(agent_client, team, close_as_done):
    theirs = Macro.objects.create(
        account=team.account,
        name="Admin's",
        visibility=Visibility.PERSONAL,
        owner=team.admin,
        actions=[{"kind": "resolve"}],
    )
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    for data in ({"macro": theirs.pk, "ids": [conversation.pk]}, {"macro": close_as_done.pk}):
        response = agent_client.post(run_url(team), data, follow=True)
        assert "Choose a macro and the conversations to run it on." in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.status == "open"
