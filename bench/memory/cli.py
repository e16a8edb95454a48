"""Memory benchmark: play conversations in which the customer states a fact (an order number, a city, a plan),
talks about other things, and then asks something only that fact answers, through the real run path on one
model. Each conversation runs twice side by side: with the chat history window only, and with the
conversation's memory variables declared. Both modes use a window of HISTORY_MESSAGES=4, so the fact has left
it when the final question comes. Printed per set (main and held-out apart): right final answers, answers naming
a corrected (stale) value, the share of well-formed structured replies, and seconds per customer turn.

    python -m bench.memory                          # both sets, bundled 0.5B model
    python -m bench.memory --sets main --limit 4    # a quick look
    python -m bench.memory --base-url http://127.0.0.1:8081/v1 --model my-model

Without --base-url it starts the bundled local model itself and stops it at the end. Everything runs in a
throw-away test database with a private Redis. Run it on an otherwise idle machine.
Django must be set up before this module is imported (`python -m bench.memory` does it: bench/cli.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.cli import BenchError, BenchModel, run_main, write
from bench.knowledge.harness import isolated_database, product_settings
from bench.memory.dataset import Conversation, load_set
from bench.memory.harness import HISTORY_MESSAGES, MODES, Played, bench_account, history_window, play
from bench.memory.scoring import format_table, mode_figures, played_record, score

DATA = Path(__file__).resolve().parent / "data"
TUNING_SET = "main"
"""The only set prompts were tuned on; every other set was written before tuning and is held out."""

HELP = "Benchmark remembering a customer's facts: history window only vs declared memory variables."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=HELP)
    parser.add_argument("--sets", default="main,heldout", help="Comma-separated sets (data/<set>.jsonl).")
    parser.add_argument("--modes", default=",".join(MODES), help=f"Of: {', '.join(MODES)}.")
    parser.add_argument(
        "--base-url", default="", help="OpenAI-compatible endpoint; empty: the bundled model."
    )
    parser.add_argument("--model", default="", help="Model name (default: the bundled model's alias).")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N conversations of each set.")
    parser.add_argument("--only", default="", help="Comma-separated conversation ids.")
    parser.add_argument("--threads", type=int, default=0, help="Threads of the bundled model (0: default).")
    parser.add_argument("--timeout", type=float, default=180.0, help="Seconds per model call.")
    parser.add_argument(
        "--json", dest="json_path", default="", help="Also write figures and every turn here."
    )
    parser.add_argument("--quiet", action="store_true", help="No per-conversation progress.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(build_parser(), handle, argv)


def handle(opts: dict[str, Any]) -> None:
    logging.getLogger("captain").setLevel(logging.ERROR)
    # Eager tasks and the SDK log every task and request at INFO: hundreds of lines that bury the figures.
    for noisy in ("celery", "httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    sets: dict[str, list[Conversation]] = {}
    for name in [s.strip() for s in opts["sets"].split(",") if s.strip()]:
        path = DATA / f"{name}.jsonl"
        if not path.exists():
            raise BenchError(f"set not found: {path}")
        try:
            sets[name] = load_set(path)
        except ValueError as exc:
            raise BenchError(str(exc)) from exc
    modes = [m.strip() for m in opts["modes"].split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown or not modes:
        raise BenchError(f"unknown modes: {', '.join(unknown) or '(none given)'} (of: {', '.join(MODES)})")
    report: dict[str, Any] = {"history_messages": HISTORY_MESSAGES, "sets": {}}
    with BenchModel(opts, True) as (base_url, model):
        report["model"] = model
        from tests.support.servers import start_redis

        redis = start_redis()
        try:
            with (
                isolated_database(),
                product_settings(
                    base_url=base_url, model=model, redis_url=redis.url, timeout=opts["timeout"]
                ),
                history_window(HISTORY_MESSAGES),
            ):
                write(f"model {model} at {base_url}; HISTORY_MESSAGES={HISTORY_MESSAGES}")
                account_id = bench_account()
                for name, conversations in sets.items():
                    report["sets"][name] = _one_set(name, conversations, modes, account_id, opts)
        finally:
            redis.stop()
    if opts["json_path"]:
        Path(opts["json_path"]).write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str))
        write(f"wrote {opts['json_path']}")


def _one_set(
    name: str,
    conversations: list[Conversation],
    modes: list[str],
    account_id: int,
    opts: dict[str, Any],
) -> dict[str, Any]:
    if opts["only"]:
        wanted = {s.strip() for s in opts["only"].split(",")}
        conversations = [c for c in conversations if c.id in wanted]
    if opts["limit"]:
        conversations = conversations[: opts["limit"]]
    changed = sum(c.changed for c in conversations)
    write(
        f"\n== set {name}: {len(conversations)} conversations ({changed} with a changed fact), "
        f"{sum(len(c.turns) for c in conversations)} customer turns per mode"
    )
    played: dict[str, list[Played]] = {m: [] for m in modes}
    started = time.monotonic()
    for serial, conversation in enumerate(conversations, start=1):
        # Both modes of one conversation back to back, so a slower stretch of the machine hits both alike.
        for mode in modes:
            result = play(conversation, mode=mode, account_id=account_id, serial=serial)
            played[mode].append(result)
            if not opts["quiet"]:
                verdict = score(result.final_reply, conversation)
                mark = "RIGHT" if verdict.right else ("STALE" if verdict.stale else "wrong")
                seconds = sum(t.seconds for t in result.turns)
                write(
                    f"  [{mode:7}] {conversation.id} {mark:5} {seconds:6.1f}s "
                    f"{result.final_reply[:90]!r}"
                    + (f" remembered={result.remembered}" if mode == "memory" else "")
                )
    figures = {m: mode_figures(played[m]) for m in modes}
    label = "tuning set" if name == TUNING_SET else "held-out"
    write(
        f"\n-- {name} ({label}), n={len(conversations)}, HISTORY_MESSAGES={HISTORY_MESSAGES}, "
        f"{time.monotonic() - started:.0f}s"
    )
    write(format_table(figures))
    if any(f["structured_replies"] == "missing" for f in figures.values()):
        write("structured replies: missing (no run's spans carry a well-formed marker; see docs/memory.md)")
    return {
        "conversations": len(conversations),
        "figures": figures,
        "played": {m: [played_record(p) for p in played[m]] for m in modes},
    }
