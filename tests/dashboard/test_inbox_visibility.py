"""Inbox membership decides what an agent sees: the conversations of their inboxes, and of inboxes with no
members at all; administrators see everything. Every read goes through helpdesk.selectors.visibility, so each
door is tried here: lists, counts, search, the conversation page and its actions, the API, bulk actions and the
live events."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import Http404
from rest_framework.test import APIClient

from helpdesk.models import Attachment, Conversation, CsatResponse, InboxMember, Membership, Notification
from helpdesk.selectors.notifications import (
    access_notification,
    bell_notifications,
    unread_count,
    user_notifications,
)
from helpdesk.selectors.visibility import hidden_inbox_ids
from helpdesk.views.events import for_person
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)


@pytest.fixture
def private(team):
    """A "Billing" inbox whose only member is carol, with one open conversation about a refund."""
    carol = UserFactory(username="carol")
    MembershipFactory(account=team.account, user=carol, role=Membership.Role.AGENT)
    inbox = InboxFactory(account=team.account, name="Billing")
    InboxMember.objects.create(inbox=inbox, user=carol)
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.OPEN)
    MessageFactory(conversation=conversation, content="Where is my zanzibarrefund?")
    return carol, inbox, conversation


def _app(team, path: str) -> str:
    return f"/app/accounts/{team.account.id}/{path}"


def _sees_everywhere(client, team, conversation) -> list[bool]:
    """Does the signed-in person meet the conversation in the list, the counts, the search and its page?"""
    listed = f"/conversations/{conversation.id}/" in client.get(_app(team, "lists/all/")).content.decode()
    counted = client.get(_app(team, "lists/counts.json")).json()["counts"]["all"] == 1
    found = (
        f"/conversations/{conversation.id}/"
        in client.get(_app(team, "search/"), {"q": "zanzibarrefund"}).content.decode()
    )
    page = client.get(_app(team, f"conversations/{conversation.id}/")).status_code == 200
    return [listed, counted, found, page]


def test_an_agent_outside_the_inbox_meets_its_conversation_nowhere(client, team, private):
    _, _, conversation = private
    client.force_login(team.agent)
    assert _sees_everywhere(client, team, conversation) == [False, False, False, False]
    for path, data in (("status/resolve/", {}), ("priority/", {"priority": "high"}), ("assignee/", {})):
        url = _app(team, f"conversations/{conversation.id}/{path}")
        assert client.post(url, data).status_code == 404
    conversation.refresh_from_db()
    assert (conversation.status, conversation.priority) == (Conversation.Status.OPEN, "none")


def test_the_inbox_member_and_an_administrator_see_it(client, team, private):
    carol, _, conversation = private
    for person in (carol, team.admin):
        client.force_login(person)
        assert _sees_everywhere(client, team, conversation) == [True, True, True, True]


def test_an_inbox_without_members_stays_open_to_every_agent(client, team, private):
    _, inbox, conversation = private
    InboxMember.objects.filter(inbox=inbox).delete()
    client.force_login(team.agent)
    assert _sees_everywhere(client, team, conversation) == [True, True, True, True]


def test_the_api_answers_404_and_lists_without_it(team, private):
    carol, _, conversation = private
    api = APIClient()
    base = f"/api/v1/accounts/{team.account.id}/conversations/"
    api.force_authenticate(team.agent)
    assert api.get(f"{base}{conversation.id}/").status_code == 404
    assert (
        api.post(f"{base}{conversation.id}/status/", {"status": "resolved"}, format="json").status_code == 404
    )
    assert conversation.id not in [row["id"] for row in api.get(base).json()["results"]]
    api.force_authenticate(carol)
    assert api.get(f"{base}{conversation.id}/").status_code == 200
    assert conversation.id in [row["id"] for row in api.get(base).json()["results"]]


def test_a_bulk_action_leaves_an_unseen_conversation_alone(client, team, private):
    _, _, conversation = private
    seen = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
    client.force_login(team.agent)
    client.post(
        _app(team, "conversations/bulk/?list=all"),
        {"action": "resolve", "ids": [str(seen.id), str(conversation.id)]},
    )
    seen.refresh_from_db()
    conversation.refresh_from_db()
    assert (seen.status, conversation.status) == (Conversation.Status.RESOLVED, Conversation.Status.OPEN)


def test_live_events_of_an_unseen_inbox_are_dropped(team, private):
    carol, inbox, conversation = private
    event = {"type": "conversation", "conversation_id": conversation.id, "inbox_id": inbox.id}
    hidden = frozenset(hidden_inbox_ids(account_id=team.account.id, user_id=team.agent.pk))
    assert hidden == {inbox.id}
    assert for_person(team.agent.pk, hidden)(event) is False
    assert for_person(team.agent.pk, hidden)({**event, "inbox_id": team.inbox.id}) is True
    assert for_person(team.agent.pk, hidden)({"type": "delivery", "conversation_id": 1}) is True
    assert hidden_inbox_ids(account_id=team.account.id, user_id=carol.pk) == set()
    assert hidden_inbox_ids(account_id=team.account.id, user_id=team.admin.pk) == set()


def test_notifications_about_an_unseen_conversation_are_not_shown(team, private):
    carol, inbox, conversation = private
    for person in (team.agent, carol):
        Notification.objects.create(
            account=team.account,
            user=person,
            kind=Notification.Kind.ESCALATION,
            conversation=conversation,
            text="x",
        )
    hidden = Notification.objects.get(user=team.agent)

    assert list(user_notifications(account_id=team.account.id, user=team.agent)) == []
    assert unread_count(account_id=team.account.id, user=team.agent) == 0
    assert bell_notifications(account_id=team.account.id, user=team.agent, limit=5) == (0, [])
    with pytest.raises(Http404):
        access_notification(account_id=team.account.id, user=team.agent, notification_id=hidden.pk)
    assert unread_count(account_id=team.account.id, user=carol) == 1
    InboxMember.objects.filter(inbox=inbox).delete()  # no members: open to all again
    assert unread_count(account_id=team.account.id, user=team.agent) == 1


def test_the_copilot_of_an_unseen_conversation_answers_404(client, team, private):
    carol, _, conversation = private
    url = _app(team, f"conversations/{conversation.id}/copilot/")
    client.force_login(team.agent)
    assert client.post(url, {"question": "What now?"}).status_code == 404
    client.force_login(carol)
    assert client.post(url, {"question": "What now?"}).status_code != 404


def test_the_contact_s_other_conversations_and_files_follow_the_rule(
    client, team, private, settings, tmp_path
):
    _, _, conversation = private
    settings.MEDIA_ROOT = str(tmp_path)
    seen = ConversationFactory(
        contact_inbox__inbox=team.inbox, contact=conversation.contact, status=Conversation.Status.OPEN
    )
    message = conversation.messages.get()
    name = default_storage.save(f"attachments/{team.account.id}/k3y.bin", ContentFile(b"%PDF-1.4 x"))
    item = Attachment.objects.create(
        account_id=team.account.id,
        message=message,
        kind="file",
        status="stored",
        provider_ref="ref",
        content_type="application/pdf",
        size=10,
        file=name,
    )
    link = f"/conversations/{conversation.id}/"
    client.force_login(team.agent)
    assert link not in client.get(_app(team, f"conversations/{seen.id}/")).content.decode()
    assert link not in client.get(_app(team, f"contacts/{conversation.contact_id}/")).content.decode()
    assert client.get(_app(team, f"attachments/{item.pk}/")).status_code == 404
    client.force_login(team.admin)
    assert link in client.get(_app(team, f"conversations/{seen.id}/")).content.decode()
    assert link in client.get(_app(team, f"contacts/{conversation.contact_id}/")).content.decode()
    assert client.get(_app(team, f"attachments/{item.pk}/")).status_code == 200


def test_the_memory_api_of_an_unseen_conversation_answers_404(team, private):
    carol, inbox, conversation = private
    AssistantInboxFactory(
        inbox=inbox, assistant__account=team.account
    )  # memory is the AI's: the inbox has one
    url = f"/api/v1/captain/accounts/{team.account.id}/conversations/{conversation.id}/memory/"
    api = APIClient()
    api.force_authenticate(team.agent)
    assert api.get(url).status_code == 404
    api.force_authenticate(carol)
    assert api.get(url).status_code != 404


def test_ratings_of_an_unseen_conversation_are_not_listed(team, private):
    carol, _, conversation = private
    CsatResponse.objects.create(account=team.account, conversation=conversation, rating=2, comment="Slow")
    url = f"/api/v1/accounts/{team.account.id}/csat-responses/"
    api = APIClient()
    api.force_authenticate(team.agent)
    assert api.get(url).json()["results"] == []
    api.force_authenticate(carol)
    assert [row["rating"] for row in api.get(url).json()["results"]] == [2]


def test_an_agent_sees_a_conversation_assigned_to_them_outside_their_inboxes(client, team, private):
    """A team's round-robin may give an agent a conversation of an inbox they are not in: they can open it."""
    _, inbox, conversation = private
    Conversation.objects.filter(pk=conversation.pk).update(assignee=team.agent)
    client.force_login(team.agent)
    assert _sees_everywhere(client, team, conversation) == [True, True, True, True]
    hidden = frozenset(hidden_inbox_ids(account_id=team.account.id, user_id=team.agent.pk))
    event = {"type": "conversation", "inbox_id": inbox.id, "conversation_id": conversation.id}
    assert for_person(team.agent.pk, hidden)({**event, "assignee_id": team.agent.pk}) is True
    assert for_person(team.agent.pk, hidden)({**event, "assignee_id": None}) is False


def test_the_inbox_filter_offers_only_the_inboxes_the_agent_sees(client, team, private):
    carol, _, _ = private
    client.force_login(team.agent)
    assert [i.name for i in client.get(_app(team, "lists/all/")).context["inboxes"]] == ["Web chat"]
    client.force_login(carol)
    assert [i.name for i in client.get(_app(team, "search/")).context["inboxes"]] == ["Billing", "Web chat"]
