"""Snooze and the waiting-customer auto-resolve: the sweeps, the customer's message waking a snooze, and each
account's own settings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from helpdesk import timers
from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, Message
from helpdesk.services.auto_resolve import quiet_ai_due, quiet_ai_judge_due
from helpdesk.services.messages import message_ingest
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def conversation_for(account, **fields):
    inbox = InboxFactory(account=account)
    return ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox), **fields)


def age(conversation, *, minutes: float) -> None:
    """Make everything in the conversation `minutes` old (last activity and every message)."""
    at = timezone.now() - timedelta(minutes=minutes)
    Message.objects.filter(conversation=conversation).update(created_at=at)
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=at)
    conversation.refresh_from_db()


def activities(conversation) -> list[str]:
    return list(
        Message.objects.filter(conversation=conversation, message_type=Message.Type.ACTIVITY)
        .order_by("id")
        .values_list("content", flat=True)
    )


# ---- snooze ---------------------------------------------------------------------------------------------------


def test_snooze_is_woken_at_its_time_and_not_before():
    account = AccountFactory()
    due = conversation_for(
        account, status=Conversation.Status.SNOOZED, snoozed_until=timezone.now() - timedelta(seconds=5)
    )
    later = conversation_for(
        account, status=Conversation.Status.SNOOZED, snoozed_until=timezone.now() + timedelta(hours=1)
    )

    assert timers.snoozed_wake_sweep() == 1
    assert timers.snoozed_wake_sweep() == 0  # done once

    due.refresh_from_db()
    later.refresh_from_db()
    assert due.status == Conversation.Status.OPEN and due.snoozed_until is None
    assert activities(due) == ["The snooze ended: the conversation is open again."]
    assert later.status == Conversation.Status.SNOOZED and activities(later) == []


def test_customer_message_wakes_a_snoozed_conversation_in_place():
    account = AccountFactory()
    conversation = conversation_for(
        account, status=Conversation.Status.SNOOZED, snoozed_until=timezone.now() + timedelta(days=2)
    )
    inbound = InboundMessage(
        provider_message_id="wake-1",
        contact=InboundContact(source_id=conversation.contact_inbox.source_id),
        text="Any news?",
    )

    result = message_ingest(inbox=conversation.inbox, inbound=inbound)

    assert result.message.conversation_id == conversation.pk  # the same conversation, not a new one
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.snoozed_until is None
    assert conversation.waiting_since is not None  # the customer now waits for people
    assert "The customer's message woke the conversation." in activities(conversation)
    # The sweep has nothing left to wake.
    assert timers.snoozed_wake_sweep() == 0


# ---- waiting on the customer ------------------------------------------------------------------------------------


def answered_by_people(account, *, hours_ago: float):
    conversation = conversation_for(account, status=Conversation.Status.OPEN)
    MessageFactory(conversation=conversation, content="My invoice is wrong.")
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        sender_user=UserFactory(),
        content="I corrected it, could you check?",
    )
    age(conversation, minutes=hours_ago * 60)
    return conversation


def test_conversation_waiting_on_the_customer_is_resolved_after_the_accounts_hours():
    account = AccountFactory(auto_resolve_waiting_after_hours=48)
    stale = answered_by_people(account, hours_ago=49)
    recent = answered_by_people(account, hours_ago=47)

    assert timers.auto_resolve_waiting_sweep() == 1
    assert timers.auto_resolve_waiting_sweep() == 0

    stale.refresh_from_db()
    assert stale.status == Conversation.Status.RESOLVED
    assert stale.resolved_by == Conversation.ResolvedBy.INACTIVITY
    assert stale.resolved_at is not None
    assert "Resolved automatically: the customer has not replied for 48 hours." in activities(stale)
    recent.refresh_from_db()
    assert recent.status == Conversation.Status.OPEN


def test_customer_waiting_for_people_is_never_auto_resolved():
    account = AccountFactory(auto_resolve_waiting_after_hours=1)
    conversation = conversation_for(account, status=Conversation.Status.OPEN)
    message = MessageFactory(conversation=conversation, content="Hello? Anyone?")
    Conversation.objects.filter(pk=conversation.pk).update(waiting_since=message.created_at)
    age(conversation, minutes=300)
    # Open, people not asked to wait, but the customer spoke last (e.g. a person took over without replying).
    silent = conversation_for(account, status=Conversation.Status.OPEN)
    MessageFactory(conversation=silent, content="I need help")
    age(silent, minutes=300)

    assert timers.auto_resolve_waiting_sweep() == 0

    for c in (conversation, silent):
        c.refresh_from_db()
        assert c.status == Conversation.Status.OPEN


def test_activity_after_the_last_reply_restarts_the_waiting_clock():
    account = AccountFactory(auto_resolve_waiting_after_hours=2)
    conversation = answered_by_people(account, hours_ago=5)
    # Woken from a long snooze a minute ago: not resolved the moment it comes back.
    Message.objects.create(
        account=account,
        inbox=conversation.inbox,
        conversation=conversation,
        message_type=Message.Type.ACTIVITY,
        sender_type=Message.SenderType.SYSTEM,
        content="The snooze ended: the conversation is open again.",
    )

    assert timers.auto_resolve_waiting_sweep() == 0


def test_each_account_waiting_setting_applies_to_its_own_conversations_only():
    quick = AccountFactory(auto_resolve_waiting_after_hours=2)
    slow = AccountFactory(auto_resolve_waiting_after_hours=72)
    never = AccountFactory(auto_resolve_waiting_after_hours=None)
    quick_one = answered_by_people(quick, hours_ago=3)
    slow_one = answered_by_people(slow, hours_ago=3)
    never_one = answered_by_people(never, hours_ago=1000)

    assert timers.auto_resolve_waiting_sweep() == 1

    statuses = {c.pk: Conversation.objects.get(pk=c.pk).status for c in (quick_one, slow_one, never_one)}
    assert statuses == {
        quick_one.pk: Conversation.Status.RESOLVED,
        slow_one.pk: Conversation.Status.OPEN,
        never_one.pk: Conversation.Status.OPEN,
    }


# ---- quiet AI conversations: selection and claim (the judgement itself: tests/captain/auto_resolve/) -------------


def ai_handled(account, *, minutes_ago: float):
    conversation = conversation_for(account, status=Conversation.Status.PENDING)
    MessageFactory(conversation=conversation, content="Where is my parcel?")
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="It arrives tomorrow.",
    )
    age(conversation, minutes=minutes_ago)
    return conversation


def test_quiet_ai_selection_uses_each_accounts_own_minutes(redis_url):
    thirty = AccountFactory(auto_resolve_ai_after_minutes=30)
    two_hours = AccountFactory(auto_resolve_ai_after_minutes=120)
    off = AccountFactory(auto_resolve_ai_after_minutes=None)
    due = ai_handled(thirty, minutes_ago=45)
    ai_handled(thirty, minutes_ago=10)
    ai_handled(two_hours, minutes_ago=45)
    ai_handled(off, minutes_ago=10_000)

    found = quiet_ai_due(now=timezone.now(), limit=50)

    assert [q.conversation_id for q in found] == [due.pk]
    assert found[0].quiet_since == due.last_activity_at


def test_quiet_period_is_claimed_once_and_a_new_message_starts_a_new_one(redis_url):
    account = AccountFactory(auto_resolve_ai_after_minutes=30)
    conversation = ai_handled(account, minutes_ago=45)
    asked = []

    def judge(*, conversation_id, quiet_since):  # stands in for captain's hook (tested in tests/captain)
        asked.append((conversation_id, quiet_since))
        return True

    assert quiet_ai_judge_due(judge=judge, limit=50) == 1
    assert quiet_ai_judge_due(judge=judge, limit=50) == 0  # same quiet period: not asked again
    assert asked == [(conversation.pk, conversation.last_activity_at)]

    # The customer wrote again and the conversation went quiet again: a new period, judged again.
    MessageFactory(conversation=conversation, content="One more question")
    age(conversation, minutes=40)
    assert quiet_ai_judge_due(judge=judge, limit=50) == 1
    assert asked[-1] == (conversation.pk, conversation.last_activity_at)


def test_a_judgement_that_could_not_be_queued_is_asked_again(redis_url):
    account = AccountFactory(auto_resolve_ai_after_minutes=30)
    ai_handled(account, minutes_ago=45)
    calls = []

    def broker_down(*, conversation_id, quiet_since):
        calls.append(conversation_id)
        return False

    assert quiet_ai_judge_due(judge=broker_down, limit=50) == 0
    assert quiet_ai_judge_due(judge=broker_down, limit=50) == 0
    assert len(calls) == 2  # the claim was given back each time


def test_conversation_handed_back_to_the_ai_is_not_judged_at_once(redis_url):
    account = AccountFactory(auto_resolve_ai_after_minutes=30)
    conversation = ai_handled(account, minutes_ago=600)
    Message.objects.create(
        account=account,
        inbox=conversation.inbox,
        conversation=conversation,
        message_type=Message.Type.ACTIVITY,
        sender_type=Message.SenderType.SYSTEM,
        content="Ann changed the status from open to pending.",
    )

    assert quiet_ai_due(now=timezone.now(), limit=50) == []


def test_beat_runs_each_timer_and_workers_register_them(settings):
    from config import celery_app

    assert "helpdesk.timers" in celery_app.conf.imports  # imported by every worker, not only by this test
    celery_app.loader.import_default_modules()
    for key, every in [
        ("helpdesk-snoozed-wake", 60.0),
        ("helpdesk-auto-resolve-ai", 60.0),
        ("helpdesk-auto-resolve-waiting", 300.0),
    ]:
        entry = settings.CELERY_BEAT_SCHEDULE[key]
        assert entry["task"] in celery_app.tasks
        assert entry["schedule"] == every
