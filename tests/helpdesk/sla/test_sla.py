"""SLA policies: due times from the conversation's own facts (handed to people, people's replies, the customer's
messages, resolution), counted in business hours when the policy says so, and each missed target recorded once
with an activity line and a notification, even when two sweeps run at once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from helpdesk.models import Conversation, Message, Notification, SlaBreach, SlaPolicy
from helpdesk.selectors.sla import sla_breach_rates, sla_label_target, sla_targets
from helpdesk.services.sla import sla_breaches_mark
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory, MessageFactory, UserFactory

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # a Monday


def handed_conversation(
    *, hours: str = "", business_hours_only: bool = False, **targets: int
) -> Conversation:
    inbox = InboxFactory(provider_config={"business_hours": hours, "time_zone": "UTC"} if hours else {})
    policy = SlaPolicy.objects.create(
        account=inbox.account, name="Standard", business_hours_only=business_hours_only, **targets
    )
    inbox.sla_policy = policy
    inbox.save(update_fields=["sla_policy"])
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.OPEN)
    Conversation.objects.filter(pk=conversation.pk).update(
        created_at=T0 - timedelta(hours=1), escalated_at=T0
    )
    return Conversation.objects.select_related("inbox__sla_policy", "inbox__account").get(pk=conversation.pk)


def message(conversation: Conversation, at: datetime, **fields: object) -> Message:
    created = MessageFactory(conversation=conversation, **fields)
    Message.objects.filter(pk=created.pk).update(created_at=at)
    return created


def people_reply(conversation: Conversation, at: datetime) -> Message:
    return message(
        conversation,
        at,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        content="Hi",
    )


def targets(conversation: Conversation) -> dict[str, tuple[datetime, datetime | None]]:
    found = sla_targets([conversation])[conversation.pk]
    return {t.kind: (t.due_at, t.met_at) for t in found}


@pytest.mark.django_db
def test_first_response_is_met_by_a_person_not_by_the_ai_or_a_note():
    conversation = handed_conversation(first_response_minutes=30)
    message(
        conversation, T0 + timedelta(minutes=1), message_type=Message.Type.OUTGOING, sender_type="assistant"
    )
    message(
        conversation,
        T0 + timedelta(minutes=2),
        message_type=Message.Type.OUTGOING,
        sender_type="user",
        private=True,
    )
    assert targets(conversation) == {"first_response": (T0 + timedelta(minutes=30), None)}
    people_reply(conversation, T0 + timedelta(minutes=12))
    assert targets(conversation) == {
        "first_response": (T0 + timedelta(minutes=30), T0 + timedelta(minutes=12))
    }


@pytest.mark.django_db
def test_next_response_runs_from_a_customer_message_people_have_not_answered():
    conversation = handed_conversation(next_response_minutes=15)
    people_reply(conversation, T0 + timedelta(minutes=5))
    assert "next_response" not in targets(conversation)
    message(conversation, T0 + timedelta(minutes=20), content="and another thing")
    assert targets(conversation)["next_response"] == (T0 + timedelta(minutes=35), None)
    people_reply(conversation, T0 + timedelta(minutes=30))
    assert "next_response" not in targets(conversation)


@pytest.mark.django_db
def test_resolution_is_met_when_resolved():
    conversation = handed_conversation(resolution_minutes=240)
    Conversation.objects.filter(pk=conversation.pk).update(
        status=Conversation.Status.RESOLVED, resolved_at=T0 + timedelta(hours=1)
    )
    conversation.refresh_from_db()
    assert targets(conversation) == {"resolution": (T0 + timedelta(hours=4), T0 + timedelta(hours=1))}


@pytest.mark.django_db
def test_business_hours_only_counts_open_minutes():
    # Handed at 10:00 on Monday with hours 09:00-11:00: 60 minutes that day, the other 60 on Tuesday.
    conversation = handed_conversation(
        hours="mon-fri 09:00-11:00", business_hours_only=True, first_response_minutes=120
    )
    assert targets(conversation)["first_response"][0] == datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_a_conversation_the_ai_has_has_no_sla():
    conversation = handed_conversation(first_response_minutes=30)
    Conversation.objects.filter(pk=conversation.pk).update(status=Conversation.Status.PENDING)
    conversation.refresh_from_db()
    assert sla_targets([conversation]) == {}


@pytest.mark.django_db
def test_a_missed_target_is_recorded_once_with_a_line_and_a_notification():
    conversation = handed_conversation(first_response_minutes=30)
    agent = UserFactory()
    MembershipFactory(account=conversation.account, user=agent)
    Conversation.objects.filter(pk=conversation.pk).update(assignee=agent)
    assert sla_breaches_mark(now=T0 + timedelta(minutes=29)) == 0
    assert sla_breaches_mark(now=T0 + timedelta(minutes=31)) == 1
    assert sla_breaches_mark(now=T0 + timedelta(minutes=45)) == 0
    breach = SlaBreach.objects.get()
    assert (breach.kind, breach.due_at, breach.policy.name) == (
        "first_response",
        T0 + timedelta(minutes=30),
        "Standard",
    )
    lines = conversation.messages.filter(message_type=Message.Type.ACTIVITY).values_list("content", flat=True)
    assert [line for line in lines if line.startswith("SLA: First response missed")]
    assert Notification.objects.filter(user=agent, kind=Notification.Kind.SLA_BREACH).count() == 1
    label = sla_label_target(sla_targets([conversation])[conversation.pk])
    assert label is not None and label.breached(T0 + timedelta(minutes=45))


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_record_a_breach_once():
    conversation = handed_conversation(first_response_minutes=30)
    start = threading.Barrier(2)
    counts: list[int] = []

    def sweep() -> None:
        try:
            start.wait(5)
            counts.append(sla_breaches_mark(now=T0 + timedelta(hours=1)))
        finally:
            connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(counts) == [0, 1]
    assert SlaBreach.objects.filter(conversation=conversation).count() == 1


@pytest.mark.django_db
def test_breach_rates_per_policy():
    conversation = handed_conversation(first_response_minutes=30)
    answered = ConversationFactory(contact_inbox__inbox=conversation.inbox, status=Conversation.Status.OPEN)
    Conversation.objects.filter(pk=answered.pk).update(created_at=T0)
    people_reply(answered, T0 + timedelta(minutes=5))
    assert sla_breaches_mark(now=T0 + timedelta(hours=1)) == 1
    (row,) = sla_breach_rates(
        account_id=conversation.account_id, since=T0 - timedelta(days=1), until=T0 + timedelta(days=1)
    )
    assert row == {"policy": "Standard", "conversations": 2, "breached": 1, "rate": 0.5}


@pytest.mark.django_db
def test_a_sweep_goes_through_every_batch(monkeypatch):
    from helpdesk.services import sla

    monkeypatch.setattr(sla, "SWEEP_BATCH", 2)
    first = handed_conversation(first_response_minutes=30)
    for _ in range(4):
        other = ConversationFactory(contact_inbox__inbox=first.inbox, status=Conversation.Status.OPEN)
        Conversation.objects.filter(pk=other.pk).update(escalated_at=T0)
    assert sla_breaches_mark(now=T0 + timedelta(hours=1)) == 5
