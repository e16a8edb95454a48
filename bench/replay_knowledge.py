"""`python -m bench.replay_knowledge --json F`: a saved knowledge benchmark run's replies through today's grounding
check, without a model (bench/knowledge/replay.py; `--help` for the options).

`--by-rule` counts instead, per rule of the check, the right replies and the wrong ones (a wrong or invented value,
as the benchmark's trust figures score it) that the rule refuses: a reply counts under every rule that has a finding
on it, and under "only" when that rule's findings are its only ones. The named-words rule (`conflicts.named_words`)
is told apart by replaying each reply without it: a reply it alone refuses is refused with it and not without.
Counts only, unless `--list` (never for a held-out set whose replies must not be read); `--rows F` keeps each
reply's verdict and rules (with the reply's id, not its text) for a before/after comparison.

Django is set up first, as manage.py does it, so every model import comes after it."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.cli import setup_django

FAQ_AS_WRITTEN_SECONDS = 0.5
"""A saved reply faster than this was an approved FAQ answer sent as written (no model call)."""


def rule_of(problem: str, detail: str) -> str:
    """The rule of the check a finding comes from: its problem, and for a value from the wrong context which of
    the rules that read the context found it (by the words of its detail, as claims.py and outranked.py write
    them)."""
    if problem != "wrong_context":
        return problem
    if "column of" in detail:
        return "wrong_column"
    if "which is about something else" in detail:
        return "rival_words"
    if "which is not about what the customer asked" in detail:
        return "off_topic"
    return "outranked"


def rules(findings: Sequence[Any]) -> list[str]:
    return sorted({rule_of(f.problem, f.detail) for f in findings})


def replay_rows(centre: Any, runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each saved model reply of `centre` with its verdict (right / wrong / other) and the rules refusing it,
    with and without the named-words rule."""
    from bench.knowledge.harness import load_help_centre as load_into_db
    from bench.knowledge.replay import verdict
    from bench.knowledge.trust import wrong_value
    from captain.assistants.models import Assistant
    from captain.knowledge.services.knowledge_search import AssistantKnowledge
    from captain.knowledge.services.retrieval import get_encoder
    from captain.runtime.knowledge import Evidence
    from captain.runtime.knowledge.claims import turn_check
    from captain.runtime.knowledge.evidence import evidence_ranking, select_evidence
    from captain.runtime.knowledge.tokens import has_cjk

    encoder = get_encoder()
    loaded = load_into_db(centre)
    corpus = Evidence.of(loaded.corpus_texts)
    assistant = Assistant.objects.get(pk=loaded.assistant_id)
    base = AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id)
    rows = []
    for question in centre.questions:
        context = next((m["content"] for m in reversed(question.previous) if m.get("role") == "user"), "")
        found = None
        for model, answers in runs.items():
            saved = answers.get(question.id)
            if not saved or saved["outcome"] != "reply" or saved["seconds"] < FAQ_AS_WRITTEN_SECONDS:
                continue
            found = found or base.retrieve(question.question, context=context, limit=4)
            ranked = select_evidence(
                found.sources, query=question.question, context=context, encode=encoder.encode, limit=None
            )
            check = turn_check(
                conversation=[question.question, *(m["content"] for m in question.previous)],
                instructions=[],
                sources=[(s.title, s.text) for s in found.sources],
                question=f"{context}\n{question.question}".strip(),
                language="zh" if has_cjk(question.question) else "en",
                encode=encoder.encode,
                sentence_support=0.3,
                answer=ranked[0].unit if ranked else None,
                asked=question.question,
                known=[w for w, n in found.term_passages.items() if n],
                term_passages=found.term_passages,
                passages=found.passages,
                ranking=evidence_ranking(ranked),
            )
            reply = saved["reply"]
            findings = check.findings(reply)
            named = sorted(check.named)
            check.named = frozenset()
            plain = check.findings(reply)
            off_topic = sum(rule_of(f.problem, f.detail) == "off_topic" for f in findings)
            off_topic_plain = sum(rule_of(f.problem, f.detail) == "off_topic" for f in plain)
            answer = SimpleNamespace(outcome="reply", question=question, reply=reply)
            scored = verdict(question, reply)
            rows.append(
                {
                    "model": model,
                    "id": question.id,
                    "verdict": "wrong" if wrong_value(answer, corpus) else scored,  # type: ignore[arg-type]
                    "rules": rules(findings),
                    "without_named": rules(plain),
                    # The named-words rule found a value off topic that the words and the encoder alone did not.
                    "named_fired": off_topic > off_topic_plain,
                    "named": named,
                    "reply": reply,
                }
            )
    return rows


def by_rule(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per rule: right and wrong replies it refuses, and those it alone refuses."""
    out: dict[str, Counter[str]] = {}
    for row in rows:
        kind = row["verdict"] if row["verdict"] in ("right", "wrong") else "other"
        labels = list(row["rules"])
        if row["named_fired"]:
            labels.append("named_words")
        for label in labels:
            out.setdefault(label, Counter())[kind] += 1
            # "only": no other rule refuses it (for the named words: refused with them, passed without them).
            alone = not row["without_named"] if label == "named_words" else len(row["rules"]) == 1
            out[label][f"{kind} only"] += alone
    total: Counter[str] = Counter()
    for row in rows:
        kind = row["verdict"] if row["verdict"] in ("right", "wrong") else "other"
        total[f"{kind} replies"] += 1
        total[f"{kind} refused"] += bool(row["rules"])
    return {"ALL": dict(total), **{k: dict(v) for k, v in sorted(out.items())}}


def main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.replay_knowledge --by-rule")
    parser.add_argument("--by-rule", action="store_true", required=True)
    parser.add_argument("--json", required=True, help="A saved run: python -m bench.knowledge --json F.")
    parser.add_argument("--sets", default="", help="Comma-separated sets (default: every set in the run).")
    parser.add_argument(
        "--list", action="store_true", help="Also print every refused reply (tuning sets only)."
    )
    parser.add_argument(
        "--rows", default="", help="Write each reply's id, verdict and rules to this JSON file."
    )
    args = parser.parse_args(argv)

    from bench.knowledge.dataset import load_help_centre
    from bench.knowledge.harness import isolated_database, product_settings
    from bench.knowledge.replay import DATA
    from tests.support.servers import start_redis

    report = json.loads(Path(args.json).read_text(encoding="utf-8"))
    names = sorted({name for run in report["runs"].values() for name in run["sets"]})
    wanted = [n for n in args.sets.split(",") if n] or names
    kept: list[dict[str, Any]] = []
    redis = start_redis()
    try:
        for name in wanted:
            runs = {
                model: {a["id"]: a for a in run["sets"][name]["answers"]["inject+check"]}
                for model, run in report["runs"].items()
                if name in run["sets"]
            }
            with isolated_database(), product_settings(base_url="", model="", redis_url=redis.url, timeout=1):
                rows = replay_rows(load_help_centre(DATA / name), runs)
            for model in runs:
                mine = [r for r in rows if r["model"] == model]
                print(f"{name} {model}: {json.dumps(by_rule(mine))}")
                for row in mine if args.list else ():
                    if row["rules"]:
                        print(
                            f"  {row['id']} {row['verdict']}: {row['rules']} {row['named']} {row['reply'][:100]!r}"
                        )
            kept += [
                {k: v for k, v in r.items() if k not in ("reply", "named")} | {"set": name} for r in rows
            ]
    finally:
        redis.stop()
    if args.rows:
        Path(args.rows).write_text(json.dumps(kept, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    setup_django()
    if "--by-rule" in sys.argv[1:]:
        raise SystemExit(main(sys.argv[1:]))
    from bench.knowledge.replay import main as replay_main

    raise SystemExit(replay_main())
