"""The memory benchmark's plumbing: its datasets measure what they claim, its scoring is honest both ways, and a
conversation really goes through ingest and the run path in each mode (a scripted model on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.memory.dataset import Conversation, Variable, load_set, mentions, problems
from bench.memory.harness import HISTORY_MESSAGES, bench_account, history_window, play
from bench.memory.scoring import mode_figures, score
from tests.support import fake_llm_server as fake

DATA = Path(__file__).resolve().parents[2] / "bench" / "memory" / "data"

ORDER = Conversation(
    id="t1",
    lang="en",
    company="Kettle & Co",
    description="Kettle & Co sells kitchenware online.",
    variables=(Variable("order_number", "The order number the customer gave (like A-1234)."),),
    turns=(
        "hi, my order A-1111 is late",
        "sorry, wrong number, it's A-2222",
        "do you ship to Orkney?",
        "what payment methods do you take?",
        "can I change the colour after ordering?",
        "which order number did I give you?",
    ),
    expect=("A-2222",),
    stale=("A-1111",),
)


# ---- datasets ------------------------------------------------------------------------------------------------


def test_both_sets_load_and_hold_the_promised_mix():
    main, heldout = load_set(DATA / "main.jsonl"), load_set(DATA / "heldout.jsonl")
    assert len(main) >= 24 and len(heldout) >= 12
    for conversations in (main, heldout):
        zh = sum(c.lang == "zh" for c in conversations)
        changed = sum(c.changed for c in conversations)
        assert abs(zh - len(conversations) / 2) <= 2
        assert len(conversations) / 4 <= changed <= len(conversations) / 2
    # Held out means other facts: no expected value of one set is the answer in the other.
    main_values = {v.lower() for c in main for v in c.expect}
    assert not main_values & {v.lower() for c in heldout for v in c.expect}


def test_a_conversation_that_cannot_measure_memory_is_refused(tmp_path):
    assert problems(ORDER) == []
    leaked = Conversation(**{**ORDER.__dict__, "turns": (*ORDER.turns[:-1], "is it still A-2222?")})
    assert any("last 2 turns" in p for p in problems(leaked))
    short = Conversation(**{**ORDER.__dict__, "turns": (*ORDER.turns[:3], ORDER.turns[-1])})
    assert any("fewer than 3 other turns" in p for p in problems(short))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**ORDER.__dict__, "variables": [], "turns": list(ORDER.turns)}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1 \(t1\): no variables"):
        load_set(bad)


# ---- scoring -------------------------------------------------------------------------------------------------


def test_right_needs_the_latest_value_and_no_stale_one():
    assert score("Your order is a-2222.", ORDER).right  # case-insensitive
    both = score("You first said A-1111, then A-2222.", ORDER)
    assert (both.right, both.stale) == (False, True)
    stale = score("Your order number is A-1111.", ORDER)
    assert (stale.right, stale.stale) == (False, True)
    assert score("I don't have your order number.", ORDER) == type(stale)(
        right=False, stale=False, wrong=False
    )


def test_values_match_across_spaces_and_full_width_but_not_inside_longer_numbers():
    assert mentions("the reg is kx19 abd", ["KX19ABD"])
    assert mentions("订单号ＤＤ２０９３１", ["DD20931"])
    assert mentions("每月12元", ["12"])
    assert not mentions("每月120元", ["12"])
    assert not mentions("costs 16.99", ["6.99"])


@pytest.mark.django_db
def test_the_well_formed_marker_is_read_from_a_runs_spans_and_missing_is_none():
    from django.utils import timezone

    from bench.memory.harness import well_formed_marker
    from captain.answering.models import SpanRecord

    def span(trace: str, n: int, events: list, attributes: dict | None = None) -> None:
        now = timezone.now()
        SpanRecord.objects.create(
            trace_id=trace,
            span_id=f"{n:016x}",
            name="captain.agent",
            start_time=now,
            end_time=now,
            attributes=attributes or {},
            events=events,
        )

    shaped = {"name": "captain.structured_reply", "attributes": {"captain.reply.well_formed": True}}
    span("a" * 32, 1, [shaped])
    assert well_formed_marker("a" * 32) is True
    span("b" * 32, 2, [shaped])
    span("b" * 32, 3, [], {"captain.reply.shape": "salvaged"})  # one broken reply in the run: not well formed
    assert well_formed_marker("b" * 32) is False
    span("c" * 32, 4, [{"name": "captain.transfer_promised", "attributes": {"x.shape": "json"}}])
    assert well_formed_marker("c" * 32) is None  # nothing about a reply: no marker
    assert well_formed_marker("") is None


# ---- end to end through ingest and the run path -----------------------------------------------------------------

ORDER_NUMBER = re.compile(r"\b[A-Z]-\d{4}\b")


class CarelessModel:
    """A scripted model that answers from what its prompt shows, and otherwise from the first order number it
    ever heard (the way a model guesses from stale context). It serves the remember step's schema call too."""

    def __init__(self) -> None:
        self.first_heard: str | None = None
        self.final_requests: list[dict] = []

    def __call__(self, request: dict) -> fake.Step:
        format_name = ((request.get("response_format") or {}).get("json_schema") or {}).get("name")
        last = fake.last_user_message(request)
        if format_name == "remember":
            said = ORDER_NUMBER.findall(last.split("The customer's new message:")[-1])
            found = [{"name": "order_number", "value": said[-1]}] if said else []
            return fake.text(json.dumps({"remember": found}))
        heard = ORDER_NUMBER.findall(last)
        if heard and self.first_heard is None:
            self.first_heard = heard[0]
        if "which order number" not in last:
            return fake.text(json.dumps({"response": "Happy to help with that.", "reasoning": "general"}))
        self.final_requests.append(request)
        in_prompt = ORDER_NUMBER.findall(fake.system_prompt(request))
        in_window = ORDER_NUMBER.findall(" ".join(str(m.get("content")) for m in request["messages"][1:]))
        value = (in_prompt or in_window or [self.first_heard])[-1]
        return fake.text(json.dumps({"response": f"Your order number is {value}.", "reasoning": "asked"}))


@pytest.fixture
def bench(redis_url):
    from bench.knowledge.harness import product_settings
    from captain.assistants.services import model_endpoints

    model = CarelessModel()
    with (
        fake.FakeLLMServer(responder=model) as server,
        product_settings(base_url=server.base_url, model="scripted", redis_url=redis_url, timeout=5),
        history_window(),
    ):
        yield model, server
    model_endpoints.operator_clients_clear()


@pytest.mark.django_db(transaction=True)
def test_each_mode_answers_every_turn_and_is_scored(bench):
    model, server = bench
    account_id = bench_account()

    history = play(ORDER, mode="history", account_id=account_id, serial=1)
    # The model's guess on the last turn names an order number no message it saw holds: the grounding check
    # refuses it twice and the customer gets a person instead of a stale number.
    assert [t.outcome for t in history.turns] == ["reply"] * (len(ORDER.turns) - 1) + ["human_handoff"]
    assert not any("remember" in json.dumps(r.get("response_format")) for r in server.requests)
    # The fact has left the 4-message window by the final question: the model guessed from what it heard first.
    window = [m["content"] for m in model.final_requests[-1]["messages"] if m["role"] != "system"]
    assert HISTORY_MESSAGES == 4 and len(window) == 3 and not ORDER_NUMBER.findall(" ".join(window))
    assert "A-1111" not in history.final_reply and "colleague" in history.final_reply
    verdict = score(history.final_reply, ORDER)
    assert (verdict.right, verdict.stale) == (False, False)

    model.first_heard = None
    memory = play(ORDER, mode="memory", account_id=account_id, serial=1)
    assert [t.outcome for t in memory.turns] == ["reply"] * len(ORDER.turns)
    assert memory.remembered == {"order_number": "A-2222"}
    assert "A-2222" in fake.system_prompt(model.final_requests[-1])
    assert memory.final_reply == "Your order number is A-2222."
    verdict = score(memory.final_reply, ORDER)
    assert (verdict.right, verdict.stale) == (True, False)

    figures = {"history": mode_figures([history]), "memory": mode_figures([memory])}
    assert figures["history"]["right"] == "0/1 (0%)" and figures["history"]["stale_answers"] == 0
    assert figures["memory"]["right"] == "1/1 (100%)" and figures["memory"]["stale_answers"] == 0
    assert figures["memory"]["reasoning_kept"] == f"{len(ORDER.turns)}/{len(ORDER.turns)} (100%)"
    assert figures["memory"]["handoffs"] == 0
