"""The AI team answering one customer turn: route the message through the team's graph, let the agent in charge
answer, and return one result. Production, the playground and the routing benchmark all run a turn through
`TeamRunner.run`, so what the playground or the benchmark shows is what production does.

    runner = TeamRunner(team=Team(agents, graph), strategy=strategy, answer=AgentAnswerer(runner, agents))
    turn = runner.run(TurnInput(history=earlier, batch=["where is my parcel?"], current="triage"), context)
    turn.result   # RunResult: outcome, agent in charge, usage (agents + router), route, events
    turn.dispatch # DispatchResult: node in charge (may be `human`), route, every routing Decision

A plain star team (triage <-> specialists, every handoff decided by the agents' own models) is a graph whose
nodes use the `tool` mode: dispatch records that the node's agent decides, and the agent's handoff tools move
control inside the Runner.

No Django: the host builds the team, the strategy and the answerer from its rows and passes the turn in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .routing import (
    HUMAN,
    Decision,
    DecisionRequest,
    DispatchResult,
    Graph,
    Policy,
    Strategy,
    Turn,
    dispatch_message,
)
from .runner import Runner
from .types import (
    Agent,
    HumanHandoff,
    Outcome,
    Reply,
    RunContext,
    RunError,
    RunEvent,
    RunResult,
    Usage,
    content_text,
)


class TeamHooks:
    """What a host observes while a turn runs (tracing, the playground's progress). Every method is a no-op."""

    def on_decision(self, decision: Decision) -> None:
        """A routing decision was taken (called as it happens, before the node in charge answers)."""

    def on_answer(self, node: str, result: RunResult) -> None:
        """The agent at `node` finished its run (its events are in `result.events`)."""


@dataclass
class _ObservedStrategy:
    """Passes each decision to the hooks the moment the strategy takes it."""

    strategy: Strategy
    hooks: Sequence[TeamHooks]

    def decide(self, request: DecisionRequest) -> Decision:
        decision = self.strategy.decide(request)
        for hook in self.hooks:
            hook.on_decision(decision)
        return decision


@dataclass
class _SecondTopic:
    """Remembers the second topic a decision of this turn named (`Decision.also`), so the node that answers is
    told. Worded as a possibility: the clause split also names a topic on some messages that ask one thing (22 of
    221 turns of the held-out CrossWOZ file), and a note that asserts it would make the node announce a hand-over
    nobody asked for."""

    strategy: Strategy
    also: str | None = None

    def decide(self, request: DecisionRequest) -> Decision:
        decision = self.strategy.decide(request)
        if decision.also:
            self.also = decision.also
        return decision

    def note(self, graph: Graph, node: str) -> list[dict[str, Any]]:
        other = graph.nodes.get(self.also or "")
        if other is None or self.also == node:
            return []
        about = f"{other.title}: {other.description}".strip().rstrip(":")
        return [
            {
                "role": "system",
                "content": (
                    f"The customer's message may also ask about something another team handles ({about}). "
                    "If it does, answer the part that is yours and say that the other part goes to that team "
                    "next; do not answer that part yourself."
                ),
            }
        ]


@dataclass(frozen=True)
class Team:
    """The agents of an assistant and the graph that connects them."""

    agents: dict[str, Agent]
    """Agent key -> agent (triage and every enabled specialist)."""
    graph: Graph
    """Who may hand over to whom, and how each node decides (a star of `tool` nodes when nothing is set)."""


@dataclass(frozen=True)
class TurnInput:
    """One customer turn, passed explicitly (nothing is read from ambient state)."""

    history: Sequence[dict[str, Any]]
    """Chat turns before this turn (user/assistant, oldest first, no system prompt). An assistant turn may name
    the node that wrote it (`agent`): router prompts attribute it; agents see role and content only."""
    batch: Sequence[str | list[dict[str, Any]]]
    """The customer's new messages; one with images is a Chat Completions content list."""
    """The customer's new messages this turn answers (one, or a burst answered together), oldest first."""
    current: str
    """Node in charge when the turn starts (the agent that answered last; unknown keys mean the root)."""

    @classmethod
    def from_chat(cls, messages: Sequence[dict[str, Any]], *, current: str) -> TurnInput:
        """Split a chat history ending with the customer's messages into history and batch."""
        split = len(messages)
        while split > 0 and messages[split - 1]["role"] == "user":
            split -= 1
        return cls(
            history=list(messages[:split]), batch=[m["content"] for m in messages[split:]], current=current
        )

    @property
    def message(self) -> str:
        """What the router reads: the batch as one text."""
        return "\n".join(content_text(c) for c in self.batch)

    def chat(self) -> list[dict[str, Any]]:
        """What the agents read: the history, then each new message as its own user turn."""
        earlier = [{"role": m["role"], "content": m["content"]} for m in self.history]
        return [*earlier, *({"role": "user", "content": text} for text in self.batch)]


class Answerer(Protocol):
    """Writes the reply of the node in charge. `messages` ends with what the node answers."""

    def __call__(self, node: str, messages: list[dict[str, Any]]) -> RunResult: ...


@dataclass
class AgentAnswerer:
    """The product's answerer: the node's agent runs in the Runner (tools, handoffs, guards)."""

    runner: Runner
    agents: dict[str, Agent]
    context: RunContext

    def __call__(self, node: str, messages: list[dict[str, Any]]) -> RunResult:
        return self.runner.run(agents=self.agents, start_key=node, messages=messages, context=self.context)


@dataclass(frozen=True)
class TeamTurn:
    """What one turn produced."""

    result: RunResult
    """The outcome to apply, the agent that continues on the next message, usage of every model call."""
    dispatch: DispatchResult
    """The routing side: node in charge after the turn (may be `human`), route, decisions, replies."""


@dataclass
class _Answers:
    """The replies of the nodes that answered this turn (after-reply hops can make several nodes answer)."""

    results: list[RunResult] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        """The run already ended without a reply (people, resolved, error): nobody answers after that."""
        return bool(self.results) and not isinstance(self.results[-1].outcome, Reply)


@dataclass
class TeamRunner:
    """Routes one turn through the team and runs the node in charge; see the module docstring."""

    team: Team
    strategy: Strategy
    answer: Answerer
    policy: Policy = field(default_factory=Policy)
    hooks: Sequence[TeamHooks] = ()

    def run(self, turn: TurnInput) -> TeamTurn:
        history = [Turn(m["role"], content_text(m["content"]), m.get("agent", "")) for m in turn.history]
        current = turn.current if turn.current in self.team.graph.nodes else self.team.graph.root
        answers = _Answers()
        chat = turn.chat()
        seen = _SecondTopic(self.strategy)

        def respond(node: str, turns: list[Turn]) -> tuple[str, str] | None:
            if answers.ended:
                return None
            # The turn's chat, plus what other nodes answered to this message before this one.
            extra = [{"role": t.role, "content": t.content} for t in turns[len(history) + 1 :]]
            note = seen.note(self.team.graph, node)
            result = self.answer(node, [*chat, *extra, *note])
            answers.results.append(result)
            for hook in self.hooks:
                hook.on_answer(node, result)
            if isinstance(result.outcome, Reply):
                answers.texts.append(result.outcome.text)
                return result.agent_key, result.outcome.text
            return None

        strategy: Strategy = _ObservedStrategy(seen, self.hooks) if self.hooks else seen
        dispatched = dispatch_message(
            self.team.graph,
            strategy,
            current=current,
            message=turn.message,
            history=history,
            respond=respond,
            policy=self.policy,
        )
        return TeamTurn(result=self._result(dispatched, answers, current), dispatch=dispatched)

    def _result(self, dispatched: DispatchResult, answers: _Answers, current: str) -> RunResult:
        """One RunResult for the turn: the agents' runs and the router's decisions merged."""
        usage = Usage()
        events: list[RunEvent] = []
        for result in answers.results:
            usage.add(result.usage)
            events.extend(result.events)
        for decision in dispatched.decisions:
            usage.add(
                Usage(
                    requests=decision.llm_calls,
                    input_tokens=decision.input_tokens,
                    output_tokens=decision.output_tokens,
                )
            )
            events.append(
                RunEvent(
                    "route",
                    decision.node,
                    name=decision.mode,
                    detail=decision.reason,
                    data=decision.as_dict(),
                )
            )
        route = list(dispatched.route)
        for result in answers.results:
            route += [k for k in result.route[1:] if not route or k != route[-1]]
        outcome: Outcome
        if dispatched.node == HUMAN:
            reason = next((d.reason for d in reversed(dispatched.decisions) if d.target == HUMAN), "")
            outcome = HumanHandoff(reason=f"The router handed the conversation to people ({reason}).")
            agent_key = dispatched.route[-2] if len(dispatched.route) > 1 else current
        elif answers.ended:
            outcome, agent_key = answers.results[-1].outcome, answers.results[-1].agent_key
        elif answers.texts:
            # Charged when any of the replies came from a model (a fixed "not found" text alone is free).
            billable = any(isinstance(r.outcome, Reply) and r.outcome.billable for r in answers.results)
            reasoning = "\n\n".join(
                r.outcome.reasoning
                for r in answers.results
                if isinstance(r.outcome, Reply) and r.outcome.reasoning
            )
            # A question held for the customer's confirmation is the last thing said: it asks about the call
            # its own run held.
            last = answers.results[-1].outcome if answers.results else None
            confirmation = last.confirmation if isinstance(last, Reply) else None
            outcome = Reply(
                "\n\n".join(answers.texts), billable=billable, reasoning=reasoning, confirmation=confirmation
            )
            agent_key = dispatched.node
        else:
            outcome, agent_key = RunError("empty_reply", "no node answered"), dispatched.node
        sources = [record for result in answers.results for record in result.sources]
        artifacts = [artifact for result in answers.results for artifact in result.artifacts]
        plan = next((r.plan for r in reversed(answers.results) if r.plan is not None), None)
        return RunResult(
            outcome=outcome,
            agent_key=agent_key,
            usage=usage,
            route=route,
            events=events,
            sources=sources,
            artifacts=list(dict.fromkeys(artifacts)),
            plan=plan,
        )
