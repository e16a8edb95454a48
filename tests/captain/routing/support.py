"""Scripted router model and a fake encoder for routing tests (no network, no model weights)."""

from __future__ import annotations

import copy
import math
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from captain.runtime import ModelResponse, ModelSettings, Usage
from captain.runtime.model import DEFAULT_SETTINGS
from captain.runtime.routing import Graph, Node, RouterEndpoint, Rule, Turn
from captain.runtime.routing import strategy as strategy_module
from captain.runtime.routing.calibration import Calibrator


def answer(
    content: str,
    *,
    logprobs: dict[str, float] | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    latency_ms: float = 0.0,
) -> ModelResponse:
    """A router model's answer: its text and, optionally, the first token's log-probabilities."""
    return ModelResponse(
        content=content,
        usage=Usage(1, input_tokens, output_tokens),
        model="scripted-router",
        first_token_logprobs=dict(logprobs or {}),
        latency_ms=latency_ms,
    )


def route_enum(settings: ModelSettings) -> list[str] | None:
    """The ids a router call constrained its answer to (its JSON-schema enum), or None."""
    if settings.response_format is None:
        return None
    return list(settings.response_format["json_schema"]["schema"]["properties"]["route"]["enum"])


class ScriptedRouter:
    """A router `ModelClient` answering each call with the next scripted text, `ModelResponse`, or callable
    of the recorded call."""

    def __init__(self, *answers: str | ModelResponse | Callable[[dict[str, Any]], ModelResponse]) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
    ) -> ModelResponse:
        call = copy.deepcopy(
            {
                "model": model,
                "messages": messages,
                "max_tokens": settings.max_tokens,
                "enum": route_enum(settings),
                "top_logprobs": settings.top_logprobs,
                "temperature": settings.temperature,
            }
        )
        self.calls.append(call)
        if not self.answers:
            raise AssertionError(f"unexpected router call #{len(self.calls)}")
        scripted = self.answers.pop(0)
        if callable(scripted):
            return scripted(call)
        if isinstance(scripted, ModelResponse):
            return scripted
        prompt = "".join(m["content"] for m in messages)
        return answer(scripted, input_tokens=len(prompt) // 4, output_tokens=1, latency_ms=5.0)

    def factory(self, endpoint: RouterEndpoint):
        return self, endpoint.model or "scripted-router"

    def prompt(self, index: int = -1) -> str:
        return "".join(m["content"] for m in self.calls[index]["messages"])


def yes_no(p_yes: float) -> ModelResponse:
    """A one-token yes/no answer with log-probabilities."""
    return answer(
        "yes" if p_yes >= 0.5 else "no",
        logprobs={"yes": math.log(max(p_yes, 1e-6)), "no": math.log(max(1 - p_yes, 1e-6))},
        input_tokens=50,
        output_tokens=1,
    )


class KeywordEncoder:
    """Fake sentence encoder: one dimension per keyword (1.0 when the text contains it), a constant one, and a
    "wording" part: a unit vector drawn from a generator seeded by the text's CRC, so the same text always gets
    the same row and identical texts score 1.0. Rows are L2-normalised.

    Texts sharing keywords are similar (~0.4-0.8). Texts sharing none scatter around a small baseline
    (~0.05-0.3), as a real encoder's do: the calibration's content-free probes give every text a prior and a
    spread, messages without keywords get evidence of at most about 3 noise units, and a message sharing a
    keyword with one of a node's texts gets about 5-12."""

    CONSTANT = 0.35
    """Weight of the dimension every text shares: the baseline similarity of unrelated texts."""
    WORDING = 0.7
    """Weight of the per-text random direction: how far unrelated texts scatter around the baseline."""
    WORDING_DIMS = 64

    def __init__(self, keywords: Sequence[str]) -> None:
        self.keywords = list(keywords)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            lowered = text.lower()
            found = [1.0 if re.search(re.escape(k), lowered) else 0.0 for k in self.keywords]
            wording = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(self.WORDING_DIMS)
            wording *= self.WORDING / np.linalg.norm(wording)
            rows.append(np.concatenate([found, [self.CONSTANT], wording]))
        arr = np.asarray(rows, dtype=np.float32)
        return arr / np.linalg.norm(arr, axis=1, keepdims=True)


NEVER_CLEAR = 100.0
"""An evidence margin no message reaches with `KeywordEncoder` (even a message identical to one of a node's texts
gets less than 20): no switch is clear on the encoder alone, so every case that is not a plain stay is unclear,
and without a model it stays (half the margin is out of reach too)."""


class CountingEncoder:
    """Wraps an encoder and records the texts of every call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.encode(texts)


def own_calibrator(monkeypatch: pytest.MonkeyPatch) -> Calibrator:
    """Give the strategy a calibrator of the test's own. The product's one per process keeps priors by text
    alone (one encoder per process), while tests score the same texts with several fake encoders and the real
    one: shared priors would make a test's numbers depend on which tests ran before it."""
    calibrator = Calibrator()
    monkeypatch.setattr(strategy_module, "CALIBRATOR", calibrator)
    return calibrator


def shop_graph(**kwargs: Any) -> Graph:
    """Triage + refunds + shipping + billing, default star."""
    nodes = [
        Node("assistant", "Shop assistant", "Customer support of a shop."),
        Node("refunds", "Refunds", "refund money back return", examples=["I want a refund"]),
        Node("shipping", "Shipping", "delivery parcel tracking", examples=["where is my parcel"]),
        Node("billing", "Billing", "invoice payment charge", examples=["I need an invoice"]),
    ]
    return Graph.build(nodes, kwargs.pop("edges", None), **kwargs)


def game_graph(**node_settings: dict[str, Any]) -> Graph:
    """Seed 000's flow: guide (triage) -> setup -> speak -> ai_speak -> vote, restart global."""
    nodes = [
        Node("assistant", "引导", "介绍游戏"),
        Node("setup", "游戏准备", "进行游戏准备。"),
        Node("speak", "人类玩家发言", "人类玩家进行发言。"),
        Node("ai_speak", "AI玩家发言", "AI玩家进行发言。"),
        Node("vote", "人类玩家投票", "人类玩家进行投票。"),
    ]
    by_key = {n.key: n for n in nodes}
    for key, settings in node_settings.items():
        for name, value in settings.items():
            setattr(by_key[key], name, value)
    edges = [("assistant", "setup"), ("setup", "speak"), ("speak", "ai_speak"), ("ai_speak", "vote")]
    return Graph.build(nodes, edges)


def rule(match: str, value: str, to: str) -> Rule:
    return Rule(match=match, value=value, to=to)


def history(rounds: int) -> list[Turn]:
    turns: list[Turn] = []
    for i in range(rounds):
        turns.append(Turn("user", f"customer message number {i:03d} with some words in it"))
        turns.append(Turn("assistant", f"reply number {i:03d} from the agent, also with words", "speak"))
    return turns
