"""A knowledge benchmark set: a help centre (documents + FAQ pairs) and customer questions with the facts a correct
answer must contain (bench/knowledge/data/README.md describes the format)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("faq", "document", "unanswerable", "off_topic", "smalltalk")
ANSWERABLE = ("faq", "document")


@dataclass(frozen=True)
class Question:
    id: str
    lang: str
    kind: str
    question: str
    facts: list[list[str]]
    previous: list[dict[str, str]] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    source: str = ""


@dataclass(frozen=True)
class HelpCentre:
    name: str
    company: str
    description: str
    documents: list[Path]
    faq: list[dict[str, str]]
    questions: list[Question]


def _question(raw: dict[str, Any]) -> Question:
    if raw.get("kind") not in KINDS:
        raise ValueError(f"question {raw.get('id')}: kind must be one of {KINDS}")
    return Question(
        id=str(raw["id"]),
        lang=str(raw.get("lang", "en")),
        kind=raw["kind"],
        question=str(raw["question"]),
        facts=[[str(a) for a in group] for group in raw.get("facts") or []],
        previous=list(raw.get("previous") or []),
        forbidden=[str(f) for f in raw.get("forbidden") or []],
        source=str(raw.get("source", "")),
    )


def load_help_centre(path: Path) -> HelpCentre:
    """`path`: a set directory with docs/, faq.json, questions.json and an optional meta.json
    ({"company": ..., "description": ...})."""
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    documents = sorted(
        p for p in (path / "docs").iterdir() if p.suffix.lower() in (".md", ".html", ".txt", ".pdf")
    )
    faq = json.loads((path / "faq.json").read_text())
    raw_questions = json.loads((path / "questions.json").read_text())
    if isinstance(raw_questions, dict):
        raw_questions = raw_questions.get("questions", [])
    questions = [_question(q) for q in raw_questions]
    if len({q.id for q in questions}) != len(questions):
        raise ValueError(f"{path}: question ids are not unique")
    if isinstance(faq, dict):
        faq = faq.get("faq", faq.get("entries", []))
    return HelpCentre(
        name=path.name,
        company=str(meta.get("company") or path.name),
        description=str(meta.get("description") or ""),
        documents=documents,
        faq=[{"question": str(f["question"]), "answer": str(f["answer"])} for f in faq],
        questions=questions,
    )
