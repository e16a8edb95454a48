"""Follow-up suggestions after the reply, from the background lane: the reply goes out at once without buttons,
and a task queued on `captain_background` after it committed asks the model (the scripted OpenAI-compatible
server on 127.0.0.1, through the real `openai` SDK) and sends the questions as a second, free message with the
channel's quick replies, delivered through the outbox to a real HTTP receiver. Real Redis (broker and locks)."""

from __future__ import annotations

import base64
import json
import threading

import pytest
import redis
from django.db import connection
from opentelemetry import trace

from captain.answering.models import CreditBalance, CreditLedgerEntry, ReplyJob, Run, SpanRecord
from captain.answering.services.follow_ups import follow_up_key
from captain.answering.services.runs import run_for_message
from captain.answering.tasks import reply_suggestions_send
from helpdesk.models import Conversation, Delivery, Inbox, Message
from helpdesk.services.conversations import conversation_escalate
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_llm_server import Step, error, text

REPLY = "Refunds reach your card within 5 working days."
REFUND_POLICY = "Refunds reach the customer's card within 5 working days."
QUESTIONS = ["Can I get the refund on another card?", "How do I track my refund?"]


def is_suggestions_call(request: dict) -> bool:
    response_format = request.get("response_format") or {}
    return response_format.get("json_schema", {}).get("name") == "follow_up_questions"


def scripted(request: dict) -> Step:
    """The team's call gets the answer, the suggestions' call (known by its response format) the questions."""
    if is_suggestions_call(request):
        return text(json.dumps({"suggestions": QUESTIONS}), prompt_tokens=120, completion_tokens=20)
    return text(REPLY, prompt_tokens=300, completion_tokens=14)


def queued_args(redis_url: str, queue: str) -> list[list]:
    """The positional arguments of the tasks waiting on `queue`, oldest first, as the worker will read them."""
    raw = redis.Redis.from_url(redis_url).lrange(queue, 0, -1)
    messages = [json.loads(m) for m in reversed(raw)]
    return [json.loads(base64.b64decode(m["body"]))[0] for m in messages]


def queued(redis_url: str, queue: str) -> list[tuple[str, str]]:
    """(task name, arguments) of the tasks waiting on `queue`, oldest first."""
    raw = redis.Redis.from_url(redis_url).lrange(queue, 0, -1)
    messages = [json.loads(m) for m in reversed(raw)]  # LPUSH: newest first
    return [(m["headers"]["task"], m["headers"]["argsrepr"]) for m in messages]


@pytest.fixture
def receiver():
    with CallbackReceiver() as server:
        yield server


@pytest.fixture
def link(receiver):
    return AssistantInboxFactory(
        assistant__suggestions_enabled=True,
        # The reply's "5 working days" must come from somewhere the grounding check accepts.
        assistant__instructions=REFUND_POLICY,
        inbox__callback_url=receiver.url,
        inbox__secret="api-secret",
    )


def customer_writes(link, content="How long does a refund take?", conversation=None) -> Message:
    return MessageFactory(
        conversation=conversation or ConversationFactory(contact_inbox__inbox=link.inbox),
        content=content,
        reply_job=ReplyJob.Status.PENDING,
    )


def answered(link, django_capture_on_commit_callbacks) -> Message:
    """A customer's question answered and its reply delivered; the reply."""
    incoming = customer_writes(link)
    with django_capture_on_commit_callbacks(execute=True):
        assert run_for_message(message_id=incoming.id) == "reply"
    reply = Message.objects.get(conversation=incoming.conversation, message_type=Message.Type.OUTGOING)
    assert message_deliver.apply(args=[reply.id]).get() == "sent"
    return reply


def follow_ups() -> list[Message]:
    return list(Message.objects.filter(provider_message_id__startswith="ai-suggestions:"))


@pytest.mark.django_db
def test_the_reply_goes_out_before_the_suggestions_call_then_the_questions_follow_free(
    redis_url, llm_settings, receiver, link, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(scripted)
    incoming = customer_writes(link)
    with django_capture_on_commit_callbacks(execute=True):
        assert run_for_message(message_id=incoming.id) == "reply"
    reply = Message.objects.get(message_type=Message.Type.OUTGOING)
    # The run made one model call: the reply did not wait for the suggestions'.
    assert [is_suggestions_call(r) for r in llm_settings.requests] == [False]
    assert (reply.content, reply.quick_replies) == (REPLY, [])
    # Queued after commit, on the background lane (with the run's trace context), next to the reply's delivery.
    [(name, args)] = queued(redis_url, "captain_background")
    assert name == "captain.tasks.reply_suggestions_send"
    assert args.startswith(f"({reply.id}, {{")
    assert ("helpdesk.tasks.message_deliver", reply.id) in [
        (name, int(args.strip("(),").split(",")[0])) for name, args in queued(redis_url, "helpdesk")
    ]

    assert message_deliver.apply(args=[reply.id]).get() == "sent"
    [first] = receiver.events
    assert first["json"]["text"] == REPLY
    assert "suggestions" not in first["json"]
    assert len(llm_settings.requests) == 1  # the customer has the reply; the suggestions call is not made yet

    [task_args] = queued_args(redis_url, "captain_background")
    assert reply_suggestions_send.apply(args=task_args).get() == "sent"
    assert [is_suggestions_call(r) for r in llm_settings.requests] == [False, True]
    [follow_up] = follow_ups()
    assert (follow_up.content, follow_up.quick_replies) == ("You can also ask:", QUESTIONS)
    assert follow_up.provider_message_id == follow_up_key(reply.id)
    assert follow_up.sender_type == Message.SenderType.ASSISTANT
    assert message_deliver.apply(args=[follow_up.id]).get() == "sent"
    second = receiver.events[1]
    assert second["json"]["text"] == "You can also ask:"
    assert second["json"]["suggestions"] == QUESTIONS
    # One charge, for the reply; the follow-up has no ledger row and the run counts the call's tokens.
    assert list(CreditLedgerEntry.objects.values_list("message_id", flat=True)) == [reply.id]
    assert CreditBalance.objects.get(account=link.assistant.account).used == 1
    run = Run.objects.get()
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (2, 420, 34)
    # The call is a span of the run's own trace, so the run's debug log shows it.
    trace.get_tracer_provider().force_flush()
    [span] = [
        s
        for s in SpanRecord.objects.filter(name="gen_ai.chat")
        if s.attributes.get("gen_ai.agent.id") == "suggestions"
    ]
    assert span.trace_id == run.trace_id
    assert span.attributes["captain.agent.turn"] == 2


@pytest.mark.django_db
def test_a_failing_suggestions_call_leaves_the_reply_alone_and_sends_nothing(
    redis_url, llm_settings, receiver, link, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(lambda r: error(500) if is_suggestions_call(r) else text(REPLY))
    reply = answered(link, django_capture_on_commit_callbacks)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "none"
    assert follow_ups() == []
    reply.refresh_from_db()
    assert (reply.content, reply.quick_replies, reply.delivery.status) == (REPLY, [], Delivery.Status.SENT)
    assert [e["json"]["text"] for e in receiver.events] == [REPLY]
    assert CreditLedgerEntry.objects.count() == 1


@pytest.mark.django_db
def test_a_retried_task_sends_one_follow_up_not_two(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(scripted)
    reply = answered(link, django_capture_on_commit_callbacks)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "sent"
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "already_sent"
    [follow_up] = follow_ups()
    assert Delivery.objects.filter(message=follow_up).count() == 1
    assert sum(is_suggestions_call(r) for r in llm_settings.requests) == 1  # the retry asks the model nothing


@pytest.mark.django_db
def test_confirmation_buttons_stay_with_their_reply_and_queue_no_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    from captain.answering.services.outcomes import outcome_apply
    from captain.runtime import PendingCall, Reply

    incoming = customer_writes(link)
    with django_capture_on_commit_callbacks(execute=True):
        applied = outcome_apply(
            conversation_id=incoming.conversation_id,
            assistant=link.assistant,
            outcome=Reply(
                "Cancel order 123?", confirmation=PendingCall("cancel_order", {"id": "123"}, "Cancel?", "")
            ),
            result=None,
            agent_names={},
            trigger_message_ids=[incoming.id],
            trace_id="",
            duration_ms=1,
            credits=1,
        )
    assert applied.reply_message is not None
    assert applied.reply_message.quick_replies == ["Yes", "No"]
    assert queued(redis_url, "captain_background") == []


@pytest.mark.django_db
def test_a_newer_customer_message_before_the_task_means_no_call_and_no_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(scripted)
    reply = answered(link, django_capture_on_commit_callbacks)
    customer_writes(link, "And for a gift card?", conversation=reply.conversation)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "moved_on"
    assert follow_ups() == []
    assert sum(is_suggestions_call(r) for r in llm_settings.requests) == 0


def during_the_suggestions_call(llm_settings, change) -> None:
    """The scripted model runs `change` (in its own thread and database connection) while it answers the
    suggestions' call: what happens to the conversation while the question is being thought of."""

    def responder(request: dict) -> Step:
        if is_suggestions_call(request):
            try:
                change()
            finally:
                connection.close()
        return scripted(request)

    llm_settings.set_responder(responder)


@pytest.mark.django_db(transaction=True)
def test_a_customer_message_during_the_call_means_no_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    conversation_box: list[Conversation] = []
    during_the_suggestions_call(
        llm_settings, lambda: customer_writes(link, "Gift cards too?", conversation=conversation_box[0])
    )
    reply = answered(link, django_capture_on_commit_callbacks)
    conversation_box.append(reply.conversation)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "moved_on"
    assert sum(is_suggestions_call(r) for r in llm_settings.requests) == 1
    assert follow_ups() == []


@pytest.mark.django_db(transaction=True)
def test_a_handoff_during_the_call_means_no_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    handed: list[int] = []

    def hand_off() -> None:
        conversation = Conversation.objects.get(pk=handed[0])
        conversation_escalate(conversation=conversation, reason="asked for a person", customer_message="")

    during_the_suggestions_call(llm_settings, hand_off)
    reply = answered(link, django_capture_on_commit_callbacks)
    handed.append(reply.conversation_id)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "moved_on"
    assert Conversation.objects.get(pk=reply.conversation_id).status != Conversation.Status.PENDING
    assert follow_ups() == []


@pytest.mark.django_db
def test_a_reply_whose_delivery_failed_gets_no_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(scripted)
    incoming = customer_writes(link)
    with django_capture_on_commit_callbacks(execute=False):
        assert run_for_message(message_id=incoming.id) == "reply"
    reply = Message.objects.get(message_type=Message.Type.OUTGOING)
    Delivery.objects.filter(pk=reply.id).update(status=Delivery.Status.FAILED)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "not_delivered"
    assert follow_ups() == []


@pytest.mark.django_db
def test_chinese_questions_come_with_the_line_in_chinese(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    def chinese(request: dict) -> Step:
        if is_suggestions_call(request):
            return text(json.dumps({"suggestions": ["退款多久到账？"]}))
        return text(REPLY)

    llm_settings.set_responder(chinese)
    reply = answered(link, django_capture_on_commit_callbacks)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "sent"
    [follow_up] = follow_ups()
    assert (follow_up.content, follow_up.quick_replies) == ("您还可以问：", ["退款多久到账？"])


def test_the_task_is_background_work():
    from captain import lanes

    assert lanes.lane_of_task("captain.tasks.reply_suggestions_send") == lanes.BACKGROUND


@pytest.mark.django_db
def test_an_email_inbox_gets_no_follow_up_and_no_call(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    # A letter leaves quick replies out: the follow-up would be a mail saying only "You can also ask:".
    llm_settings.set_responder(scripted)
    incoming = customer_writes(link)
    with django_capture_on_commit_callbacks(execute=False):
        assert run_for_message(message_id=incoming.id) == "reply"
    reply = Message.objects.get(message_type=Message.Type.OUTGOING)
    Inbox.objects.filter(pk=link.inbox_id).update(channel_type=Inbox.ChannelType.EMAIL)
    assert reply_suggestions_send.apply(args=[reply.id]).get() == "skipped"
    assert follow_ups() == []
    assert sum(is_suggestions_call(r) for r in llm_settings.requests) == 0


@pytest.mark.django_db(transaction=True)
def test_two_copies_of_the_task_at_once_send_one_follow_up(
    redis_url, llm_settings, link, django_capture_on_commit_callbacks
):
    # A redelivered task running beside the first: both ask the model (the barrier holds each call until the other
    # one is in flight too), and the conversation's row lock and the dedup key let only one of them send.
    both_asking = threading.Barrier(2, timeout=10)

    def responder(request: dict) -> Step:
        if is_suggestions_call(request):
            both_asking.wait()
        return scripted(request)

    llm_settings.set_responder(responder)
    reply = answered(link, django_capture_on_commit_callbacks)
    outcomes: list[str] = []

    def run_task() -> None:
        try:
            outcomes.append(reply_suggestions_send.apply(args=[reply.id]).get())
        finally:
            connection.close()

    threads = [threading.Thread(target=run_task) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["already_sent", "sent"]
    assert sum(is_suggestions_call(r) for r in llm_settings.requests) == 2
    [follow_up] = follow_ups()
    assert Delivery.objects.filter(message=follow_up).count() == 1
