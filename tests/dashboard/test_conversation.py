"""The conversation page: the thread told apart by sender, escaping, actions through the helpdesk services,
the poll for new messages, thread pagination, and bounded queries."""

from __future__ import annotations

import re

import pytest

from helpdesk.delivery.outcomes import delivery_mark_sent
from helpdesk.models import Conversation, Delivery
from helpdesk.services.conversations import conversation_escalate
from helpdesk.services.messages import message_create_ai_reply
from tests.factories import ConversationFactory, MessageFactory, UserFactory
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of

from .conftest import count_queries

pytestmark = pytest.mark.django_db

# +2 for the attributes panel (the account's attribute definitions, the inbox's assistant), +1 for the page's
# stored files (one prefetch for every message).
# +2 for the contact panel (the contact's channel ids, their past conversations with their last words), +3 for
# the page frame's notifications bell (unread notifications and their count) and availability.
# +3 for the workspace's list beside the conversation (folder counts, the list's first page, its previews).
# +1 for the account's teams (the side panel's team choice), +1 for the person's macros (its Macros box).
MAX_CONVERSATION_QUERIES = 24
# +1 since the AI replies' cited knowledge sources are shown under them (one query for all of them), +1 for the
# new messages' stored files.
MAX_POLL_QUERIES = 9
XSS = "<img src=x onerror=alert(1)><script>window.__xss=1</script>"


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


@pytest.fixture
def escalated(team, django_capture_on_commit_callbacks):
    """A conversation the AI answered once, then handed to people (through the real services)."""
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    MessageFactory(conversation=conversation, content="Where is my order?")
    message_create_ai_reply(
        conversation=conversation, content="It ships tomorrow.", agent_key="orders", agent_name="Order desk"
    )
    MessageFactory(conversation=conversation, content="I want a person")
    conversation_escalate(
        conversation=conversation,
        reason="customer asked for a person",
        customer_message="A teammate is coming.",
    )
    conversation.refresh_from_db()
    return conversation


def test_thread_tells_customer_ai_human_notes_and_activities_apart(agent_client, team, escalated):
    html = agent_client.get(page(team, escalated)).content.decode()
    kinds = re.findall(r'<li class="msg (\w+)"', html)
    assert kinds == ["customer", "ai", "customer", "note", "activity", "ai"]
    assert '<span class="agent">Order desk</span>' in html  # which AI agent wrote the reply
    assert "Handoff reason: customer asked for a person" in html
    assert "The AI handed the conversation to the team." in html
    assert html.count("delivery delivery-queued") == 2  # delivery status of each outgoing message
    assert "Why the AI handed over:</strong> customer asked for a person" in html


def test_customer_and_model_html_is_shown_as_text(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open", escalation_reason=XSS)
    conversation.contact.name = XSS
    conversation.contact.save()
    MessageFactory(conversation=conversation, content=XSS)
    message_create_ai_reply(conversation=conversation, content=XSS, agent_key="a", agent_name=XSS)
    for response in (
        agent_client.get(page(team, conversation)),
        agent_client.get(f"/app/accounts/{team.account.id}/lists/needs-people/"),
    ):
        html = response.content.decode()
        assert "<script>window.__xss" not in html and "<img src=x" not in html
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_attachment_links_only_for_http_urls(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    MessageFactory(
        conversation=conversation,
        attachments=[
            {"url": "javascript:alert(1)", "file_name": "evil"},
            {"url": "https://files.example/a.png", "file_name": "photo"},
        ],
    )
    html = agent_client.get(page(team, conversation)).content.decode()
    assert 'href="javascript:' not in html
    assert 'href="https://files.example/a.png"' in html


def test_reply_is_queued_for_delivery_and_takes_over_from_the_ai(
    agent_client, team, django_capture_on_commit_callbacks
):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    with django_capture_on_commit_callbacks() as callbacks:
        response = agent_client.post(
            page(team, conversation, "reply/"), {"content": "Hi, Bob here", "kind": "reply"}
        )
    assert response.status_code == 302
    reply = conversation.messages.get(message_type="outgoing")
    assert (reply.content, reply.sender_user, reply.private) == ("Hi, Bob here", team.agent, False)
    assert delivery_of(reply).status == Delivery.Status.QUEUED
    assert len(not_realtime(callbacks)) == 1  # the delivery task, enqueued on commit
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.messages.filter(message_type="activity", content__contains="took over").exists()


def test_private_note_is_never_queued(agent_client, team, django_capture_on_commit_callbacks):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    with django_capture_on_commit_callbacks() as callbacks:
        agent_client.post(page(team, conversation, "reply/"), {"content": "VIP customer", "kind": "note"})
    note = conversation.messages.get()
    assert note.private and not Delivery.objects.filter(pk=note.pk).exists()
    assert not_realtime(callbacks) == []


def test_empty_reply_is_refused(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    response = agent_client.post(
        page(team, conversation, "reply/"), {"content": "   ", "kind": "reply"}, follow=True
    )
    assert b"Write a message first" in response.content
    assert conversation.messages.count() == 0


def test_take_over_hand_back_resolve_and_reopen(agent_client, team):
    conversation = ConversationFactory(
        contact_inbox__inbox=team.inbox, status="pending", ai_agent_key="refunds"
    )
    agent_client.post(page(team, conversation, "status/take_over/"))
    conversation.refresh_from_db()
    assert (conversation.status, conversation.assignee) == ("open", team.agent)

    agent_client.post(page(team, conversation, "status/hand_back/"))
    conversation.refresh_from_db()
    assert conversation.status == "pending" and conversation.ai_agent_key == ""

    agent_client.post(page(team, conversation, "status/resolve/"))
    conversation.refresh_from_db()
    assert conversation.status == "resolved"

    agent_client.post(page(team, conversation, "status/reopen/"))
    conversation.refresh_from_db()
    assert conversation.status == "open"
    activities = list(conversation.messages.filter(message_type="activity").values_list("content", flat=True))
    assert activities == [
        "bob took over from the AI.",
        "bob changed the status from open to pending.",
        "bob changed the status from pending to resolved.",
        "bob changed the status from resolved to open.",
    ]


def test_unknown_action_is_404(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    assert agent_client.post(page(team, conversation, "status/delete/")).status_code == 404


def test_actions_are_post_only(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    assert agent_client.get(page(team, conversation, "status/resolve/")).status_code == 405
    conversation.refresh_from_db()
    assert conversation.status == "pending"


def test_assign_to_a_member_and_unassign(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    agent_client.post(page(team, conversation, "assignee/"), {"assignee": str(team.admin.id)})
    conversation.refresh_from_db()
    assert conversation.assignee == team.admin
    agent_client.post(page(team, conversation, "assignee/"), {"assignee": ""})
    conversation.refresh_from_db()
    assert conversation.assignee is None


def test_assigning_someone_outside_the_account_is_refused(agent_client, team, other_team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    for outsider in (other_team.admin, UserFactory()):
        response = agent_client.post(
            page(team, conversation, "assignee/"), {"assignee": str(outsider.id)}, follow=True
        )
        assert b"not a member of this account" in response.content
    conversation.refresh_from_db()
    assert conversation.assignee is None


def test_labels_and_priority(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    agent_client.post(page(team, conversation, "labels/"), {"name": "Billing"})
    agent_client.post(page(team, conversation, "labels/"), {"name": "<script>"})
    agent_client.post(page(team, conversation, "priority/"), {"priority": "urgent"})
    agent_client.post(page(team, conversation, "priority/"), {"priority": "whatever"})
    conversation.refresh_from_db()
    assert [label.name for label in conversation.labels.all()] == ["billing"]
    assert conversation.labels.get().account == team.account
    assert conversation.priority == "urgent"


def test_a_label_can_be_removed(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    agent_client.post(page(team, conversation, "labels/"), {"name": "billing"})
    agent_client.post(page(team, conversation, "labels/"), {"name": "vip"})
    html = agent_client.get(page(team, conversation)).content.decode()
    assert 'aria-label="Remove label billing"' in html
    agent_client.post(page(team, conversation, "labels/"), {"name": "billing", "action": "remove"})
    assert [label.name for label in conversation.labels.all()] == ["vip"]


def test_poll_returns_new_messages_rendered_and_escaped_with_delivery_statuses(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    first = MessageFactory(conversation=conversation, content="hello")
    html = agent_client.get(page(team, conversation)).content.decode()
    assert f'data-last-id="{first.id}"' in html

    assert (
        agent_client.get(page(team, conversation, f"poll/?after={first.id}&since={first.id}"))
        .json()["html"]
        .strip()
        == ""
    )
    reply = message_create_ai_reply(
        conversation=conversation, content=XSS, agent_key="a", agent_name="Triage"
    )
    data = agent_client.get(page(team, conversation, f"poll/?after={first.id}&since={first.id}")).json()
    assert data["last_id"] == reply.id
    assert f'data-message-id="{reply.id}"' in data["html"]
    assert "&lt;script&gt;" in data["html"] and "<script>" not in data["html"]
    assert data["deliveries"] == {str(reply.id): "queued"}
    assert data["status"] == "pending"

    delivery_mark_sent(message_id=reply.pk)
    data = agent_client.get(page(team, conversation, f"poll/?after={reply.id}&since={first.id}")).json()
    assert data["html"].strip() == "" and data["deliveries"] == {str(reply.id): "sent"}


def test_thread_shows_the_latest_50_and_loads_older(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    messages = [MessageFactory(conversation=conversation, content=f"message {i}") for i in range(120)]
    latest = agent_client.get(page(team, conversation)).content.decode()
    shown = [int(x) for x in re.findall(r'data-message-id="(\d+)"', latest)]
    assert shown == [m.id for m in messages[70:]]
    older_link = re.search(r'href="\?before=(\d+)"', latest)
    assert older_link and int(older_link.group(1)) == messages[70].id
    older = agent_client.get(page(team, conversation, f"?before={messages[70].id}")).content.decode()
    assert [int(x) for x in re.findall(r'data-message-id="(\d+)"', older)] == [m.id for m in messages[20:70]]


def seed_thread(conversation, team, n: int) -> None:
    for i in range(n):
        MessageFactory(conversation=conversation, content=f"q{i}")
        MessageFactory(
            conversation=conversation,
            content=f"a{i}",
            message_type="outgoing",
            sender_type="user",
            sender_user=team.admin if i % 2 else team.agent,
        )
        MessageFactory(
            conversation=conversation,
            content="note",
            message_type="outgoing",
            private=True,
            sender_type="assistant",
        )


@pytest.mark.parametrize("role", ["admin", "agent"])
def test_conversation_page_queries_do_not_grow_with_the_thread(
    client, team, role, django_assert_max_num_queries
):
    client.force_login(team.admin if role == "admin" else team.agent)
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    seed_thread(conversation, team, 2)
    client.get(page(team, conversation))
    small, _ = count_queries(lambda: client.get(page(team, conversation)))
    seed_thread(conversation, team, 40)
    with django_assert_max_num_queries(MAX_CONVERSATION_QUERIES):
        large, response = count_queries(lambda: client.get(page(team, conversation)))
    assert response.status_code == 200
    assert small == large <= MAX_CONVERSATION_QUERIES


def test_poll_queries_do_not_grow(agent_client, team, django_assert_max_num_queries):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    seed_thread(conversation, team, 2)
    agent_client.get(page(team, conversation, "poll/?after=0&since=0"))  # warm the session
    small, _ = count_queries(lambda: agent_client.get(page(team, conversation, "poll/?after=0&since=0")))
    seed_thread(conversation, team, 40)
    with django_assert_max_num_queries(MAX_POLL_QUERIES):
        large, _ = count_queries(lambda: agent_client.get(page(team, conversation, "poll/?after=0&since=0")))
    assert small == large <= MAX_POLL_QUERIES
