"""The LLM outage matrix end to end: webhook -> real worker -> real `openai` SDK -> scripted model server that
misbehaves on cue. Every case ends in a reply (after a retry within the budget) or a human handoff; failures
cost nothing; the customer never sees a blank or internal text."""

from __future__ import annotations

import time

import pytest

from captain.answering.models import CreditLedgerEntry, Run
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory, ScenarioFactory
from tests.support import fake_llm_server as fake
from tests.support.servers import wait_for

from .conftest import SECRET, captain_settings, post_message

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HANDOFF = "A teammate will take it from here."
# Strings that would betray an internal error reaching the customer.
INTERNAL = ("error", "traceback", "exception", "http", "script", "refused", "modelerror", "none", "{")

# name -> (steps the model server answers with, in order; expected run outcome)
MATRIX: dict[str, tuple[list[fake.Step], str]] = {
    "429 Retry-After then ok": (
        [fake.error(429, retry_after=1), fake.text("Reply after a rate limit.")],
        "reply",
    ),
    "500 then ok": ([fake.error(500), fake.text("Reply after a server hiccup.")], "reply"),
    "503 twice": ([fake.error(503), fake.error(503)], "error"),
    "429 twice": ([fake.error(429, retry_after=1), fake.error(429, retry_after=1)], "error"),
    "timeout then ok": ([fake.delay(4, fake.text("late")), fake.text("Reply after a timeout.")], "reply"),
    "timeout twice": ([fake.delay(4, fake.text("late")), fake.delay(4, fake.text("late"))], "error"),
    "connection reset then ok": ([fake.reset(), fake.text("Reply after a reset.")], "reply"),
    "connection reset twice": ([fake.reset(), fake.reset()], "error"),
    "invalid JSON": ([fake.invalid_json()], "error"),
    "no choices": ([fake.raw({"id": "x", "object": "chat.completion", "choices": []})], "error"),
    "blank text": ([fake.text("")], "error"),
    "unknown tool": (
        [fake.tool_call("delete_all_customers", {}), fake.text("Reply after an unknown tool.")],
        "reply",
    ),
    "handoff to a non-adjacent agent": (
        [
            fake.tool_call("handoff_to_refunds", {"reason": "refund"}),
            fake.tool_call("handoff_to_shipping", {"reason": "not allowed from refunds"}),
            fake.text("Reply from refunds."),
        ],
        "reply",
    ),
}


def test_llm_outage_matrix(client, workers):
    link = AssistantInboxFactory(inbox__secret=SECRET)
    ScenarioFactory(assistant=link.assistant, title="Refunds", key="refunds", description="Refunds")
    ScenarioFactory(assistant=link.assistant, title="Shipping", key="shipping", description="Shipping")
    rows = []
    with fake.FakeLLMServer() as model, captain_settings(DEBOUNCE_SECONDS=0.0):
        # One retry inside the budget (the SDK's own), a short per-attempt timeout so "timeout" cases are quick.
        workers.start(OPENAI_BASE_URL=model.base_url, CAPTAIN_LLM_TIMEOUT="1.5", CAPTAIN_LLM_MAX_RETRIES="1")
        for n, (name, (steps, _expected)) in enumerate(MATRIX.items()):
            model.push(*steps)
            calls_before = len(model.requests)
            started = time.monotonic()
            assert (
                post_message(client, link.inbox, f"o-{n}", "Where is my refund?", contact=f"m{n}").status_code
                == 200
            )
            wait_for(
                lambda n=n: Run.objects.count() > n, timeout=60, what=f"run for {name}\n{workers.logs()}"
            )
            run = Run.objects.order_by("-id").first()
            conversation = Conversation.objects.get(contact_inbox__source_id=f"m{n}")
            sent = list(conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False))
            charges = CreditLedgerEntry.objects.filter(message__conversation=conversation).count()
            rows.append(
                (
                    name,
                    run.outcome,
                    len(model.requests) - calls_before,
                    time.monotonic() - started,
                    charges,
                    sent,
                )
            )
            assert model.remaining == 0, f"{name}: {model.remaining} scripted steps were not used"

    print("\nFIGURE LLM outage matrix (1 SDK retry, 1.5 s per attempt):")
    for name, outcome, calls, seconds, charges, sent in rows:
        print(
            f"  {name:34} -> {outcome:13} calls={calls} {seconds:4.1f} s charges={charges} sent={[m.content for m in sent]}"
        )
    for (name, (_, expected)), (_, outcome, _, seconds, charges, sent) in zip(
        MATRIX.items(), rows, strict=True
    ):
        assert outcome == expected, name
        assert len(sent) == 1, name
        text = sent[0].content
        assert text.strip(), f"{name}: blank text sent"
        if outcome == "reply":
            assert text.startswith("Reply"), name
            assert charges == 1, name
        else:
            assert text == HANDOFF, name
            assert charges == 0, name
            assert Conversation.objects.get(pk=sent[0].conversation_id).status == Conversation.Status.OPEN
        assert not any(marker in text.lower() for marker in INTERNAL), f"{name}: internal text sent: {text!r}"
        assert seconds < 30, name  # well inside the run budget
    assert Run.objects.filter(outcome="reply", route=["assistant", "refunds"]).count() == 1
