"""Recovering tool calls that a small model wrote as text.

Small local models (Qwen2.5-Coder-0.5B among them) often write a function call as JSON in their reply text, bare
or in a ```json fence or <tool_call> tags, instead of the structured `tool_calls` field. Sent to the customer, that
JSON is a leak of internals and the intended transfer never happens. We turn such text back into calls, but only
for names the agent was actually offered, so free text that merely contains JSON stays text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from .model import ToolCall

_BLOCK = re.compile(r"```(?:json|tool_call)?\s*(.*?)```|<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _candidates(text: str) -> list[str]:
    blocks = [a or b for a, b in _BLOCK.findall(text)]
    return blocks or [text]


def _objects(candidate: str) -> list[Any]:
    """JSON objects in `candidate`: one object, a list of them, or several objects one after another."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    index = 0
    candidate = candidate.strip()
    while index < len(candidate):
        start = candidate.find("{", index) if candidate[index] not in "[{" else index
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(candidate, start)
        except ValueError:
            index = start + 1
            continue
        found.extend(value if isinstance(value, list) else [value])
        index = end
    return found


def recover_text_tool_calls(text: str | None, offered: Collection[str]) -> list[ToolCall]:
    """Calls written as JSON text (`{"name": ..., "arguments": {...}}`) whose name was offered; else []."""
    if not text or "{" not in text or "name" not in text:
        return []
    calls: list[ToolCall] = []
    for candidate in _candidates(text):
        for obj in _objects(candidate):
            if not isinstance(obj, dict) or obj.get("name") not in offered:
                continue
            arguments = obj.get("arguments", obj.get("parameters", {}))
            if isinstance(arguments, str):
                raw = arguments
            else:
                raw = json.dumps(arguments if isinstance(arguments, dict) else {}, ensure_ascii=False)
            calls.append(ToolCall(id=f"text_call_{len(calls) + 1}", name=obj["name"], arguments=raw))
    return calls
