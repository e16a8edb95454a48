"""Coze's routing faults (seed 000), one test each. Every test runs our router and, where the fault is a
behaviour, the Coze replica too, asserting that the replica shows the fault: the test would fail on Coze."""

from __future__ import annotations

import pytest

from bench.routing.coze import COZE_POLICY, CozeStrategy
from captain.runtime.routing import (
    DecisionRequest,
    OursStrategy,
    Policy,
    RoutingThresholds,
    Turn,
    dispatch_message,
)

from .support import ScriptedRouter, game_graph, history, rule


def ours(router: ScriptedRouter) -> OursStrategy:
    return OursStrategy(encoder=None, routers=router.factory)


# ---- 1. candidates are only the node's edges (plus global nodes) --------------------------------------------


def test_router_is_offered_only_the_nodes_edges_and_global_nodes():
    graph = game_graph(assistant={"mode": "router"})
    router = ScriptedRouter('{"route": "setup"}')
    result = dispatch_message(graph, ours(router), current="assistant", message="开始游戏", history=[])
    assert result.node == "setup"
    assert router.calls[0]["enum"] == ["stay", "setup", "human"]
    prompt = router.prompt()
    assert "人类玩家发言" not in prompt and "speak" not in prompt.split("Options:")[1].split("Recent")[0]


def test_a_decision_outside_the_candidates_is_refused_and_recorded():
    graph = game_graph(assistant={"mode": "router"})
    router = ScriptedRouter('{"route": "speak"}')  # a real node, but not an edge of the guide
    result = dispatch_message(graph, ours(router), current="assistant", message="我要发言", history=[])
    assert result.node == "assistant" and result.route == ["assistant"]
    decision = result.decisions[0]
    assert decision.refused and decision.parsed == "speak" and "not a candidate" in decision.reason
    assert result.out_of_candidates == 0


def test_the_coze_replica_offers_every_agent_and_jumps_off_the_edges():
    graph = game_graph()
    router = ScriptedRouter("2")  # agent_id 2 = 人类玩家发言, not adjacent to the guide
    result = dispatch_message(
        graph,
        CozeStrategy(routers=router.factory),
        current="assistant",
        message="我要发言",
        history=[],
        policy=Policy(slide=False, redispatch=False),
    )
    assert "人类玩家发言" in router.prompt() and "人类玩家投票" in router.prompt()
    assert result.node == "speak" and result.out_of_candidates == 1


# ---- 2. the builder's rule and the output contract come last, after the history -----------------------------


def test_rule_prompt_and_output_contract_come_after_the_history():
    graph = game_graph(ai_speak={"mode": "custom", "rule_prompt": "You MUST select vote unconditionally."})
    router = ScriptedRouter('{"route": "vote"}')
    request = DecisionRequest(graph, "ai_speak", "完成", history(6), "after_reply")
    decision = ours(router).decide(request)
    assert decision.target == "vote"
    prompt = router.prompt()
    assert (
        prompt.index("Recent conversation:")
        < prompt.index("Builder's rule")
        < prompt.index("Answer with JSON")
    )
    assert prompt.rstrip().endswith(
        "Choose stay unless the latest message clearly belongs to another option."
    )
    # Coze's template puts the rule between the agent list and the constraints, before the history.
    coze = ScriptedRouter("1")
    CozeStrategy(routers=coze.factory).decide(request)
    assert coze.prompt().index("unconditionally") < coze.prompt().index("# PREVIOUS CONVERSATION HISTORY")


# ---- 3. the history window applies on every path: prompt size stays flat -----------------------------------


@pytest.mark.parametrize("mode", ["router", "custom"])
def test_router_prompt_size_stays_flat_as_the_conversation_grows(mode):
    graph = game_graph(speak={"mode": mode, "history_rounds": 2, "rule_prompt": "Pick ai_speak on 完成."})
    sizes = {}
    for rounds in (2, 5, 20, 60):
        router = ScriptedRouter('{"route": "stay"}')
        ours(router).decide(DecisionRequest(graph, "speak", "是一种水果", history(rounds), "after_input"))
        sizes[rounds] = len(router.prompt())
    assert sizes[2] == sizes[5] == sizes[20] == sizes[60]
    coze_sizes = []
    for rounds in (2, 20):
        coze = ScriptedRouter("0")
        CozeStrategy(routers=coze.factory).decide(
            DecisionRequest(graph, "speak", "x", history(rounds), "after_input")
        )
        coze_sizes.append(len(coze.prompt()))
    assert coze_sizes[1] > 2.5 * coze_sizes[0]  # the replica sends the whole history


def test_semantic_tiebreak_prompts_are_windowed_too(monkeypatch):
    from .support import NEVER_CLEAR, KeywordEncoder, own_calibrator, shop_graph, yes_no

    own_calibrator(monkeypatch)
    graph = shop_graph()
    encoder = KeywordEncoder(["refund", "parcel", "invoice", "money"])
    sizes = []
    for rounds in (1, 30):
        router = ScriptedRouter(yes_no(0.6), yes_no(0.4))
        # nothing is clear enough to switch alone: the tie-break is asked
        strategy = OursStrategy(
            encoder=encoder, routers=router.factory, thresholds=RoutingThresholds(margin=NEVER_CLEAR)
        )
        strategy.decide(
            DecisionRequest(graph, "refunds", "money for the parcel", history(rounds), "after_input")
        )
        sizes.append(sum(len(router.prompt(i)) for i in range(len(router.calls))))
    assert sizes[0] == sizes[1] > 0


# ---- 4. no slide; a hand-back re-dispatches once; hops are bounded ------------------------------------------


def slide_graph():
    # The guide jumps to setup on 开始; setup itself jumps to speak on any message containing 开始 (the shape that
    # made Coze slide: the new node's after-input check ran again on the same input).
    return game_graph(
        assistant={"rules": [rule("contains", "开始", "setup")]},
        setup={"rules": [rule("contains", "开始", "speak")]},
    )


def test_no_slide_the_node_reached_handles_the_message_that_caused_the_jump():
    graph = slide_graph()
    answered = []
    result = dispatch_message(
        graph,
        ours(ScriptedRouter()),
        current="assistant",
        message="开始游戏",
        history=[],
        respond=lambda node, turns: answered.append(node) or "ok",
    )
    assert result.route == ["assistant", "setup"] and result.node == "setup"
    assert answered == ["setup"]
    assert [d.node for d in result.decisions] == ["assistant"]  # setup's own input check waits
    # ... and runs on the next customer message.
    nxt = dispatch_message(graph, ours(ScriptedRouter()), current="setup", message="开始吧", history=[])
    assert nxt.node == "speak"


def test_the_coze_policy_slides_on_the_same_input():
    graph = slide_graph()
    router = ScriptedRouter('{"route": "stay"}')  # speak's own check, reached on the same input, says stay
    result = dispatch_message(
        graph, ours(router), current="assistant", message="开始游戏", history=[], policy=COZE_POLICY
    )
    assert result.route == ["assistant", "setup", "speak"]
    assert [d.node for d in result.decisions] == ["assistant", "setup", "speak"]


def test_a_hand_back_is_re_dispatched_once_and_never_straight_back(monkeypatch):
    from .support import KeywordEncoder, own_calibrator, shop_graph

    own_calibrator(monkeypatch)
    graph = shop_graph()
    encoder = KeywordEncoder(["refund", "parcel", "invoice", "money", "delivery"])
    strategy = OursStrategy(encoder=encoder, routers=None)
    answered = []
    result = dispatch_message(
        graph,
        strategy,
        current="refunds",
        message="where is my parcel, the delivery is late",
        history=[],
        respond=lambda node, turns: answered.append(node) or "ok",
    )
    assert result.route == ["refunds", "assistant", "shipping"]
    assert [d.phase for d in result.decisions] == ["after_input", "redispatch"]
    assert "refunds" not in result.decisions[1].candidates
    assert answered == ["shipping"]


def test_after_reply_hops_are_bounded_per_message():
    graph = game_graph(
        setup={"timing": "after_reply", "rules": [rule("regex", ".*", "speak")]},
        speak={"timing": "after_reply", "rules": [rule("regex", ".*", "ai_speak")]},
        ai_speak={"timing": "after_reply", "rules": [rule("regex", ".*", "vote")]},
    )
    graph.max_hops = 2
    result = dispatch_message(
        graph,
        ours(ScriptedRouter()),
        current="setup",
        message="继续",
        history=[],
        respond=lambda n, t: f"{n} says hi",
    )
    assert result.route == ["setup", "speak", "ai_speak"] and result.hops == 2
    assert [n for n, _ in result.replies] == ["setup", "speak", "ai_speak"]


def test_after_reply_jump_hands_over_without_waiting_for_the_customer():
    graph = game_graph(
        ai_speak={"timing": "after_reply", "mode": "custom", "rule_prompt": "Select vote unconditionally."}
    )
    router = ScriptedRouter('{"route": "vote"}')
    result = dispatch_message(
        graph, ours(router), current="ai_speak", message="完成", history=[], respond=lambda n, t: f"{n} reply"
    )
    assert result.route == ["ai_speak", "vote"]
    assert result.replies == [("ai_speak", "ai_speak reply"), ("vote", "vote reply")]
    assert "ai_speak reply" in router.prompt()  # the router saw the node's reply


# ---- 5. unparseable or unknown output means stay, and is recorded -------------------------------------------


@pytest.mark.parametrize("output", ["I think the best agent is", "", '{"route": 3}', "setup please"])
def test_unparseable_router_output_means_stay_never_the_first_candidate(output):
    graph = game_graph(assistant={"mode": "router"})
    router = ScriptedRouter(output)
    result = dispatch_message(graph, ours(router), current="assistant", message="hello", history=[])
    assert result.node == "assistant"
    decision = result.decisions[0]
    assert decision.refused and decision.raw_output == output and "stay" in decision.reason


def test_router_model_failure_means_stay():
    from captain.runtime import ModelError

    graph = game_graph(assistant={"mode": "router"})

    def boom(call):
        raise ModelError("timeout", "slow")

    result = dispatch_message(graph, ours(ScriptedRouter(boom)), current="assistant", message="x", history=[])
    assert result.node == "assistant" and "failed (timeout)" in result.decisions[0].reason


def test_rules_cost_no_model_call():
    graph = game_graph(assistant={"rules": [rule("exact", "开始游戏", "setup")], "mode": "router"})
    router = ScriptedRouter()
    result = dispatch_message(graph, ours(router), current="assistant", message=" 开始游戏 ", history=[])
    assert result.node == "setup" and result.llm_calls == 0 and router.calls == []
    assert result.decisions[0].mode == "rule"


# ---- 6. constrained output over the real SDK --------------------------------------------------------------------


def test_router_output_is_constrained_by_a_json_schema_enum_over_http():
    from captain.runtime import OpenAIChatModel
    from tests.support.fake_llm_server import FakeLLMServer, text

    graph = game_graph(assistant={"mode": "router"})
    with FakeLLMServer([text('{"route": "setup"}')]) as server:
        client = OpenAIChatModel.for_endpoint(server.base_url, timeout=5)
        strategy = OursStrategy(encoder=None, routers=lambda endpoint: (client, "m"))
        result = dispatch_message(graph, strategy, current="assistant", message="开始游戏", history=[])
        body = server.requests[0]
    assert result.node == "setup"
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["route"]["enum"] == ["stay", "setup", "human"]
    assert body["max_tokens"] <= 32 and body["temperature"] == 0
    assert "tools" not in body and "logprobs" not in body


def test_an_endpoint_that_refuses_the_schema_is_asked_again_plainly_and_the_client_remembers():
    from captain.runtime import ModelSettings, OpenAIChatModel
    from tests.support.fake_llm_server import FakeLLMServer, error, text

    constrained = ModelSettings(
        temperature=0,
        max_tokens=4,
        top_logprobs=5,
        response_format={"type": "json_schema", "json_schema": {"name": "route", "schema": {}}},
    )
    with FakeLLMServer([error(400), text("setup"), text("stay")]) as server:
        client = OpenAIChatModel.for_endpoint(server.base_url, timeout=5)
        messages = [{"role": "user", "content": "x"}]
        response = client.complete(model="m", messages=messages, settings=constrained)
        assert response.content == "setup"
        client.complete(model="m", messages=messages, settings=constrained)
        first, retry, later = server.requests
    assert "response_format" in first and first["logprobs"] is True and first["top_logprobs"] == 5
    for plain in (retry, later):
        assert "response_format" not in plain and "logprobs" not in plain and "top_logprobs" not in plain
        assert plain["max_tokens"] == 4 and plain["temperature"] == 0


def test_an_agent_call_refused_with_400_is_not_retried():
    """Only the router's optional fields earn a plain retry: an agent's bad request fails as it always did."""
    from captain.runtime import ModelError, ModelSettings, OpenAIChatModel
    from tests.support.fake_llm_server import FakeLLMServer, error

    with FakeLLMServer([error(400)]) as server:
        client = OpenAIChatModel.for_endpoint(server.base_url, timeout=5, max_retries=0)
        with pytest.raises(ModelError) as caught:
            client.complete(model="m", messages=[{"role": "user", "content": "x"}], settings=ModelSettings())
        assert caught.value.kind == "bad_request" and len(server.requests) == 1


def test_every_decision_records_what_was_asked_and_answered():
    graph = game_graph(assistant={"mode": "router"})
    router = ScriptedRouter('{"route": "setup"}')
    decision = dispatch_message(
        graph, ours(router), current="assistant", message="开始", history=[]
    ).decisions[0]
    data = decision.as_dict()
    assert data["mode"] == "router" and data["candidates"] == ["setup", "human"]
    assert data["prompt"] and data["raw_output"] == '{"route": "setup"}' and data["parsed"] == "setup"
    assert data["input_tokens"] > 0 and data["llm_calls"] == 1 and data["latency_ms"] == 5.0
    assert data["switched"] is True


def test_decision_spans_carry_the_router_attributes():
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from captain.runtime import semconv as sc
    from captain.runtime.tracing import TracingHooks

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    graph = game_graph(assistant={"mode": "router"})
    decision = dispatch_message(
        graph, ours(ScriptedRouter("nonsense")), current="assistant", message="x", history=[]
    ).decisions[0]
    TracingHooks(tracer_provider=provider).on_decision(decision)
    (span,) = exporter.get_finished_spans()
    assert span.name == sc.SPAN_ROUTER
    assert span.attributes[sc.CAPTAIN_ROUTER_DECISION] == "assistant"
    assert list(span.attributes[sc.CAPTAIN_ROUTER_CANDIDATES]) == ["setup", "human"]
    assert span.attributes["captain.router.refused"] is True
    assert span.attributes["captain.router.raw_output"] == "nonsense"


def test_history_turn_attribution_in_prompts():
    graph = game_graph(speak={"mode": "router"})
    router = ScriptedRouter('{"route": "stay"}')
    ours(router).decide(
        DecisionRequest(
            graph, "speak", "m", [Turn("user", "hi"), Turn("assistant", "hello", "speak")], "after_input"
        )
    )
    assert "人类玩家发言: hello" in router.prompt()
