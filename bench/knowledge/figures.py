"""The benchmark's figures, from scored answers (one row per strategy) and from retrieval-only rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from captain.runtime.knowledge import Evidence

from .dataset import ANSWERABLE
from .harness import Answer
from .scoring import declines, facts_present, invented_specifics, percentile


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def strategy_figures(answers: Sequence[Answer], corpus: Evidence) -> dict[str, Any]:
    answerable = [a for a in answers if a.question.kind in ANSWERABLE]
    correct = [a for a in answerable if a.outcome == "reply" and facts_present(a.reply, a.question)]
    unanswerable = [a for a in answers if a.question.kind == "unanswerable"]
    invented = [
        a for a in unanswerable if a.outcome == "reply" and invented_specifics(a.reply, a.question, corpus)
    ]
    answered_anyway = [a for a in unanswerable if a.outcome == "reply" and not declines(a.reply)]
    off_topic = [a for a in answers if a.question.kind == "off_topic"]
    off_answered = [a for a in off_topic if a.outcome == "reply" and not declines(a.reply)]
    cited = relevant = 0
    for a in correct:
        refs = {s["ref"] for s in a.sources if s.get("cited")}
        if a.expected_refs and refs:
            cited += len(refs)
            relevant += len(refs & a.expected_refs)
    by_kind = {
        kind: _pct(
            sum(1 for a in correct if a.question.kind == kind),
            sum(1 for a in answerable if a.question.kind == kind),
        )
        for kind in ANSWERABLE
    }
    by_lang = {
        lang: _pct(
            sum(1 for a in correct if a.question.lang == lang),
            sum(1 for a in answerable if a.question.lang == lang),
        )
        for lang in sorted({a.question.lang for a in answerable})
    }
    return {
        "questions": len(answers),
        "correct_answerable": _pct(len(correct), len(answerable)),
        "correct_answerable_share": len(correct) / len(answerable) if answerable else 0.0,
        "correct_faq": by_kind["faq"],
        "correct_document_only": by_kind["document"],
        "correct_by_language": by_lang,
        "unanswerable_invented": _pct(len(invented), len(unanswerable)),
        "unanswerable_invented_share": len(invented) / len(unanswerable) if unanswerable else 0.0,
        "unanswerable_answered_anyway": _pct(len(answered_anyway), len(unanswerable)),
        "off_topic_answered": _pct(len(off_answered), len(off_topic)),
        "handoffs": sum(1 for a in answers if a.outcome in ("human_handoff", "error")),
        "credits_charged": sum(1 for a in answers if a.credit_used),
        "citation_precision": f"{relevant}/{cited} ({100 * relevant / cited:.0f}%)" if cited else "-",
        "latency_p50_s": round(percentile([a.seconds for a in answers], 50), 2),
        "latency_p95_s": round(percentile([a.seconds for a in answers], 95), 2),
        "prompt_tokens_mean": round(sum(a.input_tokens for a in answers) / len(answers)) if answers else 0,
        "llm_calls_mean": round(sum(a.llm_calls for a in answers) / len(answers), 2) if answers else 0,
    }


ROWS = [
    ("correct on answerable", "correct_answerable"),
    ("  FAQ questions", "correct_faq"),
    ("  document-only questions", "correct_document_only"),
    ("unanswerable: invented facts", "unanswerable_invented"),
    ("unanswerable: answered anyway", "unanswerable_answered_anyway"),
    ("off-topic answered", "off_topic_answered"),
    ("handoffs", "handoffs"),
    ("credits charged", "credits_charged"),
    ("citation precision", "citation_precision"),
    ("latency p50 / p95 (s)", None),
    ("prompt tokens (mean)", "prompt_tokens_mean"),
    ("model calls (mean)", "llm_calls_mean"),
]


def format_table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    width = max(14, *(len(n) + 2 for n in names))
    lines = ["".ljust(32) + "".join(n.rjust(width) for n in names)]
    for label, key in ROWS:
        cells = []
        for name in names:
            figures = results[name]
            value = (
                f"{figures['latency_p50_s']} / {figures['latency_p95_s']}"
                if key is None
                else str(figures[key])
            )
            cells.append(value.rjust(width))
        lines.append(label.ljust(32) + "".join(cells))
    for name in names:
        lines.append(f"{name}: correct by language {results[name]['correct_by_language']}")
    return "\n".join(lines)


def _hit_rates(rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, str]:
    """Group -> "top-1 a/n, top-4 b/n": where the expected source was first and where it was among the sources."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    out = {}
    for name, group in sorted(groups.items()):
        first = sum(1 for r in group if r["found"] and r["found"][0] in r["expected"])
        found = sum(1 for r in group if set(r["found"]) & set(r["expected"]))
        out[name] = f"top-1 {first}/{len(group)}, top-4 {found}/{len(group)}"
    return out


def retrieval_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["kind"] in ANSWERABLE and r["expected"]]
    hit = [r for r in answerable if set(r["found"]) & set(r["expected"])]
    first = [r for r in answerable if r["found"] and r["found"][0] in r["expected"]]
    nothing_expected = [r for r in rows if r["kind"] in ("unanswerable", "off_topic")]
    false_found = [r for r in nothing_expected if r["found"]]
    verdicts: dict[str, Counter[str]] = {}
    for r in rows:
        if not r["found"]:
            verdicts.setdefault(r["kind"], Counter())[r["verdict"]] += 1
    return {
        "answerable_expected_source_found": _pct(len(hit), len(answerable)),
        "answerable_expected_source_first": _pct(len(first), len(answerable)),
        "top1_top4_by_kind": _hit_rates(answerable, lambda r: str(r["kind"])),
        "top1_top4_by_language": _hit_rates(answerable, lambda r: str(r["lang"])),
        "top1_top4_cross_language": _hit_rates(
            [r for r in answerable if r.get("source_lang")],
            lambda r: "cross" if r["lang"] != r["source_lang"] else "same",
        ),
        "evidence_facts_in_first_1_3_6": "/".join(
            str(sum(1 for r in answerable if (r.get("evidence_rank") or 99) <= k)) for k in (1, 3, 6)
        )
        + f" of {len(answerable)}",
        "unanswerable_or_off_topic_with_sources": _pct(len(false_found), len(nothing_expected)),
        "gate_verdicts_when_nothing_found": {k: dict(v) for k, v in verdicts.items()},
        "retrieval_ms_p50": percentile([r["ms"] for r in rows], 50),
        "retrieval_ms_p95": percentile([r["ms"] for r in rows], 95),
    }
