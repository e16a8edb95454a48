"""Routing strategies: how one node decides where the customer's message goes.

`OursStrategy` is the product's router. In order, at the node in charge:
1. rules (equals / contains / regex): zero model calls;
2. the node's mode: `tool` (its own model calls a handoff tool while answering: the Runner's job), `router`
   (a dedicated router model picks among the node's candidates, JSON-schema enum), `custom` (the same with the
   builder's rule prompt, placed last), or `semantic` (the default: the local encoder compares the message with
   each candidate's description and example phrases and decides alone when the margin is clear; only when it
   is not does it ask a model, within the message's budget of router calls (one by default): "is the latest
   message about topic A (current) or B (the encoder's best)?", one token read through its log-probabilities,
   or with a budget of two, two yes/no questions whose answers are compared).
Whatever the mode, only the node's candidates (edges + global nodes) can be chosen; anything else, or output
that cannot be parsed, means stay, and is recorded.

`CozeStrategy` replicates the router Coze ran in seed 000, prompt and all, for the benchmark.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..model import ModelError
from .decision import Decision, Phase
from .graph import HUMAN, Graph, Node, RouterEndpoint
from .model import RouterModel, RouterResponse
from .prompts import (
    Turn,
    ab_question,
    coze_prompt,
    describe,
    router_messages,
    stay_question,
    switch_question,
    tiebreak_messages,
)


class Encoder(Protocol):
    """Sentence encoder: texts -> L2-normalised rows (captain.retrieval.TextEncoder fits; tests use a fake)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


RouterFactory = Callable[[RouterEndpoint], "tuple[RouterModel, str] | None"]
"""Endpoint of a node -> (router model client, model name), or None when no router model is configured."""


@dataclass(frozen=True)
class DecisionRequest:
    graph: Graph
    node: str
    message: str
    history: list[Turn]
    """Conversation before `message` (after_reply: including the message and the node's reply)."""
    phase: Phase
    model_budget: int = 1
    """Router model calls this decision may still spend on the customer's message (the policy's per-message
    budget minus what earlier decisions spent); 0: decide from rules and embeddings only."""
    exclude: frozenset[str] = frozenset()
    """Candidates not to offer (the specialist that just handed the message back)."""

    @property
    def allow_model(self) -> bool:
        return self.model_budget > 0

    @property
    def current(self) -> Node:
        return self.graph.nodes[self.node]

    def candidates(self) -> list[str]:
        return [k for k in self.graph.candidates(self.node) if k not in self.exclude]


class Strategy(Protocol):
    name: str

    def decide(self, request: DecisionRequest) -> Decision: ...


def _stay(request: DecisionRequest, mode: str, reason: str, **extra: Any) -> Decision:
    return Decision(
        node=request.node,
        phase=request.phase,
        mode=mode,
        candidates=request.candidates(),
        target=request.node,
        reason=reason,
        **extra,
    )


def match_rules(request: DecisionRequest) -> Decision | None:
    """The first rule of the node that matches the message and targets a candidate."""
    candidates = request.candidates()
    for i, rule in enumerate(request.current.rules, start=1):
        if rule.matches(request.message):
            if rule.to not in candidates:
                continue  # validation refuses such rules; a graph edited since must not jump off its edges
            return Decision(
                node=request.node,
                phase=request.phase,
                mode="rule",
                candidates=candidates,
                target=rule.to,
                parsed=rule.to,
                reason=f"rule {i}: {rule.match} {rule.value!r}",
            )
    return None


def _apply_model(decision: Decision, response: RouterResponse, model: str) -> None:
    decision.model = model
    decision.raw_output = response.content
    decision.llm_calls += 1
    decision.input_tokens += response.input_tokens
    decision.output_tokens += response.output_tokens
    decision.latency_ms += response.latency_ms


def _ask_one_token(
    decision: Decision, router: tuple[RouterModel, str], messages: list[dict[str, Any]]
) -> RouterResponse | None:
    """One tie-break question (one token, with its alternatives' log-probabilities), counted on `decision`;
    None when the router model failed (the reason says so and the decision stays)."""
    client, model = router
    try:
        response = client.route(model=model, messages=messages, max_tokens=1, top_logprobs=10)
    except ModelError as exc:
        decision.reason = f"router model failed ({exc.kind}): stay"
        return None
    _apply_model(decision, response, model)
    return response


def parse_route(text: str, enum: list[str]) -> str | None:
    """`{"route": "x"}` or a bare id; anything else is unparseable (None). Never a guess."""
    text = (text or "").strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = text.strip("`'\" \n.")
    if isinstance(value, dict):
        value = value.get("route")
    if isinstance(value, str):
        value = value.strip()
        return value if value in enum else (value or None)
    return None


@dataclass
class SemanticSettings:
    """Thresholds of the semantic router (cosine similarities of the multilingual encoder)."""

    floor: float = 0.30
    """Below this, no candidate is a plausible target: stay."""
    switch: float = 0.40
    """A switch without asking a model needs at least this score..."""
    margin: float = 0.10
    """...and to beat staying by this margin."""
    stay_margin: float = 0.0
    """Best other candidate not better than staying by more than this: stay without asking."""
    which_gap: float = 0.05
    """The best candidate beats the second by this: 'which one' is clear."""
    root_floor: float = 0.30
    """How strongly the triage node holds a message that matches none of its scenarios."""
    root_margin: float = 0.03
    """Margin needed to leave triage: triage is not a topic, so a scenario that matches at all should win."""
    human_switch: float = 0.42
    """Handing to people on embeddings alone needs this score."""
    terminal_gap: float = 0.10
    """A terminal node (people) must beat every other candidate by this much to be chosen at all; otherwise it
    is set aside for this decision. Control never comes back from a terminal node, while a wrong specialist
    hands back (or escalates with its own tool), so a near tie goes to the node that can recover: the same
    clear margin a switch needs."""
    max_options: int = 3
    """Letters offered in a tie-break (including 'continues the current topic')."""
    prior_weight: float = 0.0
    """Weight of the encoder's scores added to the letter tie-break's log-probabilities."""
    tiebreak: str = "auto"
    """How an unclear case is put to the model:
    ab: one call, "is the latest message about topic A (current) or B (the encoder's best)?", read through the
    log-probabilities of A and B (see `ab_offset`);
    pair: two yes/no questions ("still on the current topic?", "about B?") whose P(yes) are compared: two calls,
    which cancels the 0.5B model's per-case yes-bias (measured over `ab`: +2.8 points free-running on the main
    benchmark file, +8.9 on the test set; docs/routing.md);
    it falls back to `ab` when the message's budget has one call left;
    auto (default): `pair` when the budget allows two calls, else `ab`. The default budget is one call per
    customer message (CAPTAIN["ROUTER_MODEL_CALLS_PER_MESSAGE"]), so by default `ab`;
    letters: one multiple-choice call among up to `max_options` candidates (the 0.5B model mostly picks A)."""
    ab_offset: float = 0.6
    """tiebreak "ab" (one call): switch when log P(B) + offset > log P(A); the offset cancels the 0.5B model's
    preference for the first option."""
    pair_offset: float = 0.03
    """Switch when P(yes | about B?) + offset > P(yes | stays on topic?). The stay question draws a few points
    more "yes" than the switch question from the 0.5B model whatever the message; 0.02-0.04 was a plateau on
    the development set (0.00 and 0.07 were both much worse)."""


@dataclass
class OursStrategy:
    """The product's router (see the module docstring)."""

    encoder: Encoder | None = None
    routers: RouterFactory | None = None
    settings: SemanticSettings = field(default_factory=SemanticSettings)
    tool_decider: Callable[[DecisionRequest], Decision] | None = None
    """Mode `tool` outside the Runner (the benchmark); None: the node's Runner decides (product)."""
    use_model: bool = True
    """False: semantic nodes never ask a model (the embedding-only variant)."""
    name: str = "ours"
    shortlist: int = 4
    """Router/custom nodes with more candidates than this get the encoder's top ones only."""

    # ---- entry -------------------------------------------------------------------------------------------

    def decide(self, request: DecisionRequest) -> Decision:
        candidates = request.candidates()
        if not candidates:
            return _stay(request, "none", "no candidates")
        ruled = match_rules(request)
        if ruled is not None:
            return ruled
        mode = request.graph.mode_of(request.node)
        if mode == "tool":
            if self.tool_decider is not None:
                return self.tool_decider(request)
            return _stay(request, "tool", "the agent's own model decides with handoff tools")
        if mode in ("router", "custom"):
            return self._model_router(request, mode)
        if self.encoder is None:
            return self._model_router(request, "router")
        return self._semantic(request)

    # ---- encoder -----------------------------------------------------------------------------------------

    def _documents(self, graph: Graph, key: str) -> list[str]:
        node = graph.nodes[key]
        docs = list(node.examples)
        if key == graph.root:
            # Triage holds what no scenario covers: greetings and questions about the business itself.
            if node.description:
                docs.insert(0, node.description)
        elif node.description or node.title:
            docs.insert(0, describe(node))
        return docs

    def scores(self, graph: Graph, message: str, keys: list[str]) -> dict[str, float]:
        assert self.encoder is not None
        docs: list[str] = []
        owner: list[str] = []
        for key in keys:
            for doc in self._documents(graph, key):
                docs.append(doc)
                owner.append(key)
        result = dict.fromkeys(keys, -1.0)
        if not docs:
            return result
        vectors = self.encoder.encode([message, *docs])
        sims = vectors[1:] @ vectors[0]
        for key, sim in zip(owner, sims, strict=True):
            result[key] = max(result[key], float(sim))
        return result

    # ---- semantic ----------------------------------------------------------------------------------------

    def _semantic(self, request: DecisionRequest) -> Decision:
        notes: list[str] = []
        decision = self._semantic_decide(request, notes)
        if notes:
            decision.reason = "; ".join([decision.reason, *notes])
        return decision

    def _semantic_decide(self, request: DecisionRequest, notes: list[str]) -> Decision:
        graph, s = request.graph, self.settings
        node = request.current
        candidates = request.candidates()
        # A specialist's way back to triage is worth what triage could route the message to.
        reach: dict[str, str] = {}
        keys = [node.key, *candidates]
        if graph.root in candidates:
            for k in graph.candidates(graph.root):
                if k not in keys and k != node.key and k not in request.exclude:
                    keys.append(k)
                    reach[k] = graph.root
        raw = self.scores(graph, request.message, keys)
        effective = {k: raw[k] for k in candidates}
        via: dict[str, str] = {}
        if graph.root in candidates:
            for k, through in reach.items():
                if raw[k] > effective[through]:
                    effective[through] = raw[k]
                    via[through] = k
        stay = raw[node.key]
        if node.key == graph.root:
            stay = max(stay, s.root_floor)
        scores = {k: round(v, 4) for k, v in raw.items()}
        ranked = sorted(effective.items(), key=lambda kv: -kv[1])
        if (
            len(ranked) > 1
            and graph.nodes[ranked[0][0]].terminal
            and ranked[0][1] - ranked[1][1] < s.terminal_gap
        ):
            notes.append(
                f"{ranked[0][0]} set aside: {ranked[0][1]:.2f} is within {s.terminal_gap:.2f} of {ranked[1][0]}"
            )
            ranked = ranked[1:]
        best, best_score = ranked[0]
        second_score = ranked[1][1] if len(ranked) > 1 else -1.0

        def label(k: str) -> str:
            return f"{k} (via {via[k]})" if k in via else k

        base = {"scores": scores, "parsed": best}
        if best_score < s.floor:
            return _stay(
                request,
                "semantic",
                f"no candidate above {s.floor:.2f} (best {label(best)} {best_score:.2f})",
                **base,
            )
        if request.phase == "redispatch":
            # The specialist judged the message out of its scope: triage routes it on when a candidate matches
            # well enough to switch on the encoder alone; otherwise triage keeps it (and answers or asks).
            if best_score >= s.switch:
                return self._switch(request, best, f"hand-back: {label(best)} {best_score:.2f}", base)
            return _stay(
                request, "semantic", f"hand-back: nothing clear ({label(best)} {best_score:.2f})", **base
            )
        need = s.human_switch if best == HUMAN else s.switch
        margin = s.root_margin if node.key == graph.root and best != HUMAN else s.margin
        switch_clear = best_score - stay >= margin and best_score >= need
        which_clear = best_score - second_score >= s.which_gap
        if switch_clear and which_clear:
            return self._switch(request, best, f"{label(best)} {best_score:.2f} vs stay {stay:.2f}", base)
        if best_score - stay <= s.stay_margin:
            return _stay(request, "semantic", f"stay {stay:.2f} >= {label(best)} {best_score:.2f}", **base)
        # Unclear: one small question to a model, if allowed.
        router = self.routers(graph.router_of(node.key)) if (self.routers and self.use_model) else None
        if router is None or not request.allow_model:
            if best_score >= need and best_score - stay >= margin / 2:
                return self._switch(
                    request, best, f"{label(best)} {best_score:.2f} vs stay {stay:.2f} (no model)", base
                )
            return _stay(
                request,
                "semantic",
                f"unclear, no model: stay ({label(best)} {best_score:.2f} vs {stay:.2f})",
                **base,
            )
        if s.tiebreak in ("auto", "pair", "ab"):
            if switch_clear:  # the target is unclear but switching is: the encoder's best
                return self._switch(
                    request, best, f"{label(best)} {best_score:.2f} vs stay {stay:.2f} (closest)", base
                )
            if s.tiebreak == "ab" or request.model_budget < 2:
                return self._ab(request, router, best, label(best), base)
            return self._pair(request, router, best, label(best), base)
        if switch_clear:  # which one?
            options = [k for k, _ in ranked[: s.max_options]]
            question = "which"
        elif which_clear:  # continue the current topic, or B?
            options = [node.key, best]
            question = "continue"
        else:
            options = [node.key, *[k for k, _ in ranked[: s.max_options - 1]]]
            question = "both"
        return self._tiebreak(request, router, options, question, effective | {node.key: stay}, base)

    def _switch(
        self, request: DecisionRequest, target: str, reason: str, base: dict[str, Any], mode: str = "semantic"
    ) -> Decision:
        return Decision(
            node=request.node,
            phase=request.phase,
            mode=mode,
            candidates=request.candidates(),
            target=target,
            reason=reason,
            **base,
        )

    def _tiebreak(
        self,
        request: DecisionRequest,
        router: tuple[RouterModel, str],
        options: list[str],
        question: str,
        prior: dict[str, float],
        base: dict[str, Any],
    ) -> Decision:
        messages, letters = tiebreak_messages(
            request.graph, request.current, options, request.message, request.history
        )
        decision = _stay(request, "semantic+model", "", prompt=messages[-1]["content"], **base)
        response = _ask_one_token(decision, router, messages)
        if response is None:
            return decision
        chosen = self._letter(response, letters, options, prior)
        if chosen is None:
            decision.refused = True
            decision.parsed = response.content
            decision.reason = f"{question}: unparseable output {response.content!r}: stay"
            return decision
        decision.parsed = chosen
        decision.target = chosen
        decision.reason = f"{question}: model chose {chosen}"
        return decision

    def _pair(
        self,
        request: DecisionRequest,
        router: tuple[RouterModel, str],
        best: str,
        label: str,
        base: dict[str, Any],
    ) -> Decision:
        """Decomposition: first "does it continue the current topic?", weighed against "is it about B?"."""
        graph, node = request.graph, request.current
        other = _other_topic(graph, node, best)
        ask_switch = switch_question(graph, node, other, request.message, request.history)
        ask_stay = stay_question(graph, node, request.message, request.history)
        decision = _stay(
            request,
            "semantic+model",
            "",
            prompt=ask_stay[-1]["content"] + "\n\n----\n\n" + ask_switch[-1]["content"],
            **base,
        )
        answers = []
        for messages in (ask_stay, ask_switch):
            response = _ask_one_token(decision, router, messages)
            if response is None:
                return decision
            answers.append(response)
        decision.raw_output = " | ".join(a.content for a in answers)
        p_stay, p_switch = (_p_yes(a) for a in answers)
        if p_stay is None or p_switch is None:
            decision.refused = True
            decision.reason = f"continue?: unparseable output {decision.raw_output!r}: stay"
            return decision
        if p_switch + self.settings.pair_offset > p_stay:
            decision.target = best
            decision.parsed = best
            decision.reason = f"continue? P(yes)={p_stay:.2f} < about {label}? P(yes)={p_switch:.2f}"
        else:
            decision.parsed = node.key
            decision.reason = f"continue? P(yes)={p_stay:.2f} >= about {label}? P(yes)={p_switch:.2f}"
        return decision

    def _ab(
        self,
        request: DecisionRequest,
        router: tuple[RouterModel, str],
        best: str,
        label: str,
        base: dict[str, Any],
    ) -> Decision:
        """One call: "A (stay) or B (the encoder's best)?", decided on the log-probabilities of A and B."""
        graph, node = request.graph, request.current
        other = _other_topic(graph, node, best)
        messages = ab_question(graph, node, other, request.message, request.history)
        decision = _stay(request, "semantic+model", "", prompt=messages[-1]["content"], **base)
        response = _ask_one_token(decision, router, messages)
        if response is None:
            return decision
        decision.raw_output = response.content
        lp = {"A": None, "B": None}
        if response.top_logprobs:
            for letter in lp:
                probs = [
                    math.exp(v)
                    for tok, v in response.top_logprobs[0].items()
                    if tok.strip().upper() == letter
                ]
                lp[letter] = math.log(sum(probs)) if probs else None
        if lp["A"] is None and lp["B"] is None:
            decision.refused = True
            decision.reason = f"A or B?: unparseable output {response.content!r}: stay"
            return decision
        lp_a = lp["A"] if lp["A"] is not None else -30.0
        lp_b = lp["B"] if lp["B"] is not None else -30.0
        if lp_b + self.settings.ab_offset > lp_a:
            decision.target = decision.parsed = best
            decision.reason = (
                f"A or B?: log P(B)={lp_b:.2f} + {self.settings.ab_offset} > log P(A)={lp_a:.2f} ({label})"
            )
        else:
            decision.parsed = node.key
            decision.reason = (
                f"A or B?: log P(A)={lp_a:.2f} >= log P(B)={lp_b:.2f} + {self.settings.ab_offset}"
            )
        return decision

    def _letter(
        self, response: RouterResponse, letters: list[str], options: list[str], prior: dict[str, float]
    ) -> str | None:
        if response.top_logprobs:
            first = response.top_logprobs[0]
            best: tuple[float, str] | None = None
            for letter, key in zip(letters, options, strict=True):
                lps = [lp for tok, lp in first.items() if tok.strip().rstrip(").:").upper() == letter]
                if not lps:
                    continue
                value = math.log(sum(math.exp(lp) for lp in lps)) + self.settings.prior_weight * prior.get(
                    key, 0.0
                )
                if best is None or value > best[0]:
                    best = (value, key)
            if best is not None:
                return best[1]
        match = re.match(r"\s*\(?([A-H])\b", response.content or "")
        if match and match.group(1) in letters:
            return options[letters.index(match.group(1))]
        return None

    # ---- router / custom ---------------------------------------------------------------------------------

    def _model_router(self, request: DecisionRequest, mode: str) -> Decision:
        graph = request.graph
        node = request.current
        candidates = request.candidates()
        scores: dict[str, float] = {}
        if self.encoder is not None and len(candidates) > self.shortlist:
            scores = self.scores(graph, request.message, candidates)
            candidates = sorted(candidates, key=lambda k: -scores[k])[: self.shortlist]
            candidates = [k for k in graph.nodes if k in candidates]
        router = self.routers(graph.router_of(node.key)) if self.routers else None
        rule_prompt = node.rule_prompt if mode == "custom" else ""
        messages, enum = router_messages(
            graph, node, candidates, request.message, request.history, rule_prompt=rule_prompt
        )
        decision = _stay(
            request,
            mode,
            "",
            prompt=messages[-1]["content"],
            scores={k: round(v, 4) for k, v in scores.items()},
        )
        if router is None:
            decision.reason = "no router model configured: stay"
            return decision
        client, model = router
        try:
            response = client.route(model=model, messages=messages, max_tokens=24, enum=enum)
        except ModelError as exc:
            decision.reason = f"router model failed ({exc.kind}): stay"
            return decision
        _apply_model(decision, response, model)
        parsed = parse_route(response.content, enum)
        decision.parsed = parsed
        if parsed is None or parsed not in enum:
            decision.refused = True
            what = "unparseable output" if parsed is None else f"{parsed!r} is not a candidate"
            decision.reason = f"{what}: stay"
        elif parsed == "stay":
            decision.reason = "router chose stay"
        else:
            decision.target = parsed
            decision.reason = f"router chose {parsed}"
        return decision


def _other_topic(graph: Graph, node: Node, best: str) -> str:
    """How the tie-break questions name the candidate: a hand-back to triage is 'a different topic'."""
    if best == graph.root and node.key != graph.root:
        return "a different topic or a general question"
    return describe(graph.nodes[best])


def _p_yes(response: RouterResponse) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first token's log-probabilities, else from the text; None if neither."""
    if response.top_logprobs:
        first = response.top_logprobs[0]
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


# ---- the Coze replica ----------------------------------------------------------------------------------------


@dataclass
class CozeStrategy:
    """Seed 000's router, faithfully: every agent listed (not only the edges), the builder's rule mid-prompt,
    the whole history, a bare number as output, and whatever agent that number names is where control goes."""

    routers: RouterFactory
    name: str = "coze"
    max_tokens: int = 8
    """Coze asked for up to 600 tokens; a number needs a few. Only the cost differs."""

    def decide(self, request: DecisionRequest) -> Decision:
        graph, node = request.graph, request.current
        if node.terminal:
            return _stay(request, "none", "terminal node")
        prompt, keys = coze_prompt(graph, node, request.message, request.history)
        decision = _stay(request, "coze", "", prompt=prompt)
        router = self.routers(graph.router_of(node.key))
        if router is None:
            decision.reason = "no router model configured: stay"
            return decision
        client, model = router
        try:
            response = client.route(
                model=model, messages=[{"role": "system", "content": prompt}], max_tokens=self.max_tokens
            )
        except ModelError as exc:
            decision.reason = f"router model failed ({exc.kind}): stay"
            return decision
        _apply_model(decision, response, model)
        match = re.search(r"\d+", response.content or "")
        if match is None:
            decision.refused = True
            decision.reason = "unparseable output: stay"
            return decision
        index = int(match.group())
        if index == 0:
            decision.reason = "router output 0: stay"
            return decision
        if index > len(keys):
            decision.refused = True
            decision.reason = f"agent_id {index} does not exist: stay"
            return decision
        target = keys[index - 1]
        decision.parsed = target
        decision.target = target
        decision.out_of_candidates = target not in graph.candidates(node.key)
        decision.reason = f"agent_id {index} -> {target}"
        return decision
