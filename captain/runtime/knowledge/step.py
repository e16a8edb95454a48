"""What the knowledge step did in one answer, for the debug log, the span and the run record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import RunEvent
from .evidence import Scored
from .findings import Finding
from .sources import Retrieval, Source


@dataclass
class KnowledgeStep:
    """What the knowledge step did in one answer: the debug log, the span and the run record show it."""

    node: str
    query: str = ""
    context: str = ""
    retrieval: Retrieval | None = None
    verdict: str = ""
    gate_score: float = 0.0
    action: str = "answered"
    """answered | faq_answer | evidence_answer | clarify | unknown | unknown_handoff | off_topic |
    grounding_handoff | refusal_handoff | promised_transfer | off"""
    sources: list[Source] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    unsupported: list[list[str]] = field(default_factory=list)
    """Why the grounding check refused a reply, per attempt that failed it (plain words per finding)."""
    evidence: list[Scored] = field(default_factory=list)
    """The source sentences put first in the prompt, best first."""
    ranking: dict[str, float] = field(default_factory=dict)
    """Every source sentence's evidence score by its text, for the grounding check (`outranked`)."""
    faq_left_out: list[str] = field(default_factory=list)
    """The customer's specific words the closest FAQ entry leaves out (so it was not sent as written)."""
    refusals: int = 0
    """The model's blanket refusals this turn (each re-asked once, `refusals`)."""
    latency_ms: float = 0.0

    def records(self) -> list[dict[str, Any]]:
        return [s.as_record(number=i, cited=i in self.cited) for i, s in enumerate(self.sources, 1)]


_PROBLEM_WORDS = {
    "not_in_sources": "in no source",
    "unknown_topic": "about something no source mentions",
    "wrong_context": "a source's value for something else",
    "unsupported": "a sentence no source supports",
    "language": "not in the customer's language",
    "echo": "the customer's question repeated",
    "answers_no": "a yes where the source says no",
    "ambiguous": "one of several answers, the customer did not say which",
    "unanswered": "no price, duration or time where the customer asked for one",
}


def summary(finding: Finding) -> str:
    """A finding for the debug log and spans: the problem and the values, without quoting the sources."""
    words = _PROBLEM_WORDS[finding.problem]
    return f"{', '.join(finding.written)} ({words})" if finding.written else words


def stated(finding: Finding) -> str:
    if finding.written:
        return ", ".join(finding.written)
    return repr(finding.sentence[:80])


def knowledge_event(step: KnowledgeStep) -> RunEvent:
    """The step as a run event (the debug log lists events)."""
    retrieval = step.retrieval
    return RunEvent(
        "knowledge",
        step.node,
        name=step.action,
        detail=step.query,
        data={
            "verdict": step.verdict,
            "gate_score": round(step.gate_score, 3),
            "best_score": round(retrieval.best_score, 3) if retrieval else None,
            "sources": step.records(),
            "unsupported": step.unsupported,
            "faq_left_out": step.faq_left_out,
            "refusals": step.refusals,
            "evidence": [
                {"source": e.number, "text": e.unit.full[:300], "score": round(e.score, 3)}
                for e in step.evidence
            ],
        },
    )
