"""What one AI reply run costs a worker: CPU milliseconds and SQL queries of `run_for_message`, in one process.

    python -m bench.reply_run_cost [--runs 200] [--warmup 20] [--scenarios 3] [--database-url URL] [--json PATH]

Real parts: production settings (DEBUG off, a bench-only key), a migrated database (SQLite in a temporary
directory unless `--database-url`), a redis-server for the conversation lock, and the scripted
OpenAI-compatible model on 127.0.0.1 answering every call at once with a short text. One assistant (an API
inbox, `--scenarios` specialists); each run answers the first customer message of a new conversation, exactly
what the `reply_generate` task calls. Creating the conversation and its message is outside the timing.
`--profile PATH` writes cProfile stats of the timed runs (the CPU figures then include the profiler's cost).

Reported per run, after `--warmup` runs (imports, per-process caches):
- `cpu_ms`: CPU time of the thread that ran it (`time.thread_time`), so the scripted model's own handling of the
  request, served from another thread, is not counted; `process_cpu_ms` counts every thread, for scale;
- `wall_ms`: elapsed time (the model answers at once, so this is the run's own overhead plus one HTTP call);
- `queries`: the SQL statements the run sent (counted on separate runs, as counting itself costs CPU).
Spans are not stored (CAPTAIN_STORE_SPANS=0, as in the other worker benchmarks) unless `--store-spans`: production
stores them by default, one INSERT per span.

Measured 2026-11-29 on the 2-core machine (load ~3.5 from other work), 300 runs, 3 scenarios, SQLite, the code
before this session's changes (the per-process configuration cache, the credit reads, the SDK transform skipped,
the instructions read once) and after, alternating, twice:
    before: cpu_ms p50 22.4 / 20.7   queries 63
    after:  cpu_ms p50 15.4 / 14.8   queries 42
and on PostgreSQL 15 (a throwaway server on loopback, `--database-url`): 24.1 -> 16.2 ms, 63 -> 42 queries.
With `--store-spans` (production's default) the run sends 54 statements (its 4 spans, each exported on its own
with its transaction) for about the same CPU.
(`wall_ms` sits ~40 ms above the CPU time in both: the scripted server answers in two TCP segments without
TCP_NODELAY, and the client's delayed ACK holds the second for 40 ms; a server with TCP_NODELAY answers in
0.6 ms. Not the run's time.)
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.live_common import worker_bench_django


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _team(scenarios: int) -> Any:
    from tests.factories import AssistantInboxFactory, ScenarioFactory

    link = AssistantInboxFactory()
    for n in range(scenarios):
        ScenarioFactory(
            assistant=link.assistant,
            title=f"Topic {n}",
            key=f"topic_{n}",
            description=f"Questions about topic {n}",
            tools=["faq_lookup"],
        )
    return link


def _one_run(link: Any, n: int, *, count_queries: bool) -> dict[str, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from captain.answering.models import ReplyJob
    from captain.answering.services.runs import run_for_message
    from tests.factories import ConversationFactory, MessageFactory

    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(
        conversation=conversation, content=f"Where is my order {n}?", reply_job=ReplyJob.Status.PENDING
    )
    if count_queries:
        with CaptureQueriesContext(connection) as queries:
            outcome = run_for_message(message_id=message.id)
        if outcome != "reply":
            raise SystemExit(f"run {n} ended in {outcome!r}, not a reply")
        return {"queries": float(len(queries.captured_queries))}
    wall, thread_cpu, process_cpu = time.perf_counter(), time.thread_time(), time.process_time()
    outcome = run_for_message(message_id=message.id)
    result = {
        "cpu_ms": (time.thread_time() - thread_cpu) * 1000,
        "process_cpu_ms": (time.process_time() - process_cpu) * 1000,
        "wall_ms": (time.perf_counter() - wall) * 1000,
    }
    if outcome != "reply":
        raise SystemExit(f"run {n} ended in {outcome!r}, not a reply")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--scenarios", type=int, default=3)
    parser.add_argument("--query-runs", type=int, default=20, help="runs whose queries are counted")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--store-spans", action="store_true", help="store the run's spans in the database, as production does"
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help="write cProfile stats of the timed runs here"
    )
    args = parser.parse_args()

    from tests.support.fake_llm_server import FakeLLMServer, text

    model = FakeLLMServer(responder=lambda request: text("Your order is on its way.")).start()
    os.environ.update(
        {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "bench",
            "CAPTAIN_DEBOUNCE_SECONDS": "0",
            "CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT": "0",
        }
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-reply-cost-"))
    redis_server = worker_bench_django(workdir, database_url=args.database_url, store_spans=args.store_spans)
    try:
        link = _team(args.scenarios)
        for n in range(args.warmup):
            _one_run(link, n, count_queries=False)
        # CPU time, not elapsed: waiting on the model is not work.
        profiler = cProfile.Profile(time.thread_time) if args.profile is not None else None
        if profiler is not None:
            profiler.enable()
        timed = [_one_run(link, n, count_queries=False) for n in range(args.runs)]
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(args.profile))
        counted = [_one_run(link, n, count_queries=True)["queries"] for n in range(args.query_runs)]
    finally:
        redis_server.stop()
        model.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    report: dict[str, Any] = {"runs": args.runs, "scenarios": args.scenarios}
    for key in ("cpu_ms", "process_cpu_ms", "wall_ms"):
        values = [t[key] for t in timed]
        report[key] = {
            "p50": round(statistics.median(values), 2),
            "p90": round(percentile(values, 0.9), 2),
            "mean": round(statistics.fmean(values), 2),
        }
    report["queries"] = {"min": min(counted), "max": max(counted)}
    print(f"reply runs: {args.runs} (after {args.warmup} warm-up), assistant with {args.scenarios} scenarios")
    for key in ("cpu_ms", "process_cpu_ms", "wall_ms"):
        figures = report[key]
        print(
            f"  {key:15s} p50 {figures['p50']:8.2f}  p90 {figures['p90']:8.2f}  mean {figures['mean']:8.2f}"
        )
    print(f"  queries per run  {int(min(counted))}..{int(max(counted))}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
