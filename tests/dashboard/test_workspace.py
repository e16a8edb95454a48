"""The workspace's queue flow: resolving, snoozing or handing back a conversation goes on to the next one of the
list it was opened from; other actions stay on the conversation."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from helpdesk.models import Conversation
from helpdesk.selectors import dashboard
from helpdesk.views.workspace import ListContext, next_conversation_id
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def waiting(team, minutes: int, **kwargs) -> Conversation:
    return ConversationFactory(
        contact_inbox__inbox=team.inbox,
        status=Conversation.Status.OPEN,
        waiting_since=timezone.now() - dt.timedelta(minutes=minutes),
        **kwargs,
    )


def action_url(team, conversation, action: str, query: str = "list=needs-people") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/status/{action}/?{query}"


def detail(team, conversation, query: str = "list=needs-people") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/?{query}"


@pytest.mark.parametrize("action", ["resolve", "hand_back"])
def test_a_finished_conversation_goes_on_to_the_next_of_the_list(agent_client, team, action):
    first, second, third = waiting(team, 30), waiting(team, 20), waiting(team, 10)
    response = agent_client.post(action_url(team, second, action))
    assert response.status_code == 302
    assert response["Location"] == detail(team, third)
    first.refresh_from_db()
    assert first.status == Conversation.Status.OPEN  # only the one acted on changed


def test_htmx_is_told_to_go_to_the_next_conversation(agent_client, team):
    first, second = waiting(team, 30), waiting(team, 20)
    response = agent_client.post(action_url(team, first, "resolve"), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Redirect"] == detail(team, second)
    # The result is shown on the next conversation.
    assert f"#{first.id}: Conversation resolved." in agent_client.get(detail(team, second)).content.decode()


def test_the_last_of_the_list_goes_back_to_the_one_before(agent_client, team):
    first, last = waiting(team, 30), waiting(team, 20)
    response = agent_client.post(action_url(team, last, "snooze"), {"until": "hour"})
    assert response["Location"] == detail(team, first)
    last.refresh_from_db()
    assert last.status == Conversation.Status.SNOOZED


def test_the_only_conversation_of_the_list_stays_in_place(agent_client, team):
    only = waiting(team, 30)
    response = agent_client.post(action_url(team, only, "resolve"), HTTP_HX_REQUEST="true")
    assert "HX-Redirect" not in response
    assert 'id="side-panel"' in response.content.decode()


def test_the_list_keeps_its_filters(agent_client, team):
    first, _skipped, urgent = (
        waiting(team, 30, priority="urgent"),
        waiting(team, 20),
        waiting(team, 10, priority="urgent"),
    )
    query = "list=needs-people&priority=urgent"
    response = agent_client.post(action_url(team, first, "resolve", query))
    assert response["Location"] == detail(team, urgent, query)  # not the one in between, of another priority


def test_taking_over_stays_on_the_conversation(agent_client, team):
    first, _ = waiting(team, 30), waiting(team, 20)
    response = agent_client.post(action_url(team, first, "take_over"))
    assert response["Location"] == detail(team, first)


def test_a_conversation_outside_the_list_continues_from_its_top(team):
    first, _ = waiting(team, 30), waiting(team, 20)
    stranger = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.PENDING)
    context = ListContext(folder=dashboard.FOLDERS["needs-people"], filters=dashboard.ListFilters())
    following = next_conversation_id(
        account_id=team.account.id, user=team.agent, context=context, conversation_id=stranger.id, shown=None
    )
    assert following == first.id


def test_the_next_the_page_showed_wins_while_it_is_still_in_the_list(agent_client, team):
    first, second, third = waiting(team, 30), waiting(team, 20), waiting(team, 10)
    # The agent answered `first`: its wait ended and the list now puts it last, after `third`.
    first.waiting_since = None
    first.save()
    response = agent_client.post(action_url(team, first, "resolve"), {"next": str(second.id)})
    assert response["Location"] == detail(team, second)
    # A "next" that has left the list meanwhile (a colleague resolved it) is ignored.
    third.status = Conversation.Status.RESOLVED
    third.save()
    response = agent_client.post(action_url(team, second, "resolve"), {"next": str(third.id)})
    assert response["Location"].startswith(detail(team, second))  # nothing else waits: it stays


def test_the_page_links_previous_next_and_back_to_the_list(agent_client, team):
    first, second, third = waiting(team, 30), waiting(team, 20), waiting(team, 10)
    html = agent_client.get(detail(team, second)).content.decode()
    assert f'href="{detail(team, first)}" rel="prev"' in html.replace("&amp;", "&")
    assert f'href="{detail(team, third)}" rel="next"' in html.replace("&amp;", "&")
    assert f'href="/app/accounts/{team.account.id}/lists/needs-people/" class="back-to-list"' in html


def test_a_one_click_action_keeps_the_list_of_the_page_it_came_from(agent_client, team):
    first, _ = waiting(team, 30, priority="urgent"), waiting(team, 20, priority="urgent")
    page_url = f"http://testserver{detail(team, first, 'list=unassigned&priority=urgent')}"
    response = agent_client.post(
        f"/app/accounts/{team.account.id}/conversations/{first.id}/priority/",
        {"priority": "high"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=page_url,
    )
    html = response.content.decode().replace("&amp;", "&")
    # The re-rendered Resolve still goes on within "Unassigned, urgent".
    assert "status/resolve/?list=unassigned&priority=urgent" in html
