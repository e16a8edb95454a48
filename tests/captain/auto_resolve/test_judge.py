"""Auto-resolve of quiet AI conversations, end to end in one process: helpdesk's sweep -> the responder's hook ->
captain's task (run eagerly) -> the assistant's model, a scripted OpenAI-compatible server over real HTTP ->
resolved, handed over, or (a failed judgement) handed over."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from captain.answering.models import CreditLedgerEntry, Run, SpanRecord
from captain.answering.services.locks import conversation_lock
from captain.assistants.models import AssistantInbox
from captain.auto_resolve.prompts import Judgement
from captain.auto_resolve.services.auto_resolve import (
    SPAN_AUTO_RESOLVE,
    Asked,
    judge_quiet_conversation,
    judgement_apply,
)
from config import celery_app
from helpdesk import timers
from helpdesk.models import Conversation, Membership, Message
from tests.factories import (
    AssistantInboxFactory,
    ContactInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
)
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db

RESOLVED = '{"verdict": "resolved", "reason": "The customer confirmed the parcel arrived and said thanks."}'
NEEDS_PEOPLE = '{"verdict": "needs_people", "reason": "The customer still has no refund date."}'


@pytest.fixture
def eager():
    """Tasks run in this process when queued, so the whole chain runs inside the test's transaction."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def model(llm_settings, redis_url, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "LLM_TIMEOUT_SECONDS": 2.0}
    return llm_settings


def quiet_conversation(*, minutes_ago: float = 45, account_minutes: int | None = 30, link=None):
    link = link or AssistantInboxFactory(
        assistant__resolution_message="Glad that's sorted! Write any time if you need us again."
    )
    link.assistant.account.auto_resolve_ai_after_minutes = account_minutes
    link.assistant.account.save(update_fields=["auto_resolve_ai_after_minutes"])
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=link.inbox), status=Conversation.Status.PENDING
    )
    MessageFactory(conversation=conversation, content="Where is my parcel 4411?")
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="It was delivered this morning to your front door.",
    )
    MessageFactory(conversation=conversation, content="Found it, thanks!")
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        private=True,
        sender_type=Message.SenderType.USER,
        content="internal: VIP customer",
    )
    at = timezone.now() - timedelta(minutes=minutes_ago)
    Message.objects.filter(conversation=conversation).update(created_at=at)
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=at)
    conversation.refresh_from_db()
    return conversation, link.assistant


def thread(conversation, **filters):
    return list(Message.objects.filter(conversation=conversation, **filters).order_by("id"))


def test_resolved_verdict_sends_the_resolution_message_and_resolves_for_free(model, eager):
    model.push(fake.text(RESOLVED, prompt_tokens=120, completion_tokens=20))
    conversation, assistant = quiet_conversation()

    assert timers.auto_resolve_ai_sweep() == 1

    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED
    assert conversation.resolved_by == Conversation.ResolvedBy.AI
    assert conversation.resolved_at is not None
    sent = thread(conversation, message_type=Message.Type.OUTGOING, sender_type=Message.SenderType.ASSISTANT)
    assert sent[-1].content == assistant.resolution_message
    assert conversation.first_reply_at is None  # the resolution message is not a first response
    activity = [m.content for m in thread(conversation, message_type=Message.Type.ACTIVITY)]
    assert (
        "The AI resolved the conversation after 45 minutes of quiet: "
        "The customer confirmed the parcel arrived and said thanks."
    ) in activity
    # Free: no ledger row at all, and the run says so.
    assert not CreditLedgerEntry.objects.filter(account_id=conversation.account_id).exists()
    run = Run.objects.get(conversation=conversation)
    assert run.outcome == Run.Outcome.RESOLVE and run.credit_used is False
    assert run.reply_message_id == sent[-1].pk
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (1, 120, 20)
    # One span per judgement, in the run's trace, with its model call under it.
    span = SpanRecord.objects.get(trace_id=run.trace_id, name=SPAN_AUTO_RESOLVE)
    assert span.attributes["captain.auto_resolve.verdict"] == "resolved"
    assert span.attributes["captain.credit_used"] is False
    assert span.attributes["captain.conversation.id"] == conversation.pk
    assert SpanRecord.objects.filter(
        trace_id=run.trace_id, name="gen_ai.chat", parent_span_id=span.span_id
    ).exists()
    # What the judge saw: the public transcript in order, not the private note; a strict JSON verdict asked.
    request = model.requests[0]
    user = request["messages"][1]["content"]
    assert user.index("Customer: Where is my parcel 4411?") < user.index("AI assistant: It was delivered")
    assert user.index("AI assistant: It was delivered") < user.index("Customer: Found it, thanks!")
    assert "VIP" not in json.dumps(request)
    assert request["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"] == [
        "resolved",
        "needs_people",
    ]


def test_needs_people_verdict_hands_over_with_a_plain_reason(model, eager):
    model.push(fake.text(NEEDS_PEOPLE))
    conversation, assistant = quiet_conversation()

    assert timers.auto_resolve_ai_sweep() == 1

    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.escalated_at is not None
    assert conversation.escalation_reason == (
        "The customer went quiet and the AI judged they still need help: The customer still has no refund date."
    )
    sent = thread(conversation, message_type=Message.Type.OUTGOING, sender_type=Message.SenderType.ASSISTANT)
    assert sent[-1].content == assistant.handoff_message
    run = Run.objects.get(conversation=conversation)
    assert run.outcome == Run.Outcome.HUMAN_HANDOFF and run.credit_used is False
    assert not CreditLedgerEntry.objects.filter(account_id=conversation.account_id).exists()


@pytest.mark.parametrize(
    ("step", "why"),
    [
        (fake.error(500), "could not be reached or answered with an error"),
        (fake.text("I think the customer is probably happy."), "not a verdict it could read"),
        (fake.text('{"verdict": "maybe", "reason": "unsure"}'), "not a verdict it could read"),
        (fake.text('{"verdict": "resolved", "reason": ""}'), "not a verdict it could read"),
        (fake.delay(3.0, fake.text(RESOLVED)), "timed out after 2 s"),
    ],
    ids=["http-500", "prose", "unknown-verdict", "no-reason", "timeout"],
)
def test_a_failed_judgement_hands_over(model, eager, step, why):
    model.push(step)
    conversation, _ = quiet_conversation()

    assert timers.auto_resolve_ai_sweep() == 1

    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.escalation_reason.startswith(
        "The customer went quiet and the AI could not judge whether the conversation was resolved ("
    )
    assert why in conversation.escalation_reason
    assert "HTTP" not in conversation.escalation_reason  # plain language, no internals
    run = Run.objects.get(conversation=conversation)
    assert run.outcome == Run.Outcome.ERROR and run.credit_used is False
    span = SpanRecord.objects.get(trace_id=run.trace_id, name=SPAN_AUTO_RESOLVE)
    assert span.attributes["captain.auto_resolve.verdict"] == "failed"


def test_the_sweep_does_not_judge_one_quiet_period_twice(model, redis_url):
    """Not eager: the judgement is queued on the real broker and not yet run when the next sweeps come."""
    conversation, _ = quiet_conversation()
    broker = redis.Redis.from_url(redis_url)

    assert timers.auto_resolve_ai_sweep() == 1
    assert timers.auto_resolve_ai_sweep() == 0
    assert timers.auto_resolve_ai_sweep() == 0

    queued = [json.loads(m) for m in broker.lrange("captain_background", 0, -1)]
    assert [m["headers"]["task"] for m in queued] == ["captain.tasks.auto_resolve_judge"]
    assert model.requests == []  # nothing judged yet
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.PENDING


def test_a_judgement_already_applied_is_not_applied_again(model, eager):
    model.push(fake.text(RESOLVED))
    conversation, _ = quiet_conversation()
    quiet_since = conversation.last_activity_at
    timers.auto_resolve_ai_sweep()

    # The same task delivered twice (a redelivery): the conversation is no longer the quiet pending one.
    assert judge_quiet_conversation(conversation_id=conversation.pk, quiet_since=quiet_since) == "changed"
    assert len(model.requests) == 1
    assert Run.objects.filter(conversation=conversation).count() == 1


def test_a_conversation_with_a_run_in_progress_is_left_for_the_next_sweep(model, eager):
    conversation, _ = quiet_conversation()
    lock = conversation_lock(conversation.pk)
    assert lock.acquire()  # a reply run holds the conversation
    try:
        assert timers.auto_resolve_ai_sweep() == 1  # queued, ran, found it busy
    finally:
        lock.release()
    assert model.requests == []
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.PENDING
    # The claim was given back: the next sweep asks again, and this time it is judged.
    model.push(fake.text(RESOLVED))
    assert timers.auto_resolve_ai_sweep() == 1
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED


def test_a_pending_reply_job_goes_first(model, eager):
    conversation, _ = quiet_conversation()
    MessageFactory(conversation=conversation, content="Hello?", reply_job="pending")
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=conversation.last_activity_at)

    assert (
        judge_quiet_conversation(conversation_id=conversation.pk, quiet_since=conversation.last_activity_at)
        == "busy"
    )
    assert model.requests == []


def test_a_customer_message_during_the_judgement_wins(model):
    """The verdict is applied only if, under the row lock, the conversation is still the quiet one judged. (The
    model server runs in another thread and cannot write to the test's database, so the message arrives between
    the model call and the apply by calling the apply step directly.)"""
    conversation, assistant = quiet_conversation()
    quiet_since = conversation.last_activity_at
    MessageFactory(conversation=conversation, content="Actually, one more thing")  # ingest's new activity:
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=timezone.now())

    outcome = judgement_apply(
        conversation_id=conversation.pk,
        quiet_since=quiet_since,
        assistant=assistant,
        asked=Asked(Judgement(verdict="resolved", reason="Thanked.")),
        quiet_minutes=45,
        trace_id="",
        duration_ms=5,
    )

    assert outcome == "changed"
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.PENDING
    assert not Run.objects.filter(conversation=conversation).exists()
    assert not thread(conversation, message_type=Message.Type.ACTIVITY)


def test_each_account_is_judged_by_its_own_setting(model, eager):
    model.set_responder(lambda request: fake.text(RESOLVED))
    judged, _ = quiet_conversation(minutes_ago=45, account_minutes=30)
    patient, _ = quiet_conversation(minutes_ago=45, account_minutes=120)
    off, _ = quiet_conversation(minutes_ago=10_000, account_minutes=None)

    assert timers.auto_resolve_ai_sweep() == 1

    assert Conversation.objects.get(pk=judged.pk).status == Conversation.Status.RESOLVED
    assert Conversation.objects.get(pk=patient.pk).status == Conversation.Status.PENDING
    assert Conversation.objects.get(pk=off.pk).status == Conversation.Status.PENDING
    assert len(model.requests) == 1
    assert "4411" in model.requests[0]["messages"][1]["content"]
    # Only the judged account's conversation is in the request: nothing of the others' threads leaks in.
    assert Run.objects.filter(account_id__in=[patient.account_id, off.account_id]).count() == 0


def test_no_assistant_on_the_inbox_any_more_hands_over_without_a_model_call(model, eager):
    conversation, assistant = quiet_conversation()
    AssistantInbox.objects.filter(assistant=assistant).delete()

    assert timers.auto_resolve_ai_sweep() == 1

    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert "no assistant answers this inbox any more" in conversation.escalation_reason
    assert model.requests == []
    assert Run.objects.get(conversation=conversation).outcome == Run.Outcome.ERROR


def test_the_judgement_appears_in_the_conversations_debug_log_for_its_account_only(model, eager, client):
    model.push(fake.text(RESOLVED))
    conversation, assistant = quiet_conversation()
    timers.auto_resolve_ai_sweep()
    admin = MembershipFactory(account=assistant.account, role=Membership.Role.ADMIN).user
    outsider = MembershipFactory(role=Membership.Role.ADMIN).user
    url = f"/app/accounts/{conversation.account_id}/conversations/{conversation.id}/runs/"

    client.force_login(admin)
    page = client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "Auto-resolve after 45 minutes of quiet." in body
    assert SPAN_AUTO_RESOLVE in body

    client.force_login(outsider)
    assert client.get(url).status_code in (403, 404)
    foreign = f"/app/accounts/{MembershipFactory(user=outsider, role=Membership.Role.ADMIN).account_id}"
    assert client.get(f"{foreign}/conversations/{conversation.id}/runs/").status_code == 404
