"""The router's model calls against the REAL bundled model (slow; marked local_llm). Shapes, not wording: the
constrained answer is one of the offered ids, log-probabilities come back for the yes/no tie-break, and the
Coze replica's answer parses or stays."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.routing.coze import CozeStrategy
from captain.local_llm import LocalLLMHandle, start_local_llm
from captain.runtime import OpenAIChatModel
from captain.runtime.routing import OursStrategy, Policy, RoutingThresholds, dispatch_message

from .support import game_graph, history, shop_graph

pytestmark = pytest.mark.local_llm


@pytest.fixture(scope="module")
def llm() -> Iterator[LocalLLMHandle]:
    handle = start_local_llm(port=0, n_parallel=1)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def routers(llm: LocalLLMHandle):
    client = OpenAIChatModel.for_endpoint(llm.base_url, timeout=120)
    return lambda endpoint: (client, llm.model)


def test_router_mode_answers_inside_the_enum(routers):
    graph = game_graph(assistant={"mode": "router"})
    result = dispatch_message(
        graph, OursStrategy(routers=routers), current="assistant", message="开始游戏", history=[]
    )
    decision = result.decisions[0]
    assert decision.llm_calls == 1 and decision.input_tokens > 0
    assert not decision.refused and decision.parsed in ("stay", "setup", "human")


@pytest.mark.parametrize(("budget", "calls", "read"), [(1, 1, "log P(A)="), (2, 2, "P(yes)=")])
def test_semantic_tiebreak_reads_log_probabilities(routers, monkeypatch, budget, calls, read):
    """One call of budget: the A-or-B question; two: the two yes/no questions. Both read log-probabilities
    the real llama.cpp server returns."""
    from .support import NEVER_CLEAR, KeywordEncoder, own_calibrator

    own_calibrator(monkeypatch)
    strategy = OursStrategy(
        encoder=KeywordEncoder(["refund", "parcel", "invoice"]),
        routers=routers,
        # nothing is clear enough to switch on the encoder alone
        thresholds=RoutingThresholds(margin=NEVER_CLEAR),
    )
    result = dispatch_message(
        shop_graph(),
        strategy,
        current="refunds",
        message="where is my parcel?",
        history=history(2),
        policy=Policy(model_calls=budget),
    )
    decision = result.decisions[0]
    assert decision.mode == "semantic+model" and decision.llm_calls == calls
    assert read in decision.reason


def test_coze_replica_runs_on_the_real_model(routers):
    result = dispatch_message(
        game_graph(), CozeStrategy(routers=routers), current="assistant", message="开始游戏", history=[]
    )
    assert result.decisions[0].mode == "coze" and result.decisions[0].llm_calls == 1
