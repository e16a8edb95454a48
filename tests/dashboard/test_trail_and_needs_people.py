"""Who did what: every change a person or the AI makes to a conversation (take over, assignment, labels, priority,
team) writes one activity line, and only when something changed. A conversation a person took (took it over from
the AI, or a person assigned it) leaves "Needs people" while someone holds it; round-robin does not take it."""

from __future__ import annotations

import re

import pytest

from helpdesk.models import Conversation, Team, TeamMember
from helpdesk.services.conversations import (
    conversation_add_label,
    conversation_assign,
    conversation_escalate,
    conversation_remove_label,
    conversation_set_priority,
    conversation_set_status,
    conversation_set_team,
    conversation_take_over,
)
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def lines(conversation) -> list[str]:
    return list(
        conversation.messages.filter(message_type="activity").order_by("id").values_list("content", flat=True)
    )


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


def listed(client, team, folder: str) -> list[int]:
    html = client.get(f"/app/accounts/{team.account.id}/lists/{folder}/").content
    return [int(x) for x in re.findall(rb'data-conversation="(\d+)"', html)]


def escalated(team, **kwargs) -> Conversation:
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending", **kwargs)
    conversation_escalate(conversation=conversation, reason="Asked for a refund", customer_message="")
    conversation.refresh_from_db()
    return conversation


# ---- "Needs people" ------------------------------------------------------------------------------------------


def test_taking_over_from_the_ai_leaves_needs_people_and_writes_one_line(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    agent_client.post(page(team, conversation, "status/take_over/"))
    conversation.refresh_from_db()
    assert (conversation.status, conversation.assignee_id) == ("open", team.agent.id)
    assert conversation.taken_at is not None
    assert lines(conversation) == ["bob took over from the AI."]
    assert conversation.id not in listed(agent_client, team, "needs-people")
    assert listed(agent_client, team, "mine") == [conversation.id]


def test_a_reply_on_a_conversation_the_ai_handles_takes_it_over(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    agent_client.post(page(team, conversation, "reply/"), {"content": "Bob here", "kind": "reply"})
    conversation.refresh_from_db()
    assert (conversation.status, conversation.assignee_id) == ("open", team.agent.id)
    assert lines(conversation) == ["bob took over from the AI."]
    assert conversation.id not in listed(agent_client, team, "needs-people")


def test_a_reply_keeps_an_assignee_already_there(team):
    from helpdesk.services.messages import message_create_agent_reply

    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending", assignee=team.admin)
    message_create_agent_reply(conversation=conversation, user=team.agent, content="Hello")
    conversation.refresh_from_db()
    assert conversation.assignee_id == team.admin.id


def test_an_escalation_waits_in_needs_people_until_somebody_takes_it(agent_client, team):
    conversation = escalated(team)
    assert listed(agent_client, team, "needs-people") == [conversation.id]
    agent_client.post(page(team, conversation, "status/take_over/"))
    conversation.refresh_from_db()
    assert conversation.assignee_id == team.agent.id
    assert lines(conversation)[-1] == "bob took the conversation."
    assert listed(agent_client, team, "needs-people") == []


def test_taking_it_from_a_colleague_names_them(agent_client, team):
    conversation = escalated(team, assignee=team.admin)
    agent_client.post(page(team, conversation, "status/take_over/"))
    assert lines(conversation)[-1] == "bob took the conversation over from alice."


def test_round_robin_does_not_take_it_but_the_assignee_does(agent_client, team):
    support = Team.objects.create(account=team.account, name="Support")
    TeamMember.objects.create(team=support, user=team.agent)
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", team_id=support.id)
    conversation.refresh_from_db()
    assert conversation.assignee_id == team.agent.id and conversation.taken_at is None
    assert listed(agent_client, team, "needs-people") == [conversation.id]  # given, not taken yet
    assert lines(conversation) == [
        "The AI handed the conversation to the team Support.",
        "Assigned to bob (Support, round-robin).",
    ]
    # Bob picks it up ("assign to me": he was already the assignee): taken, no new line.
    agent_client.post(page(team, conversation, "assignee/"), {"assignee": str(team.agent.id)})
    assert listed(agent_client, team, "needs-people") == []
    assert len(lines(conversation)) == 2


def test_unassigning_a_taken_conversation_puts_it_back(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    agent_client.post(page(team, conversation, "status/take_over/"))
    agent_client.post(page(team, conversation, "assignee/"), {"assignee": ""})
    assert listed(agent_client, team, "needs-people") == [conversation.id]
    assert lines(conversation)[-1] == "bob unassigned the conversation."


def test_handed_back_and_escalated_again_it_needs_people_again(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_take_over(conversation=conversation, user=team.agent)
    conversation_set_status(conversation=conversation, status="pending", actor=team.agent)
    conversation.refresh_from_db()
    assert conversation.taken_at is None
    conversation_escalate(conversation=conversation, reason="Again", customer_message="")
    conversation.refresh_from_db()
    # Still assigned to Bob, but handed to the team anew: it needs people.
    assert conversation.assignee_id == team.agent.id
    assert listed(agent_client, team, "needs-people") == [conversation.id]


def test_folder_counts_agree_with_the_lists(agent_client, team):
    taken = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_take_over(conversation=taken, user=team.agent)
    waiting = escalated(team)
    html = agent_client.get(f"/app/accounts/{team.account.id}/lists/all/").content.decode()
    counts = dict(re.findall(r'data-folder-count="([\w-]+)">(\d+)<', html))
    assert counts["needs-people"] == "1" and counts["mine"] == "1" and counts["unassigned"] == "1"
    assert listed(agent_client, team, "needs-people") == [waiting.id]


# ---- activity lines ------------------------------------------------------------------------------------------


def test_assignment_lines(team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    conversation_assign(conversation=conversation, assignee=team.agent, by=team.agent)
    conversation_assign(conversation=conversation, assignee=team.agent, by=team.agent)  # no change, no line
    conversation_assign(conversation=conversation, assignee=team.admin, by=team.agent)
    conversation_assign(conversation=conversation, assignee=None, by=team.admin)
    assert lines(conversation) == [
        "bob assigned the conversation to themselves.",
        "bob assigned the conversation to alice.",
        "alice unassigned the conversation.",
    ]


def test_label_lines_for_a_person_and_the_ai(team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    conversation_add_label(conversation=conversation, name="vip", by=team.agent)
    conversation_add_label(conversation=conversation, name="vip", by="The AI")  # already there: no line
    assert conversation_add_label(conversation=conversation, name="new", by="The AI", create=False) is None
    conversation_remove_label(conversation=conversation, name="vip", by="The AI")
    assert not conversation_remove_label(conversation=conversation, name="vip", by=team.agent)
    assert lines(conversation) == ["bob added the label “vip”.", "The AI removed the label “vip”."]


def test_priority_lines(team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    conversation_set_priority(conversation=conversation, priority="urgent", by="The AI")
    conversation_set_priority(conversation=conversation, priority="urgent", by=team.agent)  # same: no line
    conversation_set_priority(conversation=conversation, priority="none", by=team.agent)
    assert lines(conversation) == ["The AI set the priority to urgent.", "bob removed the priority."]


def test_the_ais_tools_write_lines_as_the_ai(team):
    from captain.actions.services.tools.builtin import add_label, set_priority
    from captain.runtime import RunContext
    from helpdesk.models import Label

    Label.objects.create(account=team.account, name="refund")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    ctx = RunContext(account_id=team.account.id, conversation_id=conversation.id)
    add_label(ctx, {"label": "refund"})
    set_priority(ctx, {"priority": "high"})
    assert lines(conversation) == ["The AI added the label “refund”.", "The AI set the priority to high."]


def test_team_lines_and_another_accounts_team_is_refused(agent_client, team, other_team):
    billing = Team.objects.create(account=team.account, name="Billing")
    theirs = Team.objects.create(account=other_team.account, name="Theirs")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    agent_client.post(page(team, conversation, "team/"), {"team": str(billing.id)})
    agent_client.post(page(team, conversation, "team/"), {"team": str(billing.id)})  # same: no line
    response = agent_client.post(page(team, conversation, "team/"), {"team": str(theirs.id)}, follow=True)
    assert "That team is not one of this account&#x27;s." in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.team_id == billing.id
    agent_client.post(page(team, conversation, "team/"), {"team": ""})
    conversation.refresh_from_db()
    assert conversation.team_id is None
    assert lines(conversation) == [
        "bob gave the conversation to the team Billing.",
        "bob took the conversation off the team Billing.",
    ]
    with pytest.raises(ValueError):
        conversation_set_team(conversation=conversation, team=theirs, by=team.agent)


def test_the_side_panel_offers_only_this_accounts_teams(agent_client, team, other_team):
    Team.objects.create(account=team.account, name="Billing")
    Team.objects.create(account=other_team.account, name="Their secret team")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    html = agent_client.get(page(team, conversation)).content.decode()
    assert 'aria-label="Team"' in html and ">Billing</option>" in html and "Their secret team" not in html


def test_team_through_the_api(agent_client, team, other_team):
    billing = Team.objects.create(account=team.account, name="Billing")
    theirs = Team.objects.create(account=other_team.account, name="Theirs")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    url = f"/api/v1/accounts/{team.account.id}/conversations/{conversation.id}/team/"
    response = agent_client.post(url, {"team_id": theirs.id}, content_type="application/json")
    assert response.status_code == 400
    response = agent_client.post(url, {"team_id": billing.id}, content_type="application/json")
    assert response.status_code == 200 and response.json()["team"] == billing.id
    response = agent_client.post(url, {"team_id": None}, content_type="application/json")
    assert response.status_code == 200 and response.json()["team"] is None
    assert len(lines(conversation)) == 2


def test_bulk_team_goes_through_the_same_service(agent_client, team, other_team):
    billing = Team.objects.create(account=team.account, name="Billing")
    theirs = Team.objects.create(account=other_team.account, name="Theirs")
    first, second = (ConversationFactory(contact_inbox__inbox=team.inbox, status="open") for _ in range(2))
    bulk = f"/app/accounts/{team.account.id}/conversations/bulk/?list=needs-people"
    ids = [str(first.id), str(second.id)]
    response = agent_client.post(bulk, {"action": "team", "team": str(theirs.id), "ids": ids}, follow=True)
    assert "That team is not one of this account" in response.content.decode()
    response = agent_client.post(bulk, {"action": "team", "team": str(billing.id), "ids": ids}, follow=True)
    assert "Changed the team of 2 conversations." in response.content.decode()
    for conversation in (first, second):
        conversation.refresh_from_db()
        assert conversation.team_id == billing.id
        assert lines(conversation) == ["bob gave the conversation to the team Billing."]
