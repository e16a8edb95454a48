"""Automation rules: the event is published after commit (once per transaction, never on rollback), each
condition and action kind, a failing webhook recorded without retries, and the loop bounds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import (
    AutomationRule,
    AutomationRun,
    CannedResponse,
    Conversation,
    Inbox,
    Label,
    Membership,
    Message,
    Team,
    TeamMember,
)
from helpdesk.services import automation_rules
from helpdesk.services.automation import automation_event
from helpdesk.services.automation_rules import automation_evaluate
from helpdesk.services.conversations import conversation_add_label, conversation_set_priority
from helpdesk.services.messages import message_ingest
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory, MessageFactory, UserFactory

from .conftest import queued_evaluations

pytestmark = pytest.mark.django_db


def rule(conversation: Conversation, *, event: str = "message_created", conditions=None, actions=None, **kw):
    return AutomationRule.objects.create(
        account=conversation.account,
        name=kw.pop("name", "Rule"),
        event=event,
        conditions=conditions or {},
        actions=actions or [{"kind": "add_label", "value": "matched"}],
        **kw,
    )


def labels(conversation: Conversation) -> set[str]:
    return set(conversation.labels.values_list("name", flat=True))


# ---- the entry point -------------------------------------------------------------------------------------


def test_an_event_is_published_once_per_transaction_after_commit(
    redis_url, django_capture_on_commit_callbacks
):
    conversation = ConversationFactory()
    rule(conversation, event="conversation_updated")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        conversation_set_priority(conversation=conversation, priority="high", by="Test")
        conversation_add_label(conversation=conversation, name="vip", by="Test")
        assert queued_evaluations(redis_url) == []  # not before the commit
    assert queued_evaluations(redis_url) == [
        {"event": "conversation_updated", "conversation_id": conversation.pk, "message_id": None}
    ]


def test_a_rolled_back_change_publishes_nothing(redis_url, django_capture_on_commit_callbacks):
    conversation = ConversationFactory()
    rule(conversation, event="conversation_updated")
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            conversation_set_priority(conversation=conversation, priority="high", by="Test")
            raise RuntimeError("rolled back")
        # The same event in a later transaction is not mistaken for one already queued.
        with transaction.atomic():
            conversation_set_priority(conversation=conversation, priority="low", by="Test")
    assert len(queued_evaluations(redis_url)) == 1


def test_an_account_without_rules_for_the_event_queues_nothing(redis_url, django_capture_on_commit_callbacks):
    conversation = ConversationFactory()
    rule(conversation, event="message_created")
    rule(conversation, event="conversation_updated", name="Off", active=False)
    with django_capture_on_commit_callbacks(execute=True):
        conversation_set_priority(conversation=conversation, priority="high", by="Test")
    assert queued_evaluations(redis_url) == []


def test_a_new_customer_conversation_reports_created_and_message_created(
    redis_url, django_capture_on_commit_callbacks
):
    inbox = InboxFactory()
    AutomationRule.objects.create(
        account=inbox.account, name="A", event="conversation_created", actions=[{"kind": "resolve"}]
    )
    AutomationRule.objects.create(
        account=inbox.account, name="B", event="message_created", actions=[{"kind": "resolve"}]
    )
    inbound = InboundMessage(provider_message_id="m1", contact=InboundContact(source_id="c1"), text="Hi")
    with django_capture_on_commit_callbacks(execute=True):
        result = message_ingest(inbox=inbox, inbound=inbound)
    conversation_id = result.message.conversation_id
    assert queued_evaluations(redis_url) == [
        {"event": "conversation_created", "conversation_id": conversation_id, "message_id": None},
        {"event": "message_created", "conversation_id": conversation_id, "message_id": result.message.pk},
    ]


def test_an_unknown_event_is_refused():
    with pytest.raises(ValueError):
        automation_event(event="conversation_exploded", conversation_id=1)


# ---- conditions --------------------------------------------------------------------------------------------


def test_the_inbox_and_channel_conditions():
    conversation = ConversationFactory()
    other_inbox = InboxFactory(account=conversation.account)
    rule(conversation, name="here", conditions={"inbox_ids": [conversation.inbox_id]})
    rule(
        conversation, name="there", conditions={"inbox_ids": [other_inbox.pk]}, actions=[{"kind": "resolve"}]
    )
    rule(
        conversation,
        name="api",
        conditions={"channel_types": [Inbox.ChannelType.API]},
        actions=[{"kind": "add_label", "value": "api"}],
    )
    rule(
        conversation,
        name="tg",
        conditions={"channel_types": [Inbox.ChannelType.TELEGRAM]},
        actions=[{"kind": "add_label", "value": "tg"}],
    )
    runs = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert sorted(r.rule_name for r in runs) == ["api", "here"]
    assert labels(conversation) == {"matched", "api"}


def test_the_business_hours_condition_asks_the_inboxs_hours_now():
    from datetime import UTC, datetime

    from helpdesk.business_hours import DAYS

    closed = f"{DAYS[(datetime.now(UTC).weekday() + 3) % 7]} 09:00-17:00"  # no minute today or tomorrow
    night = ConversationFactory(contact_inbox__inbox=InboxFactory(provider_config={"business_hours": closed}))
    always = ConversationFactory(contact_inbox__inbox=InboxFactory(provider_config={}))
    for conversation in (night, always):
        rule(conversation, name="outside", conditions={"business_hours": "outside"})
        rule(
            conversation,
            name="inside",
            conditions={"business_hours": "inside"},
            actions=[{"kind": "add_label", "value": "open"}],
        )
    assert [r.rule_name for r in automation_evaluate(event="message_created", conversation_id=night.pk)] == [
        "outside"
    ]
    assert [r.rule_name for r in automation_evaluate(event="message_created", conversation_id=always.pk)] == [
        "inside"
    ]
    assert labels(night) == {"matched"} and labels(always) == {"open"}
    with pytest.raises(ValidationError, match="business_hours"):
        AutomationRule(
            account=night.account,
            name="bad",
            event="message_created",
            conditions={"business_hours": "lunch"},
            actions=[{"kind": "resolve"}],
        ).full_clean()


def test_the_labels_condition_needs_every_label():
    conversation = ConversationFactory()
    conversation_add_label(conversation=conversation, name="vip", by="Test")
    rule(conversation, name="both", conditions={"labels": ["vip", "billing"]}, actions=[{"kind": "resolve"}])
    rule(conversation, name="vip", conditions={"labels": ["VIP"]})
    assert [
        r.rule_name for r in automation_evaluate(event="message_created", conversation_id=conversation.pk)
    ] == ["vip"]


def test_text_contains_reads_the_message_or_else_the_last_customer_message():
    conversation = ConversationFactory()
    message = MessageFactory(conversation=conversation, content="I want a REFUND please")
    MessageFactory(conversation=conversation, content="thanks", message_type=Message.Type.OUTGOING)
    rule(conversation, conditions={"text_contains": "refund"})
    assert (
        len(
            automation_evaluate(
                event="message_created", conversation_id=conversation.pk, message_id=message.pk
            )
        )
        == 1
    )
    other = MessageFactory(conversation=conversation, content="hello")
    assert (
        automation_evaluate(event="message_created", conversation_id=conversation.pk, message_id=other.pk)
        == []
    )
    assert (
        len(automation_evaluate(event="message_created", conversation_id=conversation.pk)) == 0
    )  # "hello" last


def test_contact_attribute_equals():
    conversation = ConversationFactory(contact_inbox__contact__custom_attributes={"plan": "gold"})
    rule(conversation, name="gold", conditions={"contact_attribute": {"key": "plan", "value": "gold"}})
    rule(
        conversation,
        name="free",
        conditions={"contact_attribute": {"key": "plan", "value": "free"}},
        actions=[{"kind": "resolve"}],
    )
    assert [
        r.rule_name for r in automation_evaluate(event="message_created", conversation_id=conversation.pk)
    ] == ["gold"]


def test_ai_outcome_handoff_or_reply():
    conversation = ConversationFactory(status=Conversation.Status.PENDING)
    ai_reply = MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
    )
    rule(
        conversation,
        name="reply",
        conditions={"ai_outcome": "reply"},
        actions=[{"kind": "add_label", "value": "r"}],
    )
    rule(
        conversation,
        name="handoff",
        conditions={"ai_outcome": "handoff"},
        actions=[{"kind": "add_label", "value": "h"}],
    )
    automation_evaluate(event="message_created", conversation_id=conversation.pk, message_id=ai_reply.pk)
    assert labels(conversation) == {"r"}
    Conversation.objects.filter(pk=conversation.pk).update(escalated_at=timezone.now(), status="open")
    automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert labels(conversation) == {"r", "h"}


# ---- actions -----------------------------------------------------------------------------------------------


def test_every_macro_action_kind_goes_through_the_services(settings):
    conversation = ConversationFactory(status=Conversation.Status.OPEN)
    conversation_add_label(conversation=conversation, name="old", by="Test")
    agent = MembershipFactory(account=conversation.account).user
    team = Team.objects.create(account=conversation.account, name="Billing", auto_assign=False)
    CannedResponse.objects.create(
        account=conversation.account, short_code="thanks", content="Thanks for writing!"
    )
    rule(
        conversation,
        actions=[
            {"kind": "add_label", "value": "new"},
            {"kind": "remove_label", "value": "old"},
            {"kind": "assign_agent", "value": agent.pk},
            {"kind": "assign_team", "value": team.pk},
            {"kind": "set_priority", "value": "urgent"},
            {"kind": "send_canned", "value": "thanks"},
            {"kind": "add_note", "value": "Checked by the rule"},
            {"kind": "snooze", "value": 60},
        ],
    )
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.error == ""
    assert len(run.actions_done) == 8
    conversation.refresh_from_db()
    assert labels(conversation) == {"new"}
    assert (conversation.assignee, conversation.team, conversation.priority) == (agent, team, "urgent")
    assert conversation.status == Conversation.Status.SNOOZED
    assert (
        timezone.now() + timedelta(minutes=59)
        < conversation.snoozed_until
        < timezone.now() + timedelta(minutes=61)
    )
    sent = Message.objects.get(conversation=conversation, content="Thanks for writing!")
    assert (sent.message_type, sent.private, sent.sender_type) == ("outgoing", False, "system")
    assert Message.objects.filter(
        conversation=conversation, private=True, content="Checked by the rule"
    ).exists()
    activity = list(
        Message.objects.filter(conversation=conversation, message_type=Message.Type.ACTIVITY).values_list(
            "content", flat=True
        )
    )
    assert "Automation added the label “new”." in activity
    assert any(
        line.startswith("Automation rule “Rule” ran: added label new, removed label old") for line in activity
    )


def test_resolve_counts_as_people_and_email_team_writes_to_the_team():
    conversation = ConversationFactory(status=Conversation.Status.OPEN)
    team = Team.objects.create(account=conversation.account, name="Billing")
    for name in ("ann", "bob"):
        TeamMember.objects.create(team=team, user=UserFactory(username=name))
    Conversation.objects.filter(pk=conversation.pk).update(team=team)
    rule(
        conversation,
        actions=[{"kind": "email_team", "value": "A VIP wrote\nPlease look."}, {"kind": "resolve"}],
    )
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.actions_done == ["e-mailed the team (2)", "resolved"]
    (sent,) = mail.outbox
    assert sorted(sent.bcc) == ["ann@example.com", "bob@example.com"] and sent.to == []
    assert sent.subject == f"Conversation #{conversation.pk}: A VIP wrote"
    conversation.refresh_from_db()
    assert (conversation.status, conversation.resolved_by) == ("resolved", "agent")


def test_a_failed_action_is_recorded_and_the_next_still_runs():
    conversation = ConversationFactory()
    rule(
        conversation,
        actions=[
            {"kind": "send_canned", "value": "missing"},
            {"kind": "assign_team", "value": 999999},
            {"kind": "email_team", "value": "no team"},
            {"kind": "add_label", "value": "after"},
        ],
    )
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.actions_done == ["added label after"]
    assert run.error == (
        "send_canned: there is no canned response /missing; assign_team: team #999999 is not one of this "
        "account's; email_team: the conversation has no team to e-mail"
    )
    assert Message.objects.filter(
        conversation=conversation,
        content__startswith="Automation rule “Rule” ran: added label after. Failed:",
    ).exists()


def test_the_webhook_gets_the_event_and_a_500_is_recorded_once_without_retries(receiver):
    conversation = ConversationFactory()
    rule(
        conversation,
        actions=[{"kind": "call_webhook", "value": receiver.url}, {"kind": "add_label", "value": "x"}],
    )
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.actions_done == ["called webhook (200)", "added label x"]
    assert receiver.bodies[0]["event"] == "message_created"
    assert receiver.bodies[0]["conversation"]["conversation_id"] == conversation.pk

    receiver.status = 500
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert len(receiver.bodies) == 2  # one call per run: no retry storm
    assert run.error == "call_webhook: webhook answered HTTP 500"
    assert run.actions_done == ["added label x"]  # nothing else lost


def test_a_slow_webhook_times_out_within_the_bound(receiver, monkeypatch):
    monkeypatch.setattr(automation_rules, "WEBHOOK_TIMEOUT_SECONDS", 0.3)
    receiver.delay = 2.0
    conversation = ConversationFactory()
    rule(conversation, actions=[{"kind": "call_webhook", "value": receiver.url}])
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.error == "call_webhook: webhook timed out after 0.3 s"


def test_the_webhook_goes_through_the_outbound_policy(settings):
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    conversation = ConversationFactory()
    rule(conversation, actions=[{"kind": "call_webhook", "value": "http://127.0.0.1:9/hook"}])
    (run,) = automation_evaluate(event="message_created", conversation_id=conversation.pk)
    assert run.error.startswith("call_webhook: webhook refused by the outbound policy")


# ---- bounds ------------------------------------------------------------------------------------------------


def test_a_rules_own_changes_trigger_no_rules(redis_url, django_capture_on_commit_callbacks):
    """A rule on conversation_updated that changes the conversation would call itself for ever: its changes
    raise no event, so one run, and nothing queued after it."""
    conversation = ConversationFactory()
    rule(
        conversation,
        event="conversation_updated",
        actions=[{"kind": "set_priority", "value": "high"}, {"kind": "add_label", "value": "loop"}],
    )
    with django_capture_on_commit_callbacks(execute=True):
        runs = automation_evaluate(event="conversation_updated", conversation_id=conversation.pk)
    assert len(runs) == 1
    assert queued_evaluations(redis_url) == []
    # A person's change afterwards still raises the event.
    with django_capture_on_commit_callbacks(execute=True):
        conversation_set_priority(conversation=conversation, priority="low", by="Test")
    assert len(queued_evaluations(redis_url)) == 1


def test_at_most_runs_per_minute_per_conversation(monkeypatch):
    monkeypatch.setattr(automation_rules, "RUNS_PER_MINUTE", 3)
    conversation = ConversationFactory()
    rule(conversation, name="a")
    rule(conversation, name="b")
    assert len(automation_evaluate(event="message_created", conversation_id=conversation.pk)) == 2
    assert len(automation_evaluate(event="message_created", conversation_id=conversation.pk)) == 1
    assert automation_evaluate(event="message_created", conversation_id=conversation.pk) == []
    assert AutomationRun.objects.filter(conversation=conversation).count() == 3
    AutomationRun.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    assert len(automation_evaluate(event="message_created", conversation_id=conversation.pk)) == 2


def test_the_task_runs_the_rules_and_a_deleted_conversation_is_nothing():
    from helpdesk.timers import automation_evaluate as task

    conversation = ConversationFactory()
    rule(conversation)
    assert task(event="message_created", conversation_id=conversation.pk) == 1
    assert task(event="message_created", conversation_id=999999) == 0
    assert Label.objects.filter(name="matched").exists()
    assert Membership.objects.count() == 0
