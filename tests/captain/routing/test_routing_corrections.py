"""Learning from corrections: which messages become pending routing examples, and the three signals that record
them (a person re-routes, a specialist hands the message back, a person takes over right after a switch)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from captain.answering.models import ReplyJob
from captain.routing.models import RoutingDecision, RoutingExample
from captain.routing.services.routing_corrections import (
    MAX_CORRECTION_CHARS,
    conversation_reroute,
    correction_from_takeover,
    corrections_from_dispatch,
    hand_backs,
    record_correction,
)
from captain.routing.services.routing_examples import examples_in_use
from captain.runtime.routing import Decision
from helpdesk.models import Conversation, Message
from helpdesk.services.conversations import conversation_set_status
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MessageFactory,
    ScenarioFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

Signal = RoutingExample.Signal


@pytest.fixture
def setup():
    link = AssistantInboxFactory()
    assistant = link.assistant
    ScenarioFactory(assistant=assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=assistant, key="shipping", title="Shipping", description="Parcels")
    ScenarioFactory(assistant=assistant, key="old", title="Old", description="Old", enabled=False)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, content="  Where is   my parcel?\n")
    return assistant, conversation, message


def decide(conversation, message, node, target, *, phase="after_input", trace_id="t1") -> RoutingDecision:
    return RoutingDecision.objects.create(
        account_id=conversation.account_id,
        conversation=conversation,
        message=message,
        trace_id=trace_id,
        node=node,
        phase=phase,
        mode="semantic",
        target=target,
        switched=node != target,
    )


def record(conversation, message, right_key="shipping", routed_to="refunds", signal=Signal.REROUTE):
    return record_correction(
        conversation=conversation, message=message, right_key=right_key, signal=signal, routed_to=routed_to
    )


# ---- record_correction ------------------------------------------------------------------------------------------


def test_a_customer_message_becomes_a_pending_correction_for_the_right_node(setup):
    assistant, conversation, message = setup

    example = record(conversation, message)

    assert example is not None
    assert (example.assistant, example.account_id, example.key, example.text) == (
        assistant,
        assistant.account_id,
        "shipping",
        "Where is my parcel?",  # blanks collapsed: one sentence typed twice is one example
    )
    assert (example.source, example.status, example.signal, example.routed_to) == (
        "correction",
        "pending",
        "reroute",
        "refunds",
    )
    assert (example.conversation, example.message) == (conversation, message)
    # Pending corrections are not used by the router until an administrator accepts them.
    assert "Where is my parcel?" not in examples_in_use(assistant).get("shipping", [])


def test_a_repeat_returns_the_existing_row_and_a_rejected_text_stays_rejected(setup):
    _assistant, conversation, message = setup
    first = record(conversation, message)
    again = record(conversation, MessageFactory(conversation=conversation, content="Where is my parcel?"))
    assert again == first and RoutingExample.objects.count() == 1

    RoutingExample.objects.filter(pk=first.pk).update(status="rejected")
    third = record(conversation, message, signal=Signal.TAKEOVER)

    assert third.pk == first.pk and third.status == "rejected" and third.signal == "reroute"
    assert RoutingExample.objects.count() == 1


def test_the_same_text_may_be_proposed_for_another_node(setup):
    _assistant, conversation, message = setup
    record(conversation, message, right_key="shipping")
    record(conversation, message, right_key="assistant")

    assert sorted(RoutingExample.objects.values_list("key", flat=True)) == ["assistant", "shipping"]


@pytest.mark.parametrize(
    "change",
    [
        {"content": ""},
        {"content": "   \n "},
        {"content": "x" * (MAX_CORRECTION_CHARS + 1)},  # skipped, not cut: a head is not the request
        {"message_type": "outgoing", "sender_type": "assistant"},  # the AI's reply
        {"message_type": "outgoing", "sender_type": "user"},  # a person's reply
        {"private": True, "sender_type": "user", "message_type": "outgoing"},  # a note
    ],
)
def test_nothing_is_recorded_for_messages_that_teach_nothing(setup, change):
    _assistant, conversation, _message = setup
    message = MessageFactory(conversation=conversation, **change)

    assert record(conversation, message) is None
    assert not RoutingExample.objects.exists()


def test_a_message_of_exactly_the_limit_is_kept(setup):
    _assistant, conversation, _message = setup
    message = MessageFactory(conversation=conversation, content="y" * MAX_CORRECTION_CHARS)

    assert record(conversation, message) is not None


@pytest.mark.parametrize(
    ("right_key", "routed_to"),
    [
        ("refunds", "refunds"),  # the router already chose it
        ("nowhere", "refunds"),  # unknown key
        ("old", "refunds"),  # disabled scenario
        ("human", "refunds"),  # people have no examples the router reads
    ],
)
def test_nothing_is_recorded_for_keys_that_teach_nothing(setup, right_key, routed_to):
    _assistant, conversation, message = setup

    assert record(conversation, message, right_key=right_key, routed_to=routed_to) is None
    assert not RoutingExample.objects.exists()


def test_another_conversations_message_or_an_inbox_without_assistant_records_nothing(setup):
    _assistant, conversation, _message = setup
    elsewhere = MessageFactory(conversation=ConversationFactory(contact_inbox__inbox=conversation.inbox))
    no_ai = ConversationFactory()
    no_ai_message = MessageFactory(conversation=no_ai)

    assert record(conversation, elsewhere) is None
    assert record(no_ai, no_ai_message) is None
    assert not RoutingExample.objects.exists()


def test_an_accepted_correction_is_used_next_to_the_nodes_examples(setup):
    assistant, conversation, message = setup
    example = record(conversation, message)
    from captain.routing.services.routing_examples import review_examples

    review_examples(assistant=assistant, ids=[example.pk], accept=True)

    assert examples_in_use(assistant)["shipping"] == ["Where is my parcel?"]


# ---- signal: a specialist hands the message back ----------------------------------------------------------------


def d(node, target, phase="after_input", mode="semantic") -> Decision:
    return Decision(node=node, phase=phase, mode=mode, candidates=[], target=target)


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        # refunds hands back, triage routes on to shipping: the message was shipping's.
        ([d("refunds", "assistant"), d("assistant", "shipping", "redispatch")], [("shipping", "refunds")]),
        # triage keeps it: the message was triage's.
        ([d("refunds", "assistant"), d("assistant", "assistant", "redispatch")], [("assistant", "refunds")]),
        # no hand-back: a plain switch, a stay, triage's own after-reply decision.
        ([d("assistant", "refunds")], []),
        ([d("refunds", "refunds")], []),
        ([d("refunds", "assistant"), d("assistant", "shipping", "after_reply")], []),
        # a builder's rule back to triage is not re-dispatched: nothing follows it.
        ([d("refunds", "assistant", mode="rule")], []),
    ],
)
def test_hand_backs_are_a_specialists_return_followed_by_triages_redispatch(decisions, expected):
    assert hand_backs(decisions) == expected


def test_a_hand_back_in_a_runs_decisions_records_a_correction(setup):
    _assistant, conversation, message = setup

    recorded = corrections_from_dispatch(
        conversation=conversation,
        message_id=message.pk,
        decisions=[
            d("refunds", "assistant"),
            d("assistant", "shipping", "redispatch"),
            d("shipping", "shipping"),
        ],
    )

    example = RoutingExample.objects.get()
    assert recorded == [example]
    assert (example.key, example.routed_to, example.signal, example.message) == (
        "shipping",
        "refunds",
        "hand_back",
        message,
    )


def test_a_hand_back_to_people_or_without_a_message_records_nothing(setup):
    _assistant, conversation, message = setup
    back_then_people = [d("refunds", "assistant"), d("assistant", "human", "redispatch")]

    assert (
        corrections_from_dispatch(
            conversation=conversation, message_id=message.pk, decisions=back_then_people
        )
        == []
    )
    assert (
        corrections_from_dispatch(
            conversation=conversation,
            message_id=None,
            decisions=[d("refunds", "assistant"), d("assistant", "shipping", "redispatch")],
        )
        == []
    )
    assert not RoutingExample.objects.exists()


def test_a_failure_while_learning_never_reaches_the_run(setup, monkeypatch):
    _assistant, conversation, message = setup

    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("captain.routing.services.routing_corrections.record_correction", broken)

    assert (
        corrections_from_dispatch(
            conversation=conversation,
            message_id=message.pk,
            decisions=[d("refunds", "assistant"), d("assistant", "shipping", "redispatch")],
        )
        == []
    )


def test_a_run_whose_specialist_hands_back_records_the_correction(redis_url, llm_settings):
    """Through the run service (what the Celery task calls): router-mode nodes, the scripted model answers."""
    from captain.answering.services.runs import run_for_message
    from captain.routing.services.routing import GraphSpec, routing_replace
    from tests.support.fake_llm_server import text

    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=link.assistant, key="shipping", title="Shipping", description="Parcels")
    routing_replace(assistant=link.assistant, spec=GraphSpec(config={"default_mode": "router"}))
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, ai_agent_key="refunds")
    message = MessageFactory(
        conversation=conversation, content="Where is my parcel?", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("It ships tomorrow."))  # refunds hands back, triage routes on, shipping answers

    assert run_for_message(message_id=message.id) == "reply"

    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "shipping"
    example = RoutingExample.objects.get()
    assert (example.key, example.text, example.routed_to, example.signal, example.status) == (
        "shipping",
        "Where is my parcel?",
        "refunds",
        "hand_back",
        "pending",
    )


def test_a_run_without_a_hand_back_records_nothing(redis_url, llm_settings):
    from captain.answering.services.runs import run_for_message
    from captain.routing.services.routing import GraphSpec, routing_replace
    from tests.support.fake_llm_server import text

    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    routing_replace(assistant=link.assistant, spec=GraphSpec(config={"default_mode": "router"}))
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, content="refund", reply_job=ReplyJob.Status.PENDING)
    llm_settings.push(text("Refund started."))

    assert run_for_message(message_id=message.id) == "reply"
    assert not RoutingExample.objects.exists()


# ---- signal: a person takes over right after a switch ----------------------------------------------------------


@pytest.fixture
def switched(setup):
    """The router just moved the customer's message from triage to refunds."""
    assistant, conversation, message = setup
    decide(conversation, message, "assistant", "refunds")
    Conversation.objects.filter(pk=conversation.pk).update(ai_agent_key="refunds")
    return assistant, conversation, message


def test_taking_over_right_after_a_switch_records_a_correction_for_the_node_left(switched):
    _assistant, conversation, message = switched

    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())

    example = RoutingExample.objects.get()
    assert (example.key, example.routed_to, example.signal, example.message) == (
        "assistant",
        "refunds",
        "takeover",
        message,
    )


def test_replying_while_the_ai_handles_it_is_a_takeover_too(switched):
    _assistant, conversation, _message = switched

    message_create_agent_reply(conversation=conversation, user=UserFactory(), content="I'll help you.")

    assert RoutingExample.objects.get().signal == "takeover"


def test_a_takeover_after_the_window_records_nothing(switched, settings):
    _assistant, conversation, _message = switched
    settings.CAPTAIN = {**settings.CAPTAIN, "CORRECTION_TAKEOVER_SECONDS": 60}
    RoutingDecision.objects.update(created_at=timezone.now() - timedelta(seconds=61))

    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())

    assert not RoutingExample.objects.exists()


def test_the_window_is_read_from_the_setting(switched, settings):
    _assistant, conversation, _message = switched
    RoutingDecision.objects.update(created_at=timezone.now() - timedelta(seconds=200))
    settings.CAPTAIN = {**settings.CAPTAIN, "CORRECTION_TAKEOVER_SECONDS": 0}
    assert correction_from_takeover(conversation_id=conversation.pk) is None

    settings.CAPTAIN = {**settings.CAPTAIN, "CORRECTION_TAKEOVER_SECONDS": 300}
    assert correction_from_takeover(conversation_id=conversation.pk).key == "assistant"


def test_a_takeover_after_a_decision_that_stayed_records_nothing(setup):
    _assistant, conversation, message = setup
    decide(conversation, message, "refunds", "refunds")

    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())

    assert not RoutingExample.objects.exists()


def test_a_takeover_after_a_hand_back_and_redispatch_names_where_the_message_found_the_conversation(setup):
    _assistant, conversation, message = setup
    decide(conversation, message, "refunds", "assistant")
    decide(conversation, message, "assistant", "shipping", phase="redispatch")

    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())

    keys = set(RoutingExample.objects.values_list("key", "routed_to", "signal"))
    assert keys == {("refunds", "shipping", "takeover")}


def test_the_ai_handing_over_or_people_changing_other_statuses_is_no_takeover(switched):
    _assistant, conversation, _message = switched

    conversation_set_status(conversation=conversation, status="open", actor="The AI")
    conversation_set_status(conversation=conversation, status="resolved", actor=UserFactory())

    assert not RoutingExample.objects.exists()


def test_a_failing_takeover_hook_does_not_cost_the_person_their_takeover(switched, monkeypatch):
    _assistant, conversation, _message = switched

    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("captain.routing.services.routing_corrections.correction_from_takeover", broken)

    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())

    assert Conversation.objects.get(pk=conversation.pk).status == "open"


# ---- signal: a person re-routes (the service; the page and the API have their own tests) -------------------------


def test_rerouting_supersedes_the_inferred_corrections_of_the_same_message(switched):
    _assistant, conversation, _message = switched
    conversation_set_status(conversation=conversation, status="open", actor=UserFactory())
    assert RoutingExample.objects.get().signal == "takeover"

    done = conversation_reroute(conversation=conversation, key="shipping", user=UserFactory())

    example = RoutingExample.objects.get()
    assert done.correction == example
    assert (example.key, example.routed_to, example.signal) == ("shipping", "refunds", "reroute")
    # People had it: it goes back to the AI, at shipping.
    conversation.refresh_from_db()
    assert (conversation.status, conversation.ai_agent_key, done.moved) == ("pending", "shipping", True)


def test_rerouting_a_resolved_conversation_only_records_the_correction(switched):
    _assistant, conversation, _message = switched
    Conversation.objects.filter(pk=conversation.pk).update(status="resolved")

    done = conversation_reroute(conversation=conversation, key="shipping", user=UserFactory())

    conversation.refresh_from_db()
    assert (done.moved, conversation.status, conversation.ai_agent_key) == (False, "resolved", "refunds")
    assert RoutingExample.objects.get().key == "shipping"


def test_rerouting_without_any_routed_message_only_moves_the_node(setup):
    _assistant, conversation, _message = setup

    done = conversation_reroute(conversation=conversation, key="refunds", user=UserFactory())

    assert done.correction is None and done.moved
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "refunds"
    # Nothing said to the customer; the team sees who moved it in the thread.
    assert not Message.objects.filter(conversation=conversation, message_type="outgoing").exists()
    activity = Message.objects.get(conversation=conversation, message_type="activity")
    assert activity.content.endswith("moved the conversation to the topic Refunds.")
