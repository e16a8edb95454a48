"""The actions benchmark's plumbing: the fake shop keeps a real shop's rules and an honest change log, the data
sets can be judged, the judge is strict both ways, and a task really goes through ingest, the run path, the
custom tools and the confirmation flow against the shop (a scripted model on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from bench.actions.dataset import ExpectedChange, Task, load_set, mentions, task_from
from bench.actions.scoring import (
    TaskRun,
    TurnRecord,
    compression_figures,
    is_planning_tool,
    judge,
    mode_figures,
    verdict_of,
)
from bench.actions.shop import Shop, load_seed
from tests.support import fake_llm_server as fake

DATA = Path(__file__).resolve().parents[2] / "bench" / "actions" / "data"


@pytest.fixture
def shop():
    with Shop() as running:
        yield running


def call(shop: Shop, method: str, path: str, body: Any = None, *, token: str | None = "") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {shop.token if token == '' else token}"} if token is not None else {}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(shop.url + path, method=method, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# ---- the fake shop -------------------------------------------------------------------------------------------


def test_the_shop_needs_its_bearer_token_and_logs_what_the_tools_asked(shop):
    assert call(shop, "GET", "/orders/1001", token=None)[0] == 401
    assert call(shop, "GET", "/orders/1001", token="guess")[0] == 401
    status, order = call(shop, "GET", "/orders/1001")
    assert status == 200 and order["status"] == "shipped" and order["tracking"] == "TRK88213"
    assert call(shop, "GET", "/orders/4242") == (404, {"error": "order 4242 not found"})
    assert call(shop, "GET", "/stock/lamp-oak")[1]["in_stock"] == 0
    status, listing = call(shop, "GET", "/orders?email=mia.chen%40example.com")
    # Long enough that the runtime's default compression threshold (4000 characters) stores it as an artifact.
    assert status == 200 and listing["count"] == 28 and len(json.dumps(listing)) > 8000
    assert [(r.method, r.status) for r in shop.requests] == [
        ("GET", 401), ("GET", 401), ("GET", 200), ("GET", 404), ("GET", 200), ("GET", 200)
    ]  # fmt: skip
    assert shop.changes == []


def test_refunds_follow_the_rules_and_each_change_records_its_turn(shop):
    shop.set_turn(1)
    assert call(shop, "POST", "/orders/1002/refund", {"amount": 30, "reason": "torn"})[0] == 422  # > paid
    assert call(shop, "POST", "/orders/1007/refund", {"amount": 5, "reason": "x"})[0] == 409  # never paid
    assert (
        call(shop, "POST", "/orders/1008/refund", {"amount": 5, "reason": "x"})[0] == 409
    )  # refunded before
    assert call(shop, "POST", "/orders/1002/refund", {"amount": "lots", "reason": "x"})[0] == 422
    assert call(shop, "POST", "/orders/1002/refund", {"amount": 24.5, "reason": "torn"})[0] == 200
    assert call(shop, "POST", "/orders/1002/refund", {"amount": 1, "reason": "again"})[0] == 409  # twice
    assert [(c.turn, c.kind, c.order_id, c.amount) for c in shop.changes] == [(1, "refund", "1002", 24.5)]


def test_shipped_orders_cannot_be_cancelled_or_readdressed(shop):
    assert call(shop, "POST", "/orders/1006/cancel")[0] == 409
    assert call(shop, "PUT", "/orders/1001/address", {"address": "5 Elm Road, Leeds"})[0] == 409
    assert call(shop, "GET", "/orders/1006")[1]["status"] == "shipped"
    shop.set_turn(2)
    assert call(shop, "PUT", "/orders/1004/address", {"address": "12 Baker Street, London"})[0] == 200
    assert call(shop, "POST", "/orders/1005/cancel")[1]["status"] == "cancelled"
    assert call(shop, "POST", "/orders/1005/cancel")[0] == 409  # already cancelled
    assert [(c.turn, c.kind, c.order_id) for c in shop.changes] == [
        (2, "address", "1004"),
        (2, "cancel", "1005"),
    ]


def test_the_judge_endpoints_read_reset_and_set_the_turn(shop):
    assert call(shop, "POST", "/__turn", {"turn": 3}, token=None) == (200, {"turn": 3})
    call(shop, "POST", "/orders/1005/cancel")
    state = call(shop, "GET", "/__state", token=None)[1]
    assert state["orders"]["1005"]["status"] == "cancelled"
    assert state["changes"][0]["turn"] == 3 and state["requests"][0]["path"] == "/orders/1005/cancel"
    assert call(shop, "POST", "/__reset", token=None)[0] == 200
    state = call(shop, "GET", "/__state", token=None)[1]
    assert state["orders"]["1005"]["status"] == "processing" and state["changes"] == [] == state["requests"]
    assert state["orders"] == load_seed()["orders"]


# ---- data sets -----------------------------------------------------------------------------------------------


def test_both_sets_load_and_hold_the_promised_mix():
    main, heldout = load_set(DATA / "main.jsonl"), load_set(DATA / "heldout.jsonl")
    assert len(main) >= 12 and len(heldout) >= 6
    seed = load_seed()
    for tasks in (main, heldout):
        assert {t.kind for t in tasks} == {"lookup", "change", "declined", "impossible"}
        assert any(t.lang == "zh" for t in tasks) and any(t.long_output for t in tasks)
        for task in tasks:
            # A change is expected only after the customer's confirming turn, on an order the shop has.
            assert all(turn >= 1 for turn in task.confirm_turns)
            assert all(c.order_id in seed["orders"] for c in task.changes)
    assert any(not t.possible for t in main) and any(len(t.turns) == 1 and t.kind == "lookup" for t in main)


def test_a_task_that_cannot_be_judged_is_refused(tmp_path):
    with pytest.raises(ValueError, match="names no confirmation turn"):
        task_from({"id": "x", "lang": "en", "kind": "change", "turns": ["refund 1002"],
                   "changes": [{"kind": "refund", "order_id": "1002", "amount": 1}]})  # fmt: skip
    with pytest.raises(ValueError, match="nothing to judge"):
        task_from({"id": "x", "lang": "en", "kind": "lookup", "turns": ["hi"]})
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "lang": "en", "kind": "lookup", "turns": ["hi"], "reply_any": ["a"],
                               "expected": []}) + "\n")  # fmt: skip
    with pytest.raises(ValueError, match=r"bad.jsonl:1: unknown fields \['expected'\]"):
        load_set(bad)


# ---- the judge -----------------------------------------------------------------------------------------------

REFUND = Task(
    id="r",
    lang="en",
    kind="change",
    turns=("refund 24.50 for order 1002", "yes"),
    changes=(ExpectedChange("refund", "1002", 24.5),),
    confirm_turns=(1,),
)
CANCEL_SHIPPED = Task(
    id="c",
    lang="en",
    kind="impossible",
    turns=("cancel 1006", "yes"),
    confirm_turns=(1,),
    possible=False,
    reply_not=("has been cancelled", "已取消"),
)


def refund(turn: int, amount: float = 24.5, order_id: str = "1002") -> dict[str, Any]:
    return {"turn": turn, "kind": "refund", "order_id": order_id, "amount": amount}


def test_success_needs_exactly_the_expected_change_made_after_the_yes():
    assert judge(REFUND, [refund(1)], "Refunded.").success
    early = judge(REFUND, [refund(0)], "Refunded.")
    assert (early.success, early.unconfirmed, early.wrong) == (False, 1, 0)
    wrong_amount = judge(REFUND, [refund(1, 20.0)], "")
    assert (wrong_amount.wrong, wrong_amount.missing, wrong_amount.success) == (1, 1, False)
    twice = judge(REFUND, [refund(1), refund(1)], "")
    assert (twice.wrong, twice.success) == (1, False)
    none = judge(REFUND, [], "Refunded!")
    assert (none.missing, none.success) == (1, False)
    other = judge(REFUND, [refund(1), {"turn": 1, "kind": "cancel", "order_id": "1005"}], "")
    assert (other.wrong, other.unconfirmed, other.success) == (1, 0, False)


def test_an_impossible_task_fails_on_any_change_or_a_claim_of_success():
    assert judge(CANCEL_SHIPPED, [], "Sorry, order 1006 has already shipped and cannot be cancelled.").success
    claim = judge(CANCEL_SHIPPED, [], "Done, your order has been   Cancelled.")
    assert (claim.state_ok, claim.reply_ok, claim.success) == (True, False, False)
    assert not judge(CANCEL_SHIPPED, [], "好的，订单已取消。").success
    changed = judge(
        CANCEL_SHIPPED, [{"turn": 1, "kind": "cancel", "order_id": "1006"}], "It could not be done."
    )
    assert (changed.wrong, changed.success) == (1, False)


def test_address_changes_match_on_the_given_parts_and_numbers_not_inside_longer_ones():
    task = Task(
        id="a", lang="zh", kind="change", turns=("改地址", "是的"), confirm_turns=(1,),
        changes=(ExpectedChange("address", "1009", address_contains=("世纪大道100号",)),),
    )  # fmt: skip
    change = {"turn": 1, "kind": "address", "order_id": "1009", "address": "上海市浦东新区 世纪大道 100号"}
    assert judge(task, [change], "").success
    assert not judge(task, [{**change, "address": "上海市世纪大道1000号"}], "").success
    assert mentions("There are 7 left", ("7",)) and not mentions("order 1007", ("7",))
    assert mentions("Tracking: trk43377", ("TRK43377",))


def test_figures_count_side_effects_calls_tokens_and_thoughts():
    ok = TaskRun(
        task=REFUND, mode="planning", changes=[refund(1)], confirmations=[{"tool": "r", "status": "c"}]
    )
    ok.turns = [
        TurnRecord("refund", "reply", "Refund 24.50?", 2.0, input_tokens=900, llm_calls=2, first_thought_seconds=0.4,
                   thoughts=3, tool_calls={"update_plan": 1, "refund_order": 1}, shop_requests=0),
        TurnRecord("yes", "reply", "Refunded 24.50.", 1.0, input_tokens=600, llm_calls=1, first_thought_seconds=0.2,
                   thoughts=1, tool_calls={"refund_order": 1, "final_answer": 1}, shop_requests=1),
    ]  # fmt: skip
    bad = TaskRun(task=REFUND, mode="planning", changes=[refund(0)])
    bad.turns = [TurnRecord("refund", "reply", "Refunded.", 1.0, input_tokens=100)]
    broken = TaskRun(task=CANCEL_SHIPPED, mode="planning", error="RuntimeError: boom")
    figures = mode_figures([ok, bad, broken])
    assert figures["success"] == "1/3 (33%)" and figures["unconfirmed_side_effects"] == 1
    assert figures["wrong_side_effects"] == 0 and figures["errors"] == 1
    assert figures["shop_calls_per_task"] == round(1 / 3, 1)
    assert figures["tool_calls_per_task"] == round(4 / 3, 1)
    assert figures["planning_calls_per_task"] == round(2 / 3, 1)
    assert figures["prompt_tokens_per_task"] == round(1600 / 3, 1)
    assert figures["first_thought_seconds"] == 0.3 and figures["turns_with_thoughts"] == "2/3 (67%)"
    assert not verdict_of(broken).success
    # A change made right, but the agent then asked to make it again: the question is left open, no success.
    asked_again = TaskRun(task=REFUND, mode="planning", changes=[refund(1)], turns=ok.turns)
    asked_again.confirmations = [
        {"tool": "refund_order", "status": "confirmed"},
        {"tool": "refund_order", "status": "pending"},
    ]
    assert verdict_of(asked_again).dangling == 1 and not verdict_of(asked_again).success
    assert mode_figures([bad])["first_thought_seconds"] == "n/a"
    off = TaskRun(task=REFUND, mode="planning-nocompress", changes=[refund(1)])
    off.turns = [TurnRecord("refund", "reply", "x", 1.0, input_tokens=3000)]
    compression = compression_figures([ok, bad], [off])
    assert compression["prompt_tokens_per_task_off"] == 3000 and compression["success_off"] == "1/1 (100%)"
    assert is_planning_tool("update_plan") and not is_planning_tool("refund_order")


# ---- one task through the real run path ---------------------------------------------------------------------


class ShopClerk:
    """A scripted model that does what a careful agent would: on a refund request it calls `refund_order`; once
    a tool result is in the context it reports it. Decides from the request itself, so the runtime's own order of
    calls does not matter."""

    def __call__(self, request: dict[str, Any]) -> fake.Step:
        results = fake.tool_results(request)
        if results:
            # The jade tea set's order when the whole listing is in the context. Else (a compressed listing) what
            # a careful agent says: not the first order's number, which the grounding check refuses as a value
            # about another order than the one asked about.
            found = re.findall(r'"id": "(\d+)"(?:(?!"id": ).)*TEA-SET-JADE', results[-1])
            if found:
                return self._say(request, f"Tea set order: {found[0]}")
            if '"id": "' in results[-1]:
                return self._say(request, "The listing is long; I cannot see that order in it.")
            return self._say(request, f"Result: {results[-1][:300]}")
        said, offered = fake.last_user_message(request), fake.offered_tools(request)
        if "refund_order" in offered and "refund" in said.lower():
            return fake.tool_call(
                "refund_order", {"order_id": "1002", "amount": 24.5, "reason": "scarf torn"}
            )
        if "find_orders" in offered and (email := re.search(r"[\w.]+@example\.com", said)):
            return fake.tool_call("find_orders", {"email": email.group(0)})
        return self._say(request, "How can I help with your order?")

    @staticmethod
    def _say(request: dict[str, Any], text: str) -> fake.Step:
        if request.get("response_format"):
            return fake.text(json.dumps({"response": text, "reasoning": "scripted"}))
        return fake.text(text)


@pytest.fixture
def bench(redis_url):
    from bench.actions.harness import bench_settings
    from bench.knowledge.harness import product_settings
    from captain.answering.services import live
    from captain.assistants.services import model_endpoints

    live._client.cache_clear()  # a publisher cached by an earlier test would talk to another Redis
    with (
        Shop() as running_shop,
        fake.FakeLLMServer(responder=ShopClerk()) as server,
        product_settings(base_url=server.base_url, model="scripted", redis_url=redis_url, timeout=5),
        bench_settings("scripted"),
    ):
        yield running_shop, server, redis_url
    model_endpoints.operator_clients_clear()
    live._client.cache_clear()


@pytest.mark.django_db(transaction=True)
def test_a_refund_runs_only_after_the_yes_and_a_no_changes_nothing(bench):
    from bench.actions.harness import LiveListener, bench_account, create_assistant, create_tools, play

    shop, server, redis_url = bench
    account_id = bench_account()
    tool_names = create_tools(account_id, shop)
    inbox_id = create_assistant("tools", account_id, tool_names)
    listener = LiveListener(redis_url).start()
    try:
        done = play(REFUND, mode="tools", inbox_id=inbox_id, shop=shop, live=listener, serial=1)
        declined_task = Task(**{**REFUND.__dict__, "id": "n", "turns": ("refund 24.50 for order 1002", "no"),
                                "changes": (), "kind": "declined"})  # fmt: skip
        declined = play(declined_task, mode="tools", inbox_id=inbox_id, shop=shop, live=listener, serial=2)
    finally:
        listener.stop()

    assert [t.outcome for t in done.turns] == ["reply", "reply"], done
    # Turn 0 asked the confirmation question and nothing reached the shop; turn 1 ran the held call.
    assert "1002" in done.turns[0].reply and done.turns[0].shop_requests == 0
    assert done.turns[1].shop_requests == 1 and "issued" in done.turns[1].reply
    assert done.changes == [
        {
            "turn": 1,
            "kind": "refund",
            "order_id": "1002",
            "amount": 24.5,
            "address": None,
            "reason": "scarf torn",
        }
    ]
    assert done.confirmations == [{"tool": "refund_order", "status": "confirmed"}]
    assert done.turns[0].tool_calls.get("refund_order") == 1 and done.turns[0].input_tokens > 0
    assert verdict_of(done).success
    # The shop's token went as the bearer secret and never into the model's context.
    assert not any(shop.token in json.dumps(r) for r in server.requests)

    assert declined.changes == [] and declined.confirmations == [
        {"tool": "refund_order", "status": "declined"}
    ]
    assert sum(t.shop_requests for t in declined.turns) == 0
    assert verdict_of(declined).success
    figures = mode_figures([done, declined])
    assert figures["unconfirmed_side_effects"] == 0 and figures["first_thought_seconds"] == "n/a"


LONG_LIST = Task(
    id="l",
    lang="en",
    kind="lookup",
    turns=("my email is mia.chen@example.com, which order has the jade tea set?",),
    reply_any=("2017",),
    long_output=True,
)


@pytest.mark.django_db(transaction=True)
def test_a_long_shop_answer_is_compressed_unless_compression_is_off(bench):
    from bench.actions.harness import (
        NOCOMPRESS_MODE,
        bench_account,
        create_assistant,
        create_tools,
        mode_settings,
        play,
    )
    from captain.answering.models import RunArtifact

    shop, _server, _redis_url = bench
    account_id = bench_account()
    tool_names = create_tools(account_id, shop)
    inboxes = {m: create_assistant(m, account_id, tool_names) for m in ("planning", NOCOMPRESS_MODE)}
    with mode_settings("planning", "scripted"):
        on = play(LONG_LIST, mode="planning", inbox_id=inboxes["planning"], shop=shop, live=None, serial=1)
    stored = RunArtifact.objects.count()
    with mode_settings(NOCOMPRESS_MODE, "scripted"):
        off = play(
            LONG_LIST, mode=NOCOMPRESS_MODE, inbox_id=inboxes[NOCOMPRESS_MODE], shop=shop, live=None, serial=2
        )
    assert on.turns[0].shop_requests == off.turns[0].shop_requests == 1
    assert stored >= 1 and RunArtifact.objects.count() == stored  # only the compressed run kept an artifact
    # The whole 11 kB listing went back to the model only with compression off.
    assert off.turns[0].input_tokens > on.turns[0].input_tokens + 2000
    assert off.final_reply == "Tea set order: 2017" and on.changes == off.changes == []


def test_only_the_text_protocol_mode_lists_the_model_as_a_text_tool_model():
    from bench.actions.harness import MODES, NOCOMPRESS_MODE, bench_settings, mode_settings
    from captain.assistants.services.model_endpoints import operator_endpoints

    with bench_settings("scripted"):
        for mode in (*MODES, NOCOMPRESS_MODE):
            with mode_settings(mode, "scripted"):
                assert operator_endpoints()["default"].uses_text_tools("scripted") == (
                    mode == "planning-text"
                )
