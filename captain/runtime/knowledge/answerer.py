"""`KnowledgeAnswerer`: retrieval on every turn, the gate, injection, the grounding check and citations around the
agent in charge (see the package docstring). It replaces the plain `AgentAnswerer` of `captain.runtime.team`."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..promises import HONEST_HANDOFF, PROMISED_TRANSFER, said_transfer
from ..runner import Runner
from ..types import Agent, HumanHandoff, Reply, RunContext, RunResult, Usage, content_text
from .citations import cited_numbers, strip_markers
from .claims import Encode, turn_check
from .conflicts import clarifying_question
from .evidence import clear_answer, evidence_block, evidence_ranking, select_evidence
from .faq_direct import FaqChoice, faq_direct
from .findings import Finding, correction_note
from .gate import Gate, GateVerdict
from .refusals import blanket_refusal, reask_messages
from .sources import KnowledgeBase, Retrieval, Source, sources_block
from .step import KnowledgeStep, knowledge_event, stated, summary
from .tokens import has_cjk, tokens
from .windows import windowed_sources

KnowledgeModeName = Literal["inject", "tool", "off"]

UNKNOWN_MESSAGE = {
    "en": "I'm sorry, I don't have information about that. Would you like me to connect you with a member of "
    "our team?",
    "zh": "抱歉，我没有找到这方面的信息。需要为您转接人工客服吗？",
}
OFF_TOPIC_MESSAGE = {
    "en": "Sorry, I can only help with questions about {company}.",
    "zh": "抱歉，我只能回答与{company}相关的问题。",
}
FOLLOW_UP_WORDS = 8
"""A message of at most this many words after an earlier customer turn is a follow-up (as retrieval reads it)."""
LEDGER_KEY = "knowledge"
"""Where the turn's `SourceLedger` sits in `RunContext.extra`, for the knowledge search tool."""


@dataclass(frozen=True)
class KnowledgeSettings:
    """An assistant's knowledge settings for one turn (built from its row by the host)."""

    mode: KnowledgeModeName = "inject"
    when_unknown: Literal["offer", "handoff"] = "offer"
    unknown_message: str = ""
    off_topic_message: str = ""
    cite_links: bool = False
    grounding_check: bool = True
    company: str = ""
    answer_only_agents: frozenset[str] = frozenset()
    """Agents the gate may answer for when nothing is found: those with no tools that act (a specialist that
    looks up an order needs no knowledge to do it)."""
    limit: int = 4
    faq_answer_score: float | None = 0.65
    """An approved FAQ entry this close to the message (cosine), in the customer's language and ahead of the next
    FAQ entry by `faq_answer_margin`, is the reply as written: no model call. None: always ask the model."""
    faq_answer_margin: float = 0.10
    sentence_support: float | None = 0.3
    """Least encoder cosine between a factual reply sentence without specifics and a source sentence."""
    evidence_limit: int = 6
    """How many source sentences go first in the prompt as the evidence (0: none)."""
    evidence_windows: bool = False
    """Show document passages as windows around the evidence sentences (`windows`) instead of whole. Off: on the
    held-out `furniture` set it was worse on every figure (docs/knowledge.md, "Evidence windows")."""
    refusal_reask: bool = False
    """A blanket refusal of the model ("抱歉，我无法协助完成这个请求。") when the evidence is on topic is asked once
    more, with the evidence and the question in the customer's language (`refusals`); refused again, the customer
    gets the sentence that clearly answers or an honest handoff, never the refusal. Off: on the tuning questions
    the model refused, 2 more right answers but 1-2 more wrong replies and 2 fewer honest replies to unanswerable
    questions (docs/knowledge.md, "The model's own refusals")."""
    refusal_handoff: bool = True
    """Without the re-ask, a blanket refusal while the evidence is on topic is not sent: the customer gets the
    honest handoff (free: "I can't help with that" was charged as a reply) and a person answers."""


class SourceLedger:
    """The sources of one turn, numbered in the order they reached the model: injected first, then what the
    search tool returned (the same source keeps its number)."""

    def __init__(self) -> None:
        self.sources: list[Source] = []

    def add(self, found: Sequence[Source]) -> list[tuple[int, Source]]:
        numbered = []
        for source in found:
            known = next((i for i, s in enumerate(self.sources, 1) if s.ref == source.ref), None)
            if known is None:
                self.sources.append(source)
                known = len(self.sources)
            numbered.append((known, source))
        return numbered


def _language(text: str) -> str:
    return "zh" if has_cjk(text) else "en"


def _query(messages: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """(the customer's new messages, the customer's turn before them): a follow-up such as "and for kids?" is
    searched together with what it follows up on."""
    end = len(messages)
    while end > 0 and messages[end - 1]["role"] != "user":
        end -= 1
    start = end
    while start > 0 and messages[start - 1]["role"] == "user":
        start -= 1
    query = "\n".join(content_text(m["content"]) for m in messages[start:end])
    previous = next(
        (content_text(m["content"]) for m in reversed(messages[:start]) if m["role"] == "user"), ""
    )
    return query, previous


def _fixed(node: str, outcome: Reply | HumanHandoff) -> RunResult:
    """A result no model wrote: nothing was called, so nothing is charged."""
    return RunResult(outcome=outcome, agent_key=node, usage=Usage(), route=[node], events=[])


def _merge(first: RunResult, second: RunResult) -> RunResult:
    usage = Usage()
    usage.add(first.usage)
    usage.add(second.usage)
    return dataclasses.replace(second, usage=usage, events=[*first.events, *second.events])


@dataclass
class KnowledgeAnswerer:
    """The answerer of a team that knows things. `steps` keeps each answer's knowledge step for the host."""

    runner: Runner
    agents: dict[str, Agent]
    context: RunContext
    base: KnowledgeBase
    settings: KnowledgeSettings
    gate: Gate | None = None
    encode: Encode | None = None
    """The sentence encoder (evidence selection, the check of sentences without specifics); None: without."""
    on_step: Sequence[Any] = ()
    """Callables taking the finished `KnowledgeStep` (the tracing hook, the playground's progress)."""
    steps: list[KnowledgeStep] = field(default_factory=list)

    def __call__(self, node: str, messages: list[dict[str, Any]]) -> RunResult:
        started = time.monotonic()
        ledger = SourceLedger()
        self.context.extra[LEDGER_KEY] = ledger
        step = KnowledgeStep(node=node)
        try:
            result = self._answer(node, messages, ledger, step)
        finally:
            self.context.extra.pop(LEDGER_KEY, None)
        step.sources = list(ledger.sources)
        if isinstance(result.outcome, Reply) and step.sources and step.action != "faq_answer":
            result = self._with_citations(result, step)
        result.sources = step.records()
        step.latency_ms = (time.monotonic() - started) * 1000
        if step.action == "off" and not step.unsupported:
            return result  # no knowledge and nothing refused: nothing for the debug log to show
        result.events = [knowledge_event(step), *result.events]
        self.steps.append(step)
        for callback in self.on_step:
            callback(step)
        return result

    # -- the steps ------------------------------------------------------------------------------------------------

    def _answer(
        self, node: str, messages: list[dict[str, Any]], ledger: SourceLedger, step: KnowledgeStep
    ) -> RunResult:
        settings = self.settings
        step.query, step.context = _query(messages)
        if settings.mode == "off":
            step.action = "off"
            return self._checked(node, messages, self.agents, ledger, step)
        if settings.mode == "tool":
            return self._checked(node, messages, self.agents, ledger, step)
        retrieval = self.base.retrieve(step.query, context=step.context, limit=settings.limit)
        step.retrieval = retrieval
        ledger.add(retrieval.sources)
        # A short follow-up ("and the gold card?") is a question about what came before: an FAQ entry close to
        # the pair is not the answer to it as written, so the model answers (and the check reads its reply).
        follow_up = bool(step.context) and len(tokens(step.query)) <= FOLLOW_UP_WORDS
        choice = FaqChoice(None) if follow_up else self._faq_choice(retrieval, step.query)
        step.faq_left_out = list(choice.left_out)
        if (direct := choice.entry) is not None:
            step.action = "faq_answer"
            step.cited = [n for n, _ in ledger.add([direct])]
            return _fixed(node, Reply(direct.text))
        if not retrieval.found and self.gate is not None and node in settings.answer_only_agents:
            verdict, score = self.gate.classify(step.query, best_knowledge_score=retrieval.best_score)
            step.verdict, step.gate_score = verdict.value, score
            if verdict is GateVerdict.OFF_TOPIC:
                step.action = "off_topic"
                text = settings.off_topic_message or OFF_TOPIC_MESSAGE[_language(step.query)]
                return _fixed(node, Reply(text.format(company=settings.company or "us"), billable=False))
            if verdict is GateVerdict.IN_SCOPE:
                if settings.when_unknown == "handoff":
                    step.action = "unknown_handoff"
                    return _fixed(node, HumanHandoff(reason="Nothing in the knowledge answers the question."))
                step.action = "unknown"
                text = settings.unknown_message or UNKNOWN_MESSAGE[_language(step.query)]
                return _fixed(node, Reply(text, billable=False))
        shown = None
        if self.encode is not None and settings.evidence_limit:
            ranked = select_evidence(
                ledger.sources, query=step.query, context=step.context, encode=self.encode, limit=None
            )
            step.evidence = ranked[: settings.evidence_limit]
            step.ranking = evidence_ranking(ranked)
            if settings.evidence_windows and ranked:
                shown = windowed_sources(ledger.sources, ranked, limit=settings.evidence_limit)
        block = sources_block(
            ledger.sources, company=settings.company, language=_language(step.query), shown=shown
        )
        first = evidence_block(step.evidence)
        return self._checked(
            node, messages, self._with_block(f"{first}\n\n{block}" if first else block), ledger, step
        )

    def _checked(
        self,
        node: str,
        messages: list[dict[str, Any]],
        agents: dict[str, Agent],
        ledger: SourceLedger,
        step: KnowledgeStep,
    ) -> RunResult:
        """Run the agent; a reply the check refuses is written again once with the findings named. Refused
        again, the customer gets the one source sentence that clearly answers, or an honest handoff (free)."""
        result = self._run(node, messages, agents)
        if self._refused(result, ledger, step):
            if not self.settings.refusal_reask:
                return self._handed_over(result, step)
            # Asked once more with the evidence and the question in the customer's language; a second refusal
            # is not sent either: the customer is better served by a person than by "I can't help with that".
            result = _merge(result, self._run(node, self._reask(messages, step), agents))
            if self._refused(result, ledger, step):
                return self._honest(result, [], step)
        if not isinstance(result.outcome, Reply):
            return result
        if not self.settings.grounding_check:
            return self._kept_promise(result, step)
        if result.outcome.confirmation is not None:
            # A held call's question is built from the call's arguments, not written by the model; running the
            # agent again would only hold the call again.
            return result
        findings = self._findings(result, messages, ledger, step)
        if not findings:
            return self._kept_promise(result, step)
        step.unsupported.append([summary(f) for f in findings])
        settled = self._settled(result, findings, step)
        if settled is not None:
            return settled
        note = correction_note(findings)
        retry = _merge(
            result, self._run(node, messages, {k: self._noted(a, note) for k, a in agents.items()})
        )
        if not isinstance(retry.outcome, Reply):
            return retry
        if self._refused(retry, ledger, step):
            # Told what was wrong, the model declined: the first reply's findings stand.
            return self._honest(retry, findings, step)
        findings = self._findings(retry, messages, ledger, step)
        if not findings:
            return self._kept_promise(retry, step)
        step.unsupported.append([summary(f) for f in findings])
        return self._honest(retry, findings, step)

    def _honest(self, result: RunResult, findings: list[Finding], step: KnowledgeStep) -> RunResult:
        """The model's last reply is not sent (refused twice by the check, or a refusal twice): the one source
        sentence that clearly answers, as written, or an honest handoff (free)."""
        language = _language(step.query)
        # No source sentence answers a question about something no source mentions, however close it scores.
        unknown = any(f.problem == "unknown_topic" for f in findings)
        straight = None if unknown else clear_answer(step.evidence, language=language, question=step.query)
        if straight is not None:
            step.action = "evidence_answer"
            return dataclasses.replace(result, outcome=Reply(straight.text))
        if findings:
            step.action = "grounding_handoff"
            values = ", ".join(dict.fromkeys(stated(f) for f in findings))
            reason = f"The AI's reply stated {values}, which no source supports (grounding check)."
        else:
            step.action = "refusal_handoff"
            reason = "The AI declined to answer twice although the sources are on topic."
        return dataclasses.replace(
            result, outcome=HumanHandoff(reason=reason, customer_message=HONEST_HANDOFF[language])
        )

    def _handed_over(self, result: RunResult, step: KnowledgeStep) -> RunResult:
        """A blanket refusal, not asked again: the honest handoff. Never a source sentence instead: after a
        refusal it was as often one that answers something else (docs/knowledge.md, "The model's own refusals")."""
        step.action = "refusal_handoff"
        reason = "The AI declined to answer although the sources are on topic."
        customer = HONEST_HANDOFF[_language(step.query)]
        return dataclasses.replace(result, outcome=HumanHandoff(reason=reason, customer_message=customer))

    def _refused(self, result: RunResult, ledger: SourceLedger, step: KnowledgeStep) -> bool:
        """A blanket refusal of the model while the evidence is on topic (`refusals`); counted on the step."""
        settings = self.settings
        wanted = settings.refusal_reask or settings.refusal_handoff
        if not wanted or not step.evidence or not isinstance(result.outcome, Reply):
            return False
        texts = [f"{s.title}\n{s.text}" for s in ledger.sources]
        if not blanket_refusal(result.outcome.text, texts):
            return False
        step.refusals += 1
        return True

    def _reask(self, messages: list[dict[str, Any]], step: KnowledgeStep) -> list[dict[str, Any]]:
        return reask_messages(
            messages,
            evidence=step.evidence,
            question=step.query,
            language=_language(step.query),
            company=self.settings.company,
        )

    def _settled(self, result: RunResult, findings: list[Finding], step: KnowledgeStep) -> RunResult | None:
        """Refusals a rewrite would not fix. The customer named neither of two things the sources answer
        differently: one question back, free. A "yes" where the sentence that answers says "no": that sentence,
        as written, when it is in the customer's language (the model already read it once and said "yes")."""
        language = _language(step.query)
        if all(f.problem == "ambiguous" for f in findings):
            step.action = "clarify"
            text = clarifying_question(findings[0].written, language)
            return dataclasses.replace(result, outcome=Reply(text, billable=False))
        answer = step.evidence[0].unit if step.evidence else None
        if (
            answer is not None
            and answer.language == language
            and any(f.problem == "answers_no" for f in findings)
        ):
            step.action = "evidence_answer"
            return dataclasses.replace(result, outcome=Reply(answer.text))
        return None

    def _kept_promise(self, result: RunResult, step: KnowledgeStep) -> RunResult:
        """A reply that says a transfer happens is the transfer: nobody else would make it."""
        if isinstance(result.outcome, Reply) and said_transfer(result.outcome.text):
            step.action = "promised_transfer"
            return dataclasses.replace(result, outcome=HumanHandoff(reason=PROMISED_TRANSFER))
        return result

    # -- helpers --------------------------------------------------------------------------------------------------

    def _faq_choice(self, retrieval: Retrieval, query: str) -> FaqChoice:
        settings = self.settings
        return faq_direct(
            retrieval, query, threshold=settings.faq_answer_score, margin=settings.faq_answer_margin
        )

    def _run(self, node: str, messages: list[dict[str, Any]], agents: dict[str, Agent]) -> RunResult:
        return self.runner.run(agents=agents, start_key=node, messages=messages, context=self.context)

    def _with_block(self, block: str) -> dict[str, Agent]:
        # Every agent sees the same sources: a handoff inside the run must not lose them.
        return {k: self._noted(a, "\n\n" + block) for k, a in self.agents.items()}

    @staticmethod
    def _noted(agent: Agent, text: str) -> Agent:
        # The sources change every turn: they go with the turn's context, after the fixed prompt.
        return dataclasses.replace(agent, context=agent.context + text)

    def _findings(
        self, result: RunResult, messages: list[dict[str, Any]], ledger: SourceLedger, step: KnowledgeStep
    ) -> list[Finding]:
        assert isinstance(result.outcome, Reply)
        check = turn_check(
            # Text only: an image's base64 digits must not "support" a number in the reply.
            conversation=[content_text(m.get("content")) for m in messages],
            # The fixed part and the turn's part apart, in the order they were joined in: the fixed part's reading
            # is kept from one turn to the next (claims.turn_check).
            instructions=[text for a in self.agents.values() for text in (a.instructions, a.context)],
            sources=[(s.title, f"{s.text}\n{s.url}") for s in ledger.sources],
            # Tool results are sources: an order number or a date the reply states must be in one of them.
            tool_results=[
                *(
                    (e.name or "tool result", str(e.data.get("result", "")))
                    for e in result.events
                    if e.type == "tool_call"
                ),
                # A long result the model saw only the start of is still what the tool returned.
                *((a.tool, a.content) for a in self.context.artifacts),
            ],
            question=f"{step.context}\n{step.query}".strip(),
            language=_language(step.query),
            encode=self.encode,
            sentence_support=self.settings.sentence_support,
            answer=step.evidence[0].unit if step.evidence else None,
            asked=step.query,
            known=[w for w, n in (step.retrieval.term_passages if step.retrieval else {}).items() if n],
            term_passages=step.retrieval.term_passages if step.retrieval else None,
            passages=step.retrieval.passages if step.retrieval else 0,
            ranking=step.ranking,
        )
        return check.findings(result.outcome.text)

    def _with_citations(self, result: RunResult, step: KnowledgeStep) -> RunResult:
        assert isinstance(result.outcome, Reply)
        step.cited = cited_numbers(result.outcome.text, step.sources)
        text = strip_markers(result.outcome.text)
        if self.settings.cite_links:
            links = list(
                dict.fromkeys(step.sources[n - 1].url for n in step.cited if step.sources[n - 1].url)
            )
            if links:
                text += "\n\n" + "\n".join(links)
        return dataclasses.replace(result, outcome=dataclasses.replace(result.outcome, text=text))
