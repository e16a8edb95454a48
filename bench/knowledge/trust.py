"""The figures a team decides on before switching the AI on: how often a reply states a wrong or invented value
(of all questions), how many answerable questions it gets right (document-only and by language apart), how often
it says "I don't know" or gets a person when nothing answers, what a reply costs in time and prompt tokens. One
column per (set, model), so the bundled 0.5B model and the 1.5B quality model read side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from captain.runtime.knowledge import Evidence
from captain.runtime.knowledge.conflicts import CLARIFY_QUESTION
from captain.runtime.knowledge.grounding import specifics

from .dataset import ANSWERABLE
from .harness import Answer
from .scoring import declines, facts_present, invented_specifics, percentile


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}% ({part}/{whole})" if whole else "-"


def _stated(answer: Answer) -> tuple[list[bool], bool]:
    """For each value the reply states that the customer did not write (currencies aside): whether it is one of
    the question's expected facts; and whether the reply is right or declines (then none is read)."""
    question = answer.question
    if facts_present(answer.reply, question) or declines(answer.reply):
        return [], True
    asked = Evidence.of([question.question, *(m.get("content", "") for m in question.previous)])
    expected = Evidence.of([alternative for group in question.facts for alternative in group])
    return [
        s.in_evidence(expected)
        for s in specifics(answer.reply)
        if s.kind != "currency" and not s.in_evidence(asked)
    ], False


def wrong_value(answer: Answer, corpus: Evidence) -> bool:
    """The customer got a value that is not the answer: an answerable question replied with a specific that is
    none of its expected facts, or an unanswerable one with an invented specific. Declining is never wrong; a
    reply giving some of the expected values and no other is partial (`partial_reply`), not wrong."""
    if answer.outcome != "reply":
        return False
    question = answer.question
    if question.kind in ANSWERABLE:
        expected, settled = _stated(answer)
        return not settled and not all(expected)
    if question.kind == "unanswerable":
        return bool(invented_specifics(answer.reply, question, corpus))
    return False


def partial_reply(answer: Answer) -> bool:
    """An answerable question replied with some of its expected values and no other ("every 3 months" where the
    help centre says "every 3 months or 200 cups"): not all the answer, nothing wrong in it."""
    if answer.outcome != "reply" or answer.question.kind not in ANSWERABLE:
        return False
    expected, settled = _stated(answer)
    return not settled and bool(expected) and all(expected)


def _clarifies(reply: str) -> bool:
    """The product's one question back ("do you mean A or B?"), from its fixed texts."""
    return any(reply.startswith(t.split("{", 1)[0]) for t in CLARIFY_QUESTION.values())


def trust_figures(answers: Sequence[Answer], corpus: Evidence) -> dict[str, Any]:
    answerable = [a for a in answers if a.question.kind in ANSWERABLE]
    correct = [a for a in answerable if a.outcome == "reply" and facts_present(a.reply, a.question)]
    unanswerable = [a for a in answers if a.question.kind == "unanswerable"]
    honest = [
        a
        for a in unanswerable
        if a.outcome in ("human_handoff", "error")
        or (
            a.outcome == "reply" and declines(a.reply) and not invented_specifics(a.reply, a.question, corpus)
        )
    ]
    wrong = [a for a in answers if wrong_value(a, corpus)]

    def correct_of(pick: Any) -> str:
        whole = [a for a in answerable if pick(a)]
        return _share(sum(1 for a in correct if pick(a)), len(whole))

    seconds = [a.seconds for a in answers]
    handoffs = [a for a in answers if a.outcome == "human_handoff"]
    return {
        "questions": len(answers),
        "wrong_replies": _share(len(wrong), len(answers)),
        "wrong_ids": [a.question.id for a in wrong],
        "partial_replies": _share(sum(1 for a in answers if partial_reply(a)), len(answers)),
        "correct_answerable": _share(len(correct), len(answerable)),
        "correct_faq": correct_of(lambda a: a.question.kind == "faq"),
        "correct_document_only": correct_of(lambda a: a.question.kind == "document"),
        "correct_en": correct_of(lambda a: a.question.lang == "en"),
        "correct_zh": correct_of(lambda a: a.question.lang == "zh"),
        "unanswerable_idk_or_person": _share(len(honest), len(unanswerable)),
        "handoffs": len(handoffs),
        "handoffs_charged": sum(1 for a in handoffs if a.credit_used),
        "latency_p50_s": round(percentile(seconds, 50), 1),
        "latency_p95_s": round(percentile(seconds, 95), 1),
        "prompt_tokens_mean": round(sum(a.input_tokens for a in answers) / len(answers)) if answers else 0,
        "model_calls_mean": round(sum(a.llm_calls for a in answers) / len(answers), 2) if answers else 0,
        "clarifying_questions": sum(1 for a in answers if a.outcome == "reply" and _clarifies(a.reply)),
    }


ROWS = [
    ("wrong replies (of all questions)", "wrong_replies"),
    ("  partial: right values, some missing", "partial_replies"),
    ("correct on answerable", "correct_answerable"),
    ("  FAQ questions", "correct_faq"),
    ("  document-only questions", "correct_document_only"),
    ("  English", "correct_en"),
    ("  Chinese", "correct_zh"),
    ("unanswerable: I don't know / person", "unanswerable_idk_or_person"),
    ("handoffs (charged)", None),
    ("latency p50 / p95 (s)", None),
    ("prompt tokens (mean)", "prompt_tokens_mean"),
    ("model calls per question (mean)", "model_calls_mean"),
    ("clarifying questions asked", "clarifying_questions"),
]


def _cell(figures: dict[str, Any], label: str, key: str | None) -> str:
    if key is not None:
        return str(figures[key])
    if label.startswith("handoffs"):
        return f"{figures['handoffs']} ({figures['handoffs_charged']})"
    return f"{figures['latency_p50_s']} / {figures['latency_p95_s']}"


def side_by_side(columns: dict[str, dict[str, Any]]) -> str:
    """One column per "set / model" (held-out sets marked), one row per figure."""
    names = list(columns)
    width = max(16, *(len(n) + 2 for n in names))
    lines = ["".ljust(38) + "".join(n.rjust(width) for n in names)]
    for label, key in ROWS:
        lines.append(label.ljust(38) + "".join(_cell(columns[n], label, key).rjust(width) for n in names))
    return "\n".join(lines)
