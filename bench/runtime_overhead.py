"""Runtime overhead per agent turn: our `Runner` next to the OpenAI Agents SDK's `Runner`, in one process.

    python -m bench.runtime_overhead [--runs 2000] [--warmup 200] [--json PATH]

Both runtimes play the same scripted conversation against a zero-latency in-process model, so every measured
microsecond is the runtime's own work (building requests, dispatching tool calls, validating arguments,
switching agents, bookkeeping); model time is excluded by construction. One run is three agent turns (three
model calls):

    1. triage calls the `faq_lookup` tool            (arguments validated, tool runs, result fed back)
    2. triage calls `handoff_to_billing`             (control passes to the billing agent)
    3. billing answers with text                     (final output)

Fairness, stated:
- Same team on both sides: triage owns `faq_lookup` and a handoff to billing; billing owns a handoff back.
- Same scripted answers, built once before timing on both sides (ours: `ModelResponse`; theirs: Responses-API
  output items), returned with no I/O and no sleep.
- Argument validation on both sides: ours checks the JSON schema with `jsonschema`; theirs is the idiomatic
  `@function_tool`, whose pydantic model validates the arguments.
- Telemetry off on both sides: the Agents SDK with `set_tracing_disabled(True)`; ours with the
  OpenTelemetry API's default no-op tracer (no SDK provider installed), i.e. what each costs when nothing is
  exported. A third figure shows ours with a real OTel SDK `TracerProvider` recording every span (exported
  nowhere), for scale.
- Theirs is async: all its runs share one already-running event loop (`await Runner.run(...)`), so the figure
  does not include starting a loop per run (`Runner.run_sync` would). Ours is called synchronously in the same
  loop iteration. Runs alternate ours/theirs (order flipped each iteration) so drift affects both alike.
- Their handoff is the SDK's default (no input schema); ours offers an optional `reason` string. Their
  per-response guardrail/session machinery is left at its defaults (none configured).

Reported: median, p90 of microseconds per agent turn (run time / 3), the ratio ours/theirs of the medians
(goal <= 1.0), and the resident memory (VmRSS) of this process right before and after 1,000 of our runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

TURNS_PER_RUN = 3
USER_MESSAGE = "Hello, I want a refund for order 1234."
FINAL_TEXT = "Refunds take 5 business days."


# ---- ours --------------------------------------------------------------------------------------------------


def build_ours(*, tracer_provider: Any = None) -> tuple[Any, dict[str, Any]]:
    from captain.runtime import Agent, Handoff, ModelResponse, Runner, Tool, ToolCall, Usage

    responses = [
        ModelResponse(
            content=None,
            tool_calls=[ToolCall("call_1", "faq_lookup", '{"query": "refund"}')],
            usage=Usage(1, 10, 5),
            model="scripted",
        ),
        ModelResponse(
            content=None,
            tool_calls=[ToolCall("call_2", "handoff_to_billing", "{}")],
            usage=Usage(1, 10, 5),
            model="scripted",
        ),
        ModelResponse(content=FINAL_TEXT, tool_calls=[], usage=Usage(1, 10, 5), model="scripted"),
    ]

    class ScriptedModel:
        def __init__(self) -> None:
            self.calls = 0

        def complete(self, *, model, messages, tools=(), settings=None):
            response = responses[self.calls % TURNS_PER_RUN]
            self.calls += 1
            return response

    def faq_lookup(ctx: Any, args: dict[str, Any]) -> str:
        return f"FAQ: {args['query']} takes 5 business days."

    faq = Tool(
        "faq_lookup",
        "Search the FAQ.",
        {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
        faq_lookup,
    )
    team = {
        "triage": Agent(
            key="triage",
            name="Triage",
            instructions="You are triage.",
            model="scripted",
            tools=[faq],
            handoffs=[Handoff("billing", "Billing questions.")],
        ),
        "billing": Agent(
            key="billing",
            name="Billing",
            instructions="You are billing.",
            model="scripted",
            handoffs=[Handoff("triage", "Anything that is not billing.")],
        ),
    }
    model = ScriptedModel()
    return Runner(model, tracer_provider=tracer_provider), {"team": team, "model": model}


def run_ours(runner: Any, setup: dict[str, Any]) -> None:
    from captain.runtime import RunContext

    result = runner.run(
        agents=setup["team"],
        start_key="triage",
        messages=[{"role": "user", "content": USER_MESSAGE}],
        context=RunContext(account_id=1, conversation_id=1),
    )
    if result.outcome.kind != "reply" or result.route != ["triage", "billing"]:
        raise AssertionError(f"our run went wrong: {result}")


# ---- theirs (OpenAI Agents SDK) ----------------------------------------------------------------------------


def build_theirs() -> tuple[Any, Any]:
    from agents import Agent, function_tool, handoff, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    set_tracing_disabled(True)

    outputs = [
        [
            ResponseFunctionToolCall(
                type="function_call",
                id="fc_1",
                call_id="call_1",
                name="faq_lookup",
                arguments='{"query": "refund"}',
                status="completed",
            )
        ],
        [
            ResponseFunctionToolCall(
                type="function_call",
                id="fc_2",
                call_id="call_2",
                name="handoff_to_billing",
                arguments="{}",
                status="completed",
            )
        ],
        [
            ResponseOutputMessage(
                id="msg_1",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=FINAL_TEXT, annotations=[])],
            )
        ],
    ]

    class ScriptedModel(Model):
        """Zero-latency scripted `agents.models.interface.Model`."""

        def __init__(self) -> None:
            self.calls = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            output = outputs[self.calls % TURNS_PER_RUN]
            self.calls += 1
            usage = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)
            return ModelResponse(output=list(output), usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def faq_lookup(query: str) -> str:
        """Search the FAQ."""
        return f"FAQ: {query} takes 5 business days."

    model = ScriptedModel()
    billing = Agent(name="Billing", instructions="You are billing.", model=model)
    triage = Agent(
        name="Triage",
        instructions="You are triage.",
        model=model,
        tools=[faq_lookup],
        handoffs=[handoff(billing, tool_name_override="handoff_to_billing")],
    )
    billing.handoffs = [handoff(triage, tool_name_override="handoff_to_triage")]
    return triage, billing


async def run_theirs(triage: Any, billing: Any) -> None:
    from agents import Runner

    result = await Runner.run(triage, [{"role": "user", "content": USER_MESSAGE}], max_turns=8)
    if result.final_output != FINAL_TEXT or result.last_agent is not billing:
        raise AssertionError(f"their run went wrong: {result}")


# ---- measurement -------------------------------------------------------------------------------------------


def vm_rss_kib() -> int:
    """Resident memory of this process, from /proc/self/status (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def per_turn_us(samples_ns: list[int]) -> dict[str, float]:
    per_turn = sorted(ns / TURNS_PER_RUN / 1000 for ns in samples_ns)
    return {
        "median_us": statistics.median(per_turn),
        "p90_us": per_turn[int(len(per_turn) * 0.9)],
        "min_us": per_turn[0],
    }


async def measure(runs: int, warmup: int, memory_runs: int) -> dict[str, Any]:
    from opentelemetry.sdk.trace import TracerProvider

    ours, ours_setup = build_ours()
    # Recording spans, exported nowhere: the cost of span creation and attributes alone.
    traced, traced_setup = build_ours(tracer_provider=TracerProvider())
    triage, billing = build_theirs()

    for _ in range(warmup):
        run_ours(ours, ours_setup)
        run_ours(traced, traced_setup)
        await run_theirs(triage, billing)

    gc.collect()
    rss_before = vm_rss_kib()
    for _ in range(memory_runs):
        run_ours(ours, ours_setup)
    rss_after = vm_rss_kib()

    ours_ns: list[int] = []
    traced_ns: list[int] = []
    theirs_ns: list[int] = []
    clock = time.perf_counter_ns
    for i in range(runs):
        # Flip the order every iteration so neither side always runs right after the other's garbage.
        for side in ("ours", "theirs", "traced") if i % 2 == 0 else ("theirs", "ours", "traced"):
            start = clock()
            if side == "ours":
                run_ours(ours, ours_setup)
                ours_ns.append(clock() - start)
            elif side == "traced":
                run_ours(traced, traced_setup)
                traced_ns.append(clock() - start)
            else:
                await run_theirs(triage, billing)
                theirs_ns.append(clock() - start)

    # Both sides must have played exactly the scripted three turns per run, or the comparison means nothing.
    if ours_setup["model"].calls != (warmup + memory_runs + runs) * TURNS_PER_RUN:
        raise AssertionError("our scripted model was not called three times per run")
    if triage.model.calls != (warmup + runs) * TURNS_PER_RUN:
        raise AssertionError("their scripted model was not called three times per run")

    ours_stats = per_turn_us(ours_ns)
    theirs_stats = per_turn_us(theirs_ns)
    return {
        "runs": runs,
        "warmup_runs": warmup,
        "turns_per_run": TURNS_PER_RUN,
        "python": sys.version.split()[0],
        "ours_noop_tracer": ours_stats,
        "ours_recording_spans": per_turn_us(traced_ns),
        "openai_agents_tracing_disabled": theirs_stats,
        "ratio_ours_over_theirs": ours_stats["median_us"] / theirs_stats["median_us"],
        "rss_kib_before_memory_runs": rss_before,
        "rss_kib_after_memory_runs": rss_after,
        "memory_runs": memory_runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="timed runs per side (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed runs per side first (default 200)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    from importlib.metadata import version

    figures = asyncio.run(measure(args.runs, args.warmup, memory_runs=1000))
    figures["openai_agents_version"] = version("openai-agents")

    ours, traced = figures["ours_noop_tracer"], figures["ours_recording_spans"]
    theirs = figures["openai_agents_tracing_disabled"]
    theirs_label = f"agents.Runner {figures['openai_agents_version']}, tracing disabled"
    rss_before = figures["rss_kib_before_memory_runs"] / 1024
    rss_after = figures["rss_kib_after_memory_runs"] / 1024
    print(f"Runtime overhead per agent turn, model time excluded ({args.runs} runs x {TURNS_PER_RUN} turns)")
    for label, stats in (
        ("ours    captain.runtime.Runner, no-op OTel tracer", ours),
        (f"theirs  {theirs_label}", theirs),
    ):
        print(f"  {label:<52} median {stats['median_us']:8.1f} us   p90 {stats['p90_us']:8.1f} us")
    print(f"  ratio ours/theirs (medians): {figures['ratio_ours_over_theirs']:.3f}   (goal <= 1.0)")
    print(f"  for scale, ours with an OTel SDK provider recording all spans: {traced['median_us']:.1f} us")
    print(f"Resident memory (VmRSS) before / after {figures['memory_runs']} of our runs: ", end="")
    print(f"{rss_before:.1f} MiB / {rss_after:.1f} MiB")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
