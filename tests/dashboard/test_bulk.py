"""Bulk actions on the conversation lists: each ticked conversation goes through the same service as one at a
time (same activity line), in bounded batches; other accounts' conversations are never touched."""

from __future__ import annotations

import pytest

from helpdesk.models import Conversation, Message, PersonSettings
from helpdesk.services.bulk import (
    BULK_LIMIT,
    BulkAction,
    BulkTooLarge,
    conversations_bulk_apply,
)
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def open_conversations(team, n: int) -> list[Conversation]:
    return [
        ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
        for _ in range(n)
    ]


def bulk_url(team, query: str = "list=needs-people") -> str:
    return f"/app/accounts/{team.account.id}/conversations/bulk/?{query}"


def test_bulk_resolve_resolves_the_ticked_with_the_same_activity_line(agent_client, team):
    picked, left = open_conversations(team, 3), open_conversations(team, 1)[0]
    response = agent_client.post(
        bulk_url(team, "list=needs-people&priority=none"),
        {"action": "resolve", "ids": [str(c.id) for c in picked]},
        follow=True,
    )
    assert (
        response.redirect_chain[0][0] == f"/app/accounts/{team.account.id}/lists/needs-people/?priority=none"
    )
    assert "Resolved 3 conversations." in response.content.decode()
    for conversation in picked:
        conversation.refresh_from_db()
        assert conversation.status == Conversation.Status.RESOLVED
        assert conversation.resolved_by == Conversation.ResolvedBy.AGENT
        assert Message.objects.filter(
            conversation=conversation,
            message_type=Message.Type.ACTIVITY,
            content="bob changed the status from open to resolved.",
        ).exists()
    left.refresh_from_db()
    assert left.status == Conversation.Status.OPEN


def test_another_accounts_conversation_is_not_touched(agent_client, team, other_team):
    mine = open_conversations(team, 1)[0]
    theirs = ConversationFactory(contact_inbox__inbox=other_team.inbox, status=Conversation.Status.OPEN)
    response = agent_client.post(
        bulk_url(team), {"action": "resolve", "ids": [str(mine.id), str(theirs.id)]}, follow=True
    )
    assert "Resolved 1 conversation." in response.content.decode()
    theirs.refresh_from_db()
    assert theirs.status == Conversation.Status.OPEN


def test_bulk_assign_label_snooze_and_priority(agent_client, team):
    picked = open_conversations(team, 2)
    ids = [str(c.id) for c in picked]
    agent_client.post(bulk_url(team), {"action": "assign", "assignee": str(team.admin.id), "ids": ids})
    agent_client.post(bulk_url(team), {"action": "label", "label": "Refunds", "ids": ids})
    agent_client.post(bulk_url(team), {"action": "snooze", "until": "hour", "ids": ids})
    agent_client.post(bulk_url(team), {"action": "priority", "priority": "urgent", "ids": ids})
    for conversation in picked:
        conversation.refresh_from_db()
        assert conversation.assignee_id == team.admin.id
        assert [label.name for label in conversation.labels.all()] == ["refunds"]
        assert conversation.status == Conversation.Status.SNOOZED
        assert conversation.snoozed_until is not None
        assert conversation.priority == "urgent"


def test_bulk_assign_to_someone_outside_the_account_changes_nothing(agent_client, team, other_team):
    picked = open_conversations(team, 2)
    response = agent_client.post(
        bulk_url(team),
        {"action": "assign", "assignee": str(other_team.admin.id), "ids": [str(c.id) for c in picked]},
        follow=True,
    )
    assert "not a member of this account" in response.content.decode()
    assert not Conversation.objects.filter(assignee__isnull=False).exists()


def test_nothing_ticked_is_said(agent_client, team):
    response = agent_client.post(bulk_url(team), {"action": "resolve"}, follow=True)
    assert "Tick the conversations first" in response.content.decode()


def test_large_selections_go_in_batches_and_have_a_limit(team):
    picked = open_conversations(team, 120)
    result = conversations_bulk_apply(
        account_id=team.account.id,
        conversation_ids=[c.id for c in picked] + [10**9],
        action=BulkAction("label", label="batch"),
        actor=team.agent,
    )
    assert (result.changed, result.batches, result.not_found) == (120, 3, 1)
    assert Conversation.objects.filter(labels__name="batch").count() == 120
    with pytest.raises(BulkTooLarge):
        conversations_bulk_apply(
            account_id=team.account.id,
            conversation_ids=list(range(1, BULK_LIMIT + 2)),
            action=BulkAction("resolve"),
            actor=team.agent,
        )


def test_a_thousand_conversations_from_the_list_in_batches_said_in_the_persons_language(agent_client, team):
    """Bad input: the largest selection allowed, ticked on a list, goes through in batches and the answer says
    how it went (count, batches, ids no longer there) in the person's own language."""
    picked = open_conversations(team, BULK_LIMIT - 1)
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    response = agent_client.post(
        bulk_url(team),
        {"action": "resolve", "ids": [str(c.id) for c in picked] + [str(10**9)]},
        follow=True,
    )
    html = response.content.decode()
    assert "已解决 999 个会话。分 20 批完成，每批 50 个。有 1 个勾选的会话已不存在。" in html
    assert Conversation.objects.filter(status=Conversation.Status.RESOLVED).count() == BULK_LIMIT - 1


def test_the_answer_in_english_names_batches_and_the_missing(agent_client, team):
    picked = open_conversations(team, 60)
    response = agent_client.post(
        bulk_url(team),
        {"action": "label", "label": "late", "ids": [str(c.id) for c in picked] + [str(10**9)]},
        follow=True,
    )
    assert (
        "Labelled 60 conversations. Done in 2 batches of 50. 1 ticked conversation was no longer there."
        in response.content.decode()
    )
