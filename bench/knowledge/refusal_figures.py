"""How often the model declines an answerable question with its blanket refusal, from saved benchmark runs.

    python -m bench.knowledge.refusal_figures RUN.json [RUN2.json ...]

For each run (a `python -m bench.knowledge --json` file with every model attempt recorded, `attempts`), per
language: answerable questions the model answered, those whose first reply was a blanket refusal
(`captain.runtime.knowledge.refusals`, read against the evidence the step recorded), how often the evidence's
first sentence held every expected fact then (the retrieval rows' `evidence_rank`), the refusals the customer still
got, and the benchmark's own figures (right, wrong, latency, model calls) over the same questions. Read a held-out
set's figures only as totals.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.cli import setup_django

DATA = Path(__file__).resolve().parent / "data"


def _refused(text: str, evidence: Sequence[str]) -> bool:
    from captain.runtime.knowledge.refusals import blanket_refusal

    return blanket_refusal(text, evidence)


def set_figures(name: str, figures: dict[str, Any]) -> dict[str, Any]:
    from bench.knowledge.dataset import ANSWERABLE, load_help_centre

    questions = {q.id: q for q in load_help_centre(DATA / name).questions}
    rows = {r["id"]: r for r in figures.get("retrieval_rows", [])}
    out: dict[str, Any] = {}
    for answer in figures.get("answers", {}).get("inject+check", []):
        question = questions[answer["id"]]
        attempts = [a["attempt"] for a in answer.get("attempts", []) if "attempt" in a]
        steps = [a for a in answer.get("attempts", []) if "action" in a]
        evidence = [e["text"] for s in steps for e in s.get("evidence", [])]
        kind = "answerable" if question.kind in ANSWERABLE else question.kind
        row = out.setdefault(f"{kind} {question.lang}", {"questions": 0, "model": 0, "refused_first": 0})
        row["questions"] += 1
        if not attempts:
            continue
        row["model"] += 1
        if _refused(attempts[0], evidence):
            row["refused_first"] += 1
            rank = rows.get(answer["id"], {}).get("evidence_rank")
            row["evidence_first_held_it"] = row.get("evidence_first_held_it", 0) + (rank == 1)
            row["ids"] = [*row.get("ids", []), answer["id"]]
            if answer["outcome"] == "reply" and _refused(answer["reply"], evidence):
                row["refusal_sent"] = row.get("refusal_sent", 0) + 1
    return out


def main(argv: Sequence[str]) -> int:
    setup_django()
    for path in argv:
        report = json.loads(Path(path).read_text())
        for model, run in report["runs"].items():
            print(f"== {path} ({model})")
            for name, figures in run["sets"].items():
                for key, row in sorted(set_figures(name, figures).items()):
                    print(f"  {name:10} {key:16} {json.dumps(row, ensure_ascii=False)}")
                trust = figures.get("trust", {})
                keep = ("wrong_replies", "wrong_ids", "correct_answerable", "correct_en", "correct_zh")
                print(f"  {name:10} trust {json.dumps({k: trust.get(k) for k in keep}, ensure_ascii=False)}")
                more = ("unanswerable_idk_or_person", "latency_p50_s", "latency_p95_s", "model_calls_mean")
                print(f"  {name:10}       {json.dumps({k: trust.get(k) for k in more})}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
