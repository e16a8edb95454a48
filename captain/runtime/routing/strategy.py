"""The product's router: `OursStrategy.decide` at the node in charge, in order:

1. rules (equals / contains / regex): zero model calls (`rules`);
2. the node's mode: `tool` (its own model calls a handoff tool while answering: the Runner's job), `router` or
   `custom` (a router model picks among the candidates the encoder's evidence allows: `guided`, `router_mode`),
   or `semantic` (the default: the message's calibrated evidence for the node and its candidates
   (`calibration`), judged relative to each other (`semantic`); an unclear case goes to the tie-break,
   `tiebreak`, within the message's budget of router calls).
People (the terminal node) only when the customer asks for a person (`people`), in every mode.
A message that asks two things (`multi`, semantic and router modes): a clear judgement of the whole message
stands and the other topic is named to the node in charge; an unclear one goes to the first topic in the text.
Whatever the mode, only the node's candidates (edges + global nodes) can be chosen; anything else, or output
that cannot be parsed, means stay, and is recorded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .calibration import CALIBRATOR
from .decision import Decision
from .guided import decide_guided
from .multi import Topics, two_topics
from .people import asks_for_people
from .request import DecisionRequest, RouterFactory, stay
from .router_mode import decide_by_router
from .rules import match_rules
from .scope import SCOPE
from .scoring import Encoder
from .semantic import Judgement, Verdict, judge
from .thresholds import RoutingThresholds
from .tiebreak import TieBreak, tiebreaker_for
from .view import RoutingView, routing_view


@dataclass(frozen=True)
class OursStrategy:
    encoder: Encoder | None = None
    """None: semantic nodes are decided by the router model instead."""
    routers: RouterFactory | None = None
    thresholds: RoutingThresholds = field(default_factory=RoutingThresholds)
    tiebreak: TieBreak = TieBreak.PAIR
    """How an unclear semantic case is put to a model (`TieBreak.NONE`: never; the encoder decides alone)."""
    tool_decider: Callable[[DecisionRequest], Decision] | None = None
    """Mode `tool` outside the Runner (the benchmark); None: the node's Runner decides (product)."""
    name: str = "ours"
    shortlist: int = 3
    """Router/custom nodes: at most this many candidates (besides stay) are offered to the model (`guided`)."""

    def decide(self, request: DecisionRequest) -> Decision:
        if not request.candidates():
            return stay(request, "none", "no candidates")
        ruled = match_rules(request)
        if ruled is not None:
            return ruled
        mode = request.graph.mode_of(request.node)
        if mode == "tool":
            if self.tool_decider is not None:
                return self.tool_decider(request)
            return stay(request, "tool", "the agent's own model decides with handoff tools")
        view = routing_view(request)
        if mode in ("router", "custom"):
            return self._router(request, view, mode)
        if self.encoder is None:
            return self._router(request, view, "router")
        return self._semantic(request, view, self.encoder)

    def _router(self, request: DecisionRequest, view: RoutingView, mode: str) -> Decision:
        router = self.routers(request.graph.router_of(request.node)) if self.routers else None
        if self.encoder is not None and request.phase != "after_reply":
            judgement = self._judge(request, view, self.encoder)
            # Custom mode leaves a two-topic message to the builder's rule prompt.
            topics = self._topics(request, view, self.encoder, judgement) if mode == "router" else None
            if topics is not None and judgement.verdict is None:
                return self._first_topic(request, view, judgement, topics, mode)
            guided = decide_guided(
                request, view, mode, router, judgement, self.thresholds, size=self.shortlist
            )
            return _naming_the_other(guided, view, topics)
        decision = decide_by_router(request, view, mode, router, candidates=list(view.candidates), scores={})
        if decision.target in view.terminal and self.encoder is not None:
            # A router model is asked to pick, so it picks; a small one picks people for an ordinary message,
            # and control never comes back. People only when the customer asks for a person.
            t = self.thresholds
            people = asks_for_people(self.encoder, request.message, floor=t.people_floor, gap=t.people_gap)
            if not people.asks:
                return replace(
                    decision, target=request.node, reason=f"{decision.reason}; set aside: {people.reason}"
                )
        return decision

    def _judge(self, request: DecisionRequest, view: RoutingView, encoder: Encoder) -> Judgement:
        keys = [view.node, *view.candidates, *view.reach]
        measured = CALIBRATOR.measure(encoder, view.documents, request.message, keys)
        people = None
        if view.terminal:
            t = self.thresholds
            people = asks_for_people(encoder, request.message, floor=t.people_floor, gap=t.people_gap)
        scope = float("-inf")  # triage's own job (`scope`): at triage, and where triage can take it back
        if math.isfinite(self.thresholds.scope_margin) and (
            view.root == view.node or view.root in view.candidates
        ):
            t = self.thresholds
            uncovered = SCOPE.uncovered(CALIBRATOR, encoder, view.scenarios, t.scope_cover)
            scope = SCOPE.evidence(CALIBRATOR, encoder, uncovered, request.message, measured.noise)
        return judge(view, request.phase, self.thresholds, measured, people, scope)

    def _topics(
        self, request: DecisionRequest, view: RoutingView, encoder: Encoder, judgement: Judgement
    ) -> Topics | None:
        """The message's two clearly different topics (`multi`), or None."""
        if judgement.verdict is not None and judgement.verdict.target in view.terminal:
            return None  # the customer asks for a person: that wins over any topic
        return two_topics(
            CALIBRATOR, encoder, view, request.message, self.thresholds, people=tuple(view.terminal)
        )

    @staticmethod
    def _first_topic(
        request: DecisionRequest, view: RoutingView, judgement: Judgement, topics: Topics, mode: str
    ) -> Decision:
        """The whole message is unclear, its clauses are not: the first topic in the text, the second named."""
        return Decision(
            node=request.node,
            phase=request.phase,
            mode=mode,
            candidates=list(view.candidates),
            target=_route_to(view, topics.first),
            reason="; ".join(r for r in (topics.reason, judgement.note) if r),
            parsed=topics.first,
            scores=judgement.scores,
            also=topics.second,
        )

    def _semantic(self, request: DecisionRequest, view: RoutingView, encoder: Encoder) -> Decision:
        judgement = self._judge(request, view, encoder)
        topics = self._topics(request, view, encoder, judgement)
        if topics is not None and judgement.verdict is None:
            return self._first_topic(request, view, judgement, topics, "semantic")
        return _naming_the_other(self._judged(request, view, judgement), view, topics)

    def _judged(self, request: DecisionRequest, view: RoutingView, judgement: Judgement) -> Decision:
        """The semantic decision on the whole message's judgement (a tie-break question when it is unclear)."""

        def decided(mode: str, target: str, reason: str, parsed: str | None, **asked: Any) -> Decision:
            return Decision(
                node=request.node,
                phase=request.phase,
                mode=mode,
                candidates=list(view.candidates),
                target=target,
                reason="; ".join([reason, judgement.note]) if judgement.note else reason,
                parsed=parsed,
                scores=judgement.scores,
                **asked,
            )

        def by_encoder(verdict: Verdict) -> Decision:
            return decided("semantic", verdict.target, verdict.reason, judgement.best)

        case = judgement.unclear
        if case is None:
            assert judgement.verdict is not None
            return by_encoder(judgement.verdict)
        breaker = tiebreaker_for(self.tiebreak, request.model_budget)
        router = self.routers(request.graph.router_of(request.node)) if breaker and self.routers else None
        if breaker is None or router is None:
            return by_encoder(case.without_model)
        if case.closest is not None:  # the target is unclear but switching is: the encoder's best
            return by_encoder(case.closest)
        answer = breaker.ask(view, request.message, case, router, self.thresholds)
        return decided(
            "semantic+model",
            answer.target,
            answer.reason,
            answer.parsed,
            prompt=answer.prompt,
            refused=answer.refused,
            **answer.calls.fields(),
        )


def _route_to(view: RoutingView, key: str) -> str:
    """Where a decision goes for topic `key`: the node itself, a candidate, or triage for a node reached
    through it (triage routes it on when it re-dispatches)."""
    return key if key == view.node or key in view.candidates else view.reach[key]


def _naming_the_other(decision: Decision, view: RoutingView, topics: Topics | None) -> Decision:
    """A clear judgement of the whole message stands (a scene-setting clause must not move it); when it goes to
    one of the message's two topics, the other is named to the node in charge."""
    if topics is None:
        return decision
    if decision.target == _route_to(view, topics.first):
        return replace(decision, also=topics.second)
    if decision.target == _route_to(view, topics.second):
        return replace(decision, also=topics.first)
    return decision
