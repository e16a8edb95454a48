"""What retrieval hands the agent: numbered sources, and the prompt block that puts them before the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Source:
    """One passage found for the turn: an approved FAQ entry or a document chunk."""

    kind: Literal["faq", "document"]
    ref: str
    """Stable reference of the row it came from: `faq:<id>` or `chunk:<id>`."""
    title: str
    """The FAQ question, or the document title and the headings above the passage."""
    text: str
    """The FAQ answer, or the passage."""
    url: str = ""
    score: float = 0.0
    """Cosine similarity of the best matching text to the query (the vector side of hybrid search)."""

    def as_record(self, *, number: int, cited: bool) -> dict[str, Any]:
        return {
            "number": number,
            "kind": self.kind,
            "ref": self.ref,
            "title": self.title,
            "url": self.url,
            "score": round(self.score, 3),
            "cited": cited,
        }


@dataclass(frozen=True)
class Retrieval:
    """The result of one search: the sources above the relevance threshold, best first."""

    query: str
    sources: tuple[Source, ...] = ()
    best_score: float = 0.0
    """The best vector score among all candidates, above the threshold or not (the gate and the debug log read it)."""
    latency_ms: float = 0.0
    candidates: tuple[dict[str, Any], ...] = field(default=())
    """The best candidates, kept or not, with their scores: what the debug log shows about a miss."""
    term_passages: dict[str, int] = field(default_factory=dict)
    """For each of the query's words, how many of the assistant's passages (chunks and FAQ entries) contain it:
    a word few passages state is a specific thing the customer named."""
    passages: int = 0
    """How many passages the assistant has (what `term_passages` counts out of)."""

    @property
    def found(self) -> bool:
        return bool(self.sources)


class KnowledgeBase(Protocol):
    """An assistant's knowledge: approved FAQ entries and document chunks, searched by hybrid search."""

    def retrieve(self, query: str, *, context: str = "", limit: int = 4) -> Retrieval:
        """Sources for `query`; `context` (the previous customer turn) is searched with it for follow-ups."""
        ...


def source_text(number: int, source: Source) -> str:
    if source.kind == "faq":
        return f"[{number}] Q: {source.title}\nA: {source.text}"
    head = f"[{number}] {source.title}" if source.title else f"[{number}]"
    return f"{head}\n{source.text}"


LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


def sources_block(
    sources: Sequence[Source],
    *,
    company: str,
    language: str = "",
    shown: Sequence[tuple[int, str]] | None = None,
) -> str:
    """The system-prompt section with the sources and the rule that facts come only from them. `shown`: (number,
    text) of what to show of the sources (`windows.windowed_sources`); None: every source whole.

    Short and blunt on purpose: a 0.5B model follows one clear rule and copies from text right above the question
    far better than it follows a long policy."""
    who = company or "the company"
    if not sources:
        return (
            "## Knowledge\n"
            f"Nothing in the knowledge base matches this message. Do not state any fact about {who} "
            "(no prices, times, numbers, addresses, policies). If the customer asks something, say you do not "
            "know and offer to connect them with a person."
        )
    if shown is None:
        shown = [(i, source_text(i, s)) for i, s in enumerate(sources, start=1)]
    listed = "\n\n".join(text for _, text in shown)
    return (
        "## Sources\n"
        f"{listed}\n\n"
        "## How to use the sources\n"
        f"- Facts about {who} (prices, times, numbers, limits, addresses, e-mails, links, rules) come ONLY from "
        "the sources above. Copy numbers exactly as written.\n"
        "- Answer the customer's question directly in one to three sentences, in the customer's language"
        + (
            f" ({LANGUAGE_NAMES[language]}, whatever the language of the sources)"
            if language in LANGUAGE_NAMES
            else ""
        )
        + ". Give the value for exactly what the customer asked (the item, place, season or case they name).\n"
        "- If the sources do not answer the question, say you do not know and offer to connect a person. "
        "Never guess."
    )
