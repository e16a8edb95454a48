"""Mode `tool` outside the Runner, for the benchmark: the node's own model answers with handoff tools offered,
and the first handoff it calls is the decision."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from captain.runtime import ModelClient, ModelSettings, handoff_tool_name
from captain.runtime.routing import Decision, DecisionRequest


def make_tool_decider(model: ModelClient, model_name: str) -> Callable[[DecisionRequest], Decision]:
    def decide(request: DecisionRequest) -> Decision:
        graph, node = request.graph, request.current
        candidates = request.candidates()
        tools = [
            {
                "type": "function",
                "function": {
                    "name": handoff_tool_name(k),
                    "description": graph.nodes[k].description or graph.nodes[k].title,
                    "parameters": {"type": "object", "properties": {}},
                },
            }
            for k in candidates
        ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": f"You are {node.title}. {node.description}"}
        ]
        for t in request.history[-4:]:
            messages.append({"role": t.role, "content": t.content})
        messages.append({"role": "user", "content": request.message})

        def decision(reason: str, target: str = request.node, **fields: Any) -> Decision:
            return Decision(
                request.node,
                request.phase,
                "tool",
                candidates,
                target,
                reason=reason,
                model=model_name,
                **fields,
            )

        started = time.monotonic()
        try:
            response = model.complete(
                model=model_name, messages=messages, tools=tools, settings=ModelSettings(temperature=0)
            )
        except Exception as exc:
            return decision(f"model failed: {exc}")
        asked: dict[str, Any] = {
            "llm_calls": 1,
            "latency_ms": (time.monotonic() - started) * 1000,
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
            "prompt": json.dumps(messages, ensure_ascii=False),
            "raw_output": response.content or json.dumps([c.name for c in response.tool_calls]),
        }
        for call in response.tool_calls:
            target = call.name.removeprefix("handoff_to_")
            if target in candidates:
                return decision(f"handoff tool {call.name}", target, parsed=target, **asked)
            return decision(f"unknown transfer tool {call.name}: stay", parsed=target, refused=True, **asked)
        return decision("no handoff tool called", **asked)

    return decide
