"""Replay a knowledge benchmark run's saved replies through today's grounding check, without a model.

A change to the check (a new finding, a threshold) is measured here in seconds instead of half an hour of model
time: the replies the models wrote in a saved run (`python -m bench.knowledge --json F`) are checked again with
today's retrieval, evidence and check, and counted by what the benchmark scored them: right answers refused cost
coverage, wrong ones refused are wrong replies avoided. Replies sent as an approved FAQ answer (no model call) are
left out: the check never reads them.

    python -m bench.replay_knowledge --json run.json [--sets main,harbour] [--list]

It approximates the product's check: the agents' instructions are not in the saved run, so they are left out (a
value only the instructions hold is refused here and not in the product). Read a held-out set's replies only
after tuning, as the benchmark's own figures.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.knowledge.dataset import ANSWERABLE, HelpCentre, Question, load_help_centre
from bench.knowledge.harness import isolated_database, product_settings
from bench.knowledge.harness import load_help_centre as load_into_db
from bench.knowledge.scoring import declines, facts_present
from captain.assistants.models import Assistant
from captain.knowledge.services.knowledge_search import AssistantKnowledge
from captain.knowledge.services.retrieval import get_encoder
from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.evidence import evidence_ranking, select_evidence
from captain.runtime.knowledge.tokens import has_cjk

DATA = Path(__file__).resolve().parent / "data"
HELP = "A saved knowledge benchmark run's replies through today's grounding check, without a model."
FAQ_AS_WRITTEN_SECONDS = 0.5
"""A saved reply faster than this was an approved FAQ answer sent as written (no model call)."""


def verdict(question: Question, reply: str) -> str:
    """What the benchmark scored a reply: right, declined, not right (answerable) or the question's kind."""
    if question.kind in ANSWERABLE and facts_present(reply, question):
        return "right"
    if declines(reply):
        return "declined"
    return "not right" if question.kind in ANSWERABLE else question.kind


def replay_set(centre: HelpCentre, runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each saved model reply of `centre` (per model) with its verdict and today's findings."""
    encoder = get_encoder()
    loaded = load_into_db(centre)
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
            evidence = ranked[:6]
            check = turn_check(
                conversation=[question.question, *(m["content"] for m in question.previous)],
                instructions=[],
                sources=[(s.title, s.text) for s in found.sources],
                question=f"{context}\n{question.question}".strip(),
                language="zh" if has_cjk(question.question) else "en",
                encode=encoder.encode,
                sentence_support=0.3,
                answer=evidence[0].unit if evidence else None,
                asked=question.question,
                known=[w for w, n in found.term_passages.items() if n],
                term_passages=found.term_passages,
                passages=found.passages,
                ranking=evidence_ranking(ranked),
            )
            findings = check.findings(saved["reply"])
            rows.append(
                {
                    "model": model,
                    "id": question.id,
                    "verdict": verdict(question, saved["reply"]),
                    "refused": [f.problem for f in findings],
                    "reply": saved["reply"],
                }
            )
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per verdict: refused / replies."""
    replies = Counter(r["verdict"] for r in rows)
    refused = Counter(r["verdict"] for r in rows if r["refused"])
    return {v: f"{refused[v]}/{n}" for v, n in sorted(replies.items())}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_knowledge", description=HELP)
    parser.add_argument("--json", required=True, help="A saved run: python -m bench.knowledge --json F.")
    parser.add_argument("--sets", default="", help="Comma-separated sets (default: every set in the run).")
    parser.add_argument("--list", action="store_true", help="Also print every refused reply.")
    args = parser.parse_args(argv)
    report = json.loads(Path(args.json).read_text(encoding="utf-8"))
    names = sorted({name for run in report["runs"].values() for name in run["sets"]})
    wanted = [n for n in args.sets.split(",") if n] or names
    from tests.support.servers import start_redis

    redis = start_redis()
    try:
        for name in wanted:
            runs = {
                model: {a["id"]: a for a in run["sets"][name]["answers"]["inject+check"]}
                for model, run in report["runs"].items()
                if name in run["sets"]
            }
            with isolated_database(), product_settings(base_url="", model="", redis_url=redis.url, timeout=1):
                rows = replay_set(load_help_centre(DATA / name), runs)
            for model in runs:
                mine = [r for r in rows if r["model"] == model]
                print(f"{name} {model}: refused/replies by verdict {json.dumps(summary(mine))}")
                for row in mine if args.list else ():
                    if row["refused"]:
                        print(f"  {row['id']} {row['verdict']}: {row['refused']} {row['reply'][:100]!r}")
    finally:
        redis.stop()
    return 0
