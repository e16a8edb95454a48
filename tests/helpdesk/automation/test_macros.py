"""Macros: a named list of actions run by a person on one or many conversations, each action through the same
service as a click (its own activity line), bounded like bulk actions, a failing action reported while the rest
still runs, and personal macros for their owner only."""

from __future__ import annotations

import pytest

from helpdesk.models import CannedResponse, Conversation, Macro, Membership, Message
from helpdesk.models.automation import Visibility
from helpdesk.selectors.macros import macros_for
from helpdesk.services.bulk import BulkTooLarge
from helpdesk.services.macros import macro_run
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent_and_inbox():
    inbox = InboxFactory()
    agent = UserFactory(username="dana")
    MembershipFactory(account=inbox.account, user=agent, role=Membership.Role.AGENT)
    return agent, inbox


def macro(account, actions, **kw) -> Macro:
    return Macro.objects.create(account=account, name=kw.pop("name", "Refund done"), actions=actions, **kw)


def test_a_macro_runs_its_actions_in_order_through_the_services(agent_and_inbox):
    agent, inbox = agent_and_inbox
    CannedResponse.objects.create(
        account=inbox.account, short_code="thanks", content="Thank you for waiting!"
    )
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.OPEN)
    refund = macro(
        inbox.account,
        [
            {"kind": "add_label", "value": "refund"},
            {"kind": "send_canned", "value": "thanks"},
            {"kind": "add_note", "value": "Refund sent by bank transfer."},
            {"kind": "resolve"},
        ],
    )
    result = macro_run(macro=refund, conversation_ids=[conversation.pk], actor=agent)
    assert (result.conversations, result.done, result.failed) == (1, 4, [])
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED
    assert list(conversation.labels.values_list("name", flat=True)) == ["refund"]
    reply = conversation.messages.get(message_type=Message.Type.OUTGOING, private=False)
    assert reply.content == "Thank you for waiting!" and reply.sender_user_id == agent.pk
    lines = list(
        conversation.messages.filter(message_type=Message.Type.ACTIVITY).values_list("content", flat=True)
    )
    assert lines[0] == "Macro “Refund done” run by dana."
    assert any("added the label" in line for line in lines) and any("resolved" in line for line in lines)


def test_a_failing_action_is_reported_and_the_others_still_run(agent_and_inbox):
    agent, inbox = agent_and_inbox
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.OPEN)
    broken = macro(
        inbox.account, [{"kind": "send_canned", "value": "gone"}, {"kind": "add_label", "value": "vip"}]
    )
    result = macro_run(macro=broken, conversation_ids=[conversation.pk], actor=agent)
    assert result.done == 1 and result.failed == [f"#{conversation.pk}: there is no canned response /gone"]
    assert list(conversation.labels.values_list("name", flat=True)) == ["vip"]


def test_a_personal_macro_is_its_owners_only(agent_and_inbox):
    agent, inbox = agent_and_inbox
    other = UserFactory()
    MembershipFactory(account=inbox.account, user=other, role=Membership.Role.AGENT)
    mine = macro(
        inbox.account, [{"kind": "resolve"}], name="Mine", visibility=Visibility.PERSONAL, owner=agent
    )
    shared = macro(inbox.account, [{"kind": "resolve"}], name="Shared")
    assert set(macros_for(account_id=inbox.account_id, user=agent)) == {mine, shared}
    assert list(macros_for(account_id=inbox.account_id, user=other)) == [shared]
    with pytest.raises(PermissionError):
        macro_run(macro=mine, conversation_ids=[], actor=other)


def test_a_macro_on_1000_conversations_is_bounded_and_others_are_not_found(agent_and_inbox):
    agent, inbox = agent_and_inbox
    label = macro(inbox.account, [{"kind": "add_label", "value": "batch"}])
    with pytest.raises(BulkTooLarge):
        macro_run(macro=label, conversation_ids=list(range(1, 1002)), actor=agent)
    ours = [ConversationFactory(contact_inbox__inbox=inbox).pk for _ in range(998)]
    elsewhere = ConversationFactory().pk  # another account's
    result = macro_run(macro=label, conversation_ids=[*ours, elsewhere, 10**9], actor=agent)
    assert (result.conversations, result.not_found, result.done) == (998, 2, 998)
    assert Conversation.objects.filter(labels__name="batch").count() == 998
