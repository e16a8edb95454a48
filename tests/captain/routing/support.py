"""Scripted router model and a fake encoder for routing tests (no network, no model weights)."""

from __future__ import annotations

import copy
import math
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from captain.runtime.routing import Graph, Node, RouterEndpoint, RouterResponse, Rule, Turn


class ScriptedRouter:
    """`RouterModel` answering each call with the next scripted text (or a callable of the request)."""

    def __init__(self, *answers: str | RouterResponse | Callable[[dict[str, Any]], RouterResponse]) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def route(self, *, model, messages, max_tokens, enum=None, top_logprobs=0) -> RouterResponse:
        call = copy.deepcopy({"model": model, "messages": messages, "max_tokens": max_tokens, "enum": enum})
        self.calls.append(call)
        if not self.answers:
            raise AssertionError(f"unexpected router call #{len(self.calls)}")
        answer = self.answers.pop(0)
        if callable(answer):
            return answer(call)
        if isinstance(answer, RouterResponse):
            return answer
        prompt = "".join(m["content"] for m in messages)
        return RouterResponse(content=answer, input_tokens=len(prompt) // 4, output_tokens=1, latency_ms=5.0)

    def factory(self, endpoint: RouterEndpoint):
        return self, endpoint.model or "scripted-router"

    def prompt(self, index: int = -1) -> str:
        return "".join(m["content"] for m in self.calls[index]["messages"])


def yes_no(p_yes: float) -> RouterResponse:
    """A one-token yes/no answer with log-probabilities."""
    return RouterResponse(
        content="yes" if p_yes >= 0.5 else "no",
        top_logprobs=[{"yes": math.log(max(p_yes, 1e-6)), "no": math.log(max(1 - p_yes, 1e-6))}],
        input_tokens=50,
        output_tokens=1,
    )


class KeywordEncoder:
    """Fake sentence encoder: one dimension per keyword, a small constant one and a one-hot "identity" bucket
    per text (so two texts without keywords are not identical); rows are L2-normalised. Texts sharing keywords
    are similar (~0.5-0.7), unrelated texts score ~0.1."""

    def __init__(self, keywords: Sequence[str]) -> None:
        self.keywords = list(keywords)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            lowered = text.lower()
            vec = [1.0 if re.search(re.escape(k), lowered) else 0.0 for k in self.keywords] + [0.35]
            identity = [0.0] * 64
            identity[zlib.crc32(text.encode()) % 64] = 1.0
            rows.append(vec + identity)
        arr = np.asarray(rows, dtype=np.float32)
        return arr / np.linalg.norm(arr, axis=1, keepdims=True)


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
