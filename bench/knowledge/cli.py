"""Knowledge benchmark: replay help centres' customer questions through the real run path and print, per set
and model side by side, the figures a team decides on: wrong replies (a wrong or invented value) of all
questions, correct answers on answerable questions (document-only, English and Chinese apart), "I don't know"
or a person on unanswerable questions, latency p50/p95 and prompt tokens; and, per strategy (tool, inject,
inject+check), the older detail table. `main` is the tuning set; every other set was written before tuning and is
held out (marked `*`).

    python -m bench.knowledge                     # all sets, the product's strategy, bundled 0.5B and 1.5B
    python -m bench.knowledge --models 0.5b       # the bundled 0.5B model only
    python -m bench.knowledge --retrieval         # retrieval and gate only, no model (seconds)
    python -m bench.knowledge --scale 10000       # retrieval latency and memory at 10,000 chunks

Without --base-url it starts the bundled local model itself and stops it at the end. Everything runs in a
throw-away test database with a private Redis. Run it on an otherwise idle machine.
Django must be set up before this module is imported (`python -m bench.knowledge` does it: bench/cli.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.cli import BenchError, BenchModel, run_main, write
from bench.knowledge.attempts import overridden, parse_overrides, recorded
from bench.knowledge.dataset import HelpCentre, load_help_centre
from bench.knowledge.figures import format_table, retrieval_figures, strategy_figures
from bench.knowledge.harness import (
    STRATEGIES,
    ask,
    isolated_database,
    product_settings,
    retrieval_only,
    set_strategy,
)
from bench.knowledge.harness import load_help_centre as load_into_db
from bench.knowledge.scale import scale_figures
from bench.knowledge.trust import side_by_side, trust_figures
from captain.runtime.knowledge import Evidence

DATA = Path(__file__).resolve().parent / "data"
TUNING_SET = "main"
PRODUCT_STRATEGY = "inject+check"
"""What the product does: sources in the prompt, the gate, the grounding check."""
"""The only set thresholds and prompts were tuned on; every other set was written before tuning and is held out."""

HELP = "Benchmark answering from knowledge (tool, inject, inject+check) on a help centre, main and held-out."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge", description=HELP)
    parser.add_argument(
        "--sets",
        default="main,heldout,ebike,harbour,vetclinic,cowork,furniture",
        help="Comma-separated set directories under data/.",
    )
    parser.add_argument(
        "--strategies", default=PRODUCT_STRATEGY, help=f"Of: {', '.join(STRATEGIES)} (the last is compared)."
    )
    parser.add_argument(
        "--models",
        default="0.5b,1.5b",
        help="Bundled models to run one after the other (0.5b, 1.5b); ignored with --base-url.",
    )
    parser.add_argument(
        "--base-url", default="", help="OpenAI-compatible endpoint; empty: the bundled model."
    )
    parser.add_argument("--model", default="", help="Model name (default: the bundled model's alias).")
    parser.add_argument(
        "--retrieval", action="store_true", help="Retrieval and gate figures only (no model)."
    )
    parser.add_argument("--scale", type=int, default=0, help="Also measure retrieval with N chunks.")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N questions of each set.")
    parser.add_argument("--only", default="", help="Comma-separated question ids.")
    parser.add_argument("--threads", type=int, default=0, help="Threads of the bundled model (0: default).")
    parser.add_argument("--timeout", type=float, default=180.0, help="Seconds per model call.")
    parser.add_argument("--json", dest="json_path", default="", help="Also write figures and answers here.")
    parser.add_argument("--quiet", action="store_true", help="No per-question progress.")
    parser.add_argument(
        "--knowledge",
        default="",
        help="KnowledgeSettings changed for the run: name=value,... (e.g. refusal_retry=0).",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(build_parser(), handle, argv)


def handle(opts: dict[str, Any]) -> None:
    logging.getLogger("captain").setLevel(logging.ERROR)
    centres = []
    for name in [s for s in opts["sets"].split(",") if s]:
        path = DATA / name
        if not path.exists():
            raise BenchError(f"set not found: {path}")
        centres.append(load_help_centre(path))
    strategies = [s for s in opts["strategies"].split(",") if s]
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise BenchError(f"unknown strategies: {', '.join(unknown)}")
    report: dict[str, Any] = {"runs": {}}
    columns: dict[str, dict[str, Any]] = {}
    models = [m for m in opts["models"].split(",") if m] if not opts["base_url"] else [opts["model"]]
    from tests.support.servers import start_redis

    # One Redis for every model: Django's and Celery's clients keep their connections for the process.
    redis = start_redis()
    try:
        for local_model in models:
            run_opts = {**opts, "local_model": "" if opts["base_url"] else local_model}
            run = _one_model(centres, strategies, run_opts, redis.url)
            report["runs"][run["model"]] = run
    finally:
        redis.stop()
    for local_model, run in zip(models, report["runs"].values(), strict=False):
        for name, figures in run["sets"].items():
            if "trust" in figures:
                held = "" if name == TUNING_SET else "*"
                columns[f"{name}{held} / {local_model}"] = figures["trust"]
    if columns:
        write("\n== side by side (* = held out, written before tuning; main = tuning set)")
        write(side_by_side(columns))
        for name, figures in columns.items():
            write(f"{name}: wrong replies {', '.join(figures['wrong_ids']) or 'none'}")
    if opts["json_path"]:
        Path(opts["json_path"]).write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str))
        write(f"wrote {opts['json_path']}")


def _one_model(
    centres: list[HelpCentre], strategies: list[str], opts: dict[str, Any], redis_url: str
) -> dict[str, Any]:
    run: dict[str, Any] = {"sets": {}}
    needs_model = not opts["retrieval"]
    from captain.knowledge.services.knowledge_search import knowledge_cache_clear

    knowledge_cache_clear()  # a fresh database reuses ids: nothing loaded for the previous model may answer
    with BenchModel(opts, needs_model) as (base_url, model):
        run["model"] = model
        write(f"\n#### model {model}")
        with (
            isolated_database(),
            product_settings(base_url=base_url, model=model, redis_url=redis_url, timeout=opts["timeout"]),
        ):
            for centre in centres:
                run["sets"][centre.name] = _one_set(centre, strategies, opts)
    return run


def _one_set(centre: HelpCentre, strategies: list[str], opts: dict[str, Any]) -> dict[str, Any]:
    questions = centre.questions
    if opts["only"]:
        wanted = set(opts["only"].split(","))
        questions = [q for q in questions if q.id in wanted]
    if opts["limit"]:
        questions = questions[: opts["limit"]]
    loaded = load_into_db(centre)
    corpus = Evidence.of(loaded.corpus_texts)
    out: dict[str, Any] = {"questions": len(questions), "load_seconds": round(loaded.load_seconds, 1)}
    write(
        f"\n== set {centre.name}: {len(centre.documents)} documents, {len(centre.faq)} FAQ pairs, "
        f"{len(questions)} questions (loaded in {loaded.load_seconds:.1f}s)"
    )
    rows = retrieval_only(loaded, questions)
    out["retrieval"] = retrieval_figures(rows)
    out["retrieval_rows"] = rows
    write("retrieval: " + json.dumps(out["retrieval"], ensure_ascii=False))
    if opts["scale"]:
        out["scale"] = scale_figures(centre, loaded.corpus_texts, chunks=opts["scale"])
        write("scale: " + json.dumps(out["scale"]))
    if opts["retrieval"]:
        return out
    results: dict[str, dict[str, Any]] = {}
    last_answers: list[Any] = []
    answers_out: dict[str, list[dict[str, Any]]] = {}
    for strategy in strategies:
        config = set_strategy(loaded, strategy)
        answers = []
        started = time.monotonic()
        captain = {**settings.CAPTAIN, "KNOWLEDGE_GROUNDING_CHECK": config["grounding_check"]}
        from django.test.utils import override_settings

        with override_settings(CAPTAIN=captain), recorded(), overridden(parse_overrides(opts["knowledge"])):
            for n, question in enumerate(questions, start=1):
                answer = ask(loaded, question, strategy=strategy, serial=n)
                answers.append(answer)
                if not opts["quiet"]:
                    write(
                        f"  [{strategy}] {question.id} {question.kind:12} {answer.outcome:13} "
                        f"{answer.seconds:5.1f}s {answer.reply[:90]!r}"
                    )
        results[strategy] = strategy_figures(answers, corpus)
        last_answers = answers
        results[strategy]["seconds"] = round(time.monotonic() - started)
        answers_out[strategy] = [
            {
                "id": a.question.id,
                "outcome": a.outcome,
                "reply": a.reply,
                "seconds": round(a.seconds, 2),
                "sources": a.sources,
                "credit": a.credit_used,
                "detail": a.detail,
                "attempts": a.attempts,
            }
            for a in answers
        ]
    write(f"\n-- {centre.name} ({'tuning set' if centre.name == TUNING_SET else 'held-out'})")
    write(format_table(results))
    out["strategies"] = results
    out["answers"] = answers_out
    out["trust"] = trust_figures(last_answers, corpus)
    return out
