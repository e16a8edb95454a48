"""The tie-break: how the semantic router puts an unclear case to a model. The only place that asks the router
model in semantic mode.

`TieBreak` chooses the implementation of the `TieBreaker` protocol:
- `PAIR` (default): two yes/no questions ("still on the current topic?", "about B?") whose P(yes) are compared,
  which cancels a small model's per-case yes-bias; with one call left in the message's budget, the A-or-B
  question instead. The default budget is one call per customer message
  (CAPTAIN["ROUTER_MODEL_CALLS_PER_MESSAGE"]), so by default the A-or-B question is what is asked;
- `AB`: always the one-call question, "is the latest message about topic A (current) or B (the encoder's
  best)?", read through the log-probabilities of A and B;
- `NONE`: never ask; the encoder decides alone (the benchmark's `ours-nomodel`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from typing import Protocol

from ..model import ModelError, ModelResponse, ModelSettings
from .prompts import Messages, ab_question, stay_question, switch_question
from .request import Router
from .router_calls import NO_CALLS, TEMPERATURE, RouterCalls, ask
from .semantic import Unclear
from .thresholds import RoutingThresholds
from .view import RoutingView

ONE_TOKEN = ModelSettings(temperature=TEMPERATURE, max_tokens=1, top_logprobs=10)
"""Every tie-break question: one token, with its alternatives' log-probabilities."""


class TieBreak(enum.Enum):
    PAIR = "pair"
    """Two yes/no questions when the budget allows two calls, else the A-or-B question."""
    AB = "ab"
    """The A-or-B question (one call)."""
    NONE = "none"
    """No question: the encoder decides alone."""


@dataclass(frozen=True)
class TieBreakAnswer:
    target: str
    """Node in charge after the decision (the node itself: stay)."""
    parsed: str | None
    reason: str
    prompt: str
    calls: RouterCalls
    """The calls made; `raw_output` is what the decision records as the model's output."""
    refused: bool = False


class TieBreaker(Protocol):
    def ask(
        self, view: RoutingView, message: str, case: Unclear, router: Router, t: RoutingThresholds
    ) -> TieBreakAnswer:
        """Put `case` to the router model. A model failure is an answer too: stay, and say why."""
        ...


def tiebreaker_for(kind: TieBreak, budget: int) -> TieBreaker | None:
    """The implementation for `kind` within a budget of `budget` router calls; None: no question is asked."""
    if kind is TieBreak.NONE or budget <= 0:
        return None
    if kind is TieBreak.AB or budget < 2:
        return AbQuestion()
    return PairQuestions()


def _failed(
    view: RoutingView, case: Unclear, prompt: str, calls: RouterCalls, exc: ModelError
) -> TieBreakAnswer:
    return TieBreakAnswer(view.node, case.best, f"router model failed ({exc.kind}): stay", prompt, calls)


class AbQuestion:
    """One call: "A (stay) or B (the encoder's best)?", decided on the log-probabilities of A and B."""

    def ask(
        self, view: RoutingView, message: str, case: Unclear, router: Router, t: RoutingThresholds
    ) -> TieBreakAnswer:
        messages = ab_question(view, view.other_topics[case.best], message)
        prompt = messages[-1]["content"]
        try:
            response = ask(router, messages, ONE_TOKEN)
        except ModelError as exc:
            return _failed(view, case, prompt, NO_CALLS, exc)
        calls = NO_CALLS.plus(response, router[1])
        text = response.content or ""
        lp: dict[str, float | None] = {"A": None, "B": None}
        first = response.first_token_logprobs
        for letter in lp:
            probs = [math.exp(v) for tok, v in first.items() if tok.strip().upper() == letter]
            lp[letter] = math.log(sum(probs)) if probs else None
        if lp["A"] is None and lp["B"] is None:
            reason = f"A or B?: unparseable output {text!r}: stay"
            return TieBreakAnswer(view.node, case.best, reason, prompt, calls, refused=True)
        lp_a = lp["A"] if lp["A"] is not None else -30.0
        lp_b = lp["B"] if lp["B"] is not None else -30.0
        if lp_b + t.ab_offset > lp_a:
            reason = f"A or B?: log P(B)={lp_b:.2f} + {t.ab_offset} > log P(A)={lp_a:.2f} ({case.label})"
            return TieBreakAnswer(case.best, case.best, reason, prompt, calls)
        reason = f"A or B?: log P(A)={lp_a:.2f} >= log P(B)={lp_b:.2f} + {t.ab_offset}"
        return TieBreakAnswer(view.node, view.node, reason, prompt, calls)


class PairQuestions:
    """Two calls: "does it continue the current topic?", weighed against "is it about B?"."""

    def ask(
        self, view: RoutingView, message: str, case: Unclear, router: Router, t: RoutingThresholds
    ) -> TieBreakAnswer:
        ask_stay = stay_question(view, message)
        ask_switch = switch_question(view, view.other_topics[case.best], message)
        prompt = ask_stay[-1]["content"] + "\n\n----\n\n" + ask_switch[-1]["content"]
        calls = NO_CALLS
        answers: list[ModelResponse] = []
        questions: tuple[Messages, Messages] = (ask_stay, ask_switch)
        for messages in questions:
            try:
                response = ask(router, messages, ONE_TOKEN)
            except ModelError as exc:
                return _failed(view, case, prompt, calls, exc)
            calls = calls.plus(response, router[1])
            answers.append(response)
        raw_output = " | ".join(a.content or "" for a in answers)
        calls = replace(calls, raw_output=raw_output)
        p_stay, p_switch = (_p_yes(a) for a in answers)
        if p_stay is None or p_switch is None:
            reason = f"continue?: unparseable output {raw_output!r}: stay"
            return TieBreakAnswer(view.node, case.best, reason, prompt, calls, refused=True)
        if p_switch + t.pair_offset > p_stay:
            reason = f"continue? P(yes)={p_stay:.2f} < about {case.label}? P(yes)={p_switch:.2f}"
            return TieBreakAnswer(case.best, case.best, reason, prompt, calls)
        reason = f"continue? P(yes)={p_stay:.2f} >= about {case.label}? P(yes)={p_switch:.2f}"
        return TieBreakAnswer(view.node, view.node, reason, prompt, calls)


def _p_yes(response: ModelResponse) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first token's log-probabilities, else from the text; None if neither."""
    first = response.first_token_logprobs
    if first:
        yes = sum(math.exp(lp) for tok, lp in first.items() if tok.strip().lower() in ("yes", "是"))
        no = sum(math.exp(lp) for tok, lp in first.items() if tok.strip().lower() in ("no", "否"))
        if yes + no > 0:
            return yes / (yes + no)
    word = (response.content or "").strip().lower()
    if word.startswith(("yes", "是")):
        return 1.0
    if word.startswith(("no", "否")):
        return 0.0
    return None
