"""The `drafted` variant: every scenario's example phrases replaced by what the product's drafting
(`captain.routing.services.example_draft_prompt`: the same prompt, response format, parsing and cross-node dedup) writes with
the benchmark's model from the scenario's title, description and instruction, as a builder who wrote none would
get them. Drafts are written once per (assistant, scenario) and cached in a JSON file next to the figures, so a
rerun measures routing on the same drafts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from captain.conf import captain_setting
from captain.routing.services.example_draft_prompt import (
    EXAMPLES_SCHEMA,
    TEMPERATURE,
    draft_request,
    example_key,
    languages_for,
    parse_examples,
)
from captain.runtime.model import ModelError, ModelSettings

from .variants import assistant_name

Ask = Callable[[str, str, ModelSettings], str | None]
"""(system, user, settings) -> the model's answer."""


def draft_dataset(
    conversations: list[dict[str, Any]], ask: Ask, cache_path: Path | None = None
) -> dict[tuple[str, str], list[str]]:
    """(assistant name, scenario key) -> drafted examples, for every scenario of the dataset."""
    cached: dict[str, list[str]] = {}
    if cache_path is not None and cache_path.exists():
        cached = json.loads(cache_path.read_text(encoding="utf-8"))
    per_language = max(1, int(captain_setting("ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE")))
    scenarios: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for conv in conversations:
        name = assistant_name(conv)
        for s in conv.get("scenarios", []):
            scenarios.setdefault(name, {})[(name, s["key"])] = s
    drafts: dict[tuple[str, str], list[str]] = {}
    for name, nodes in scenarios.items():
        taken: set[str] = set()
        for key, s in nodes.items():
            label = f"{name}\x1f{s['key']}"
            if label not in cached:
                others = [o.get("title") or o["key"] for k, o in nodes.items() if k != key]
                request = draft_request(
                    title=s.get("title") or s["key"],
                    description=s.get("description", ""),
                    instruction=s.get("instruction", ""),
                    other_titles=others,
                    languages=languages_for(s.get("title", ""), s.get("description", "")),
                    per_language=per_language,
                )
                settings = ModelSettings(
                    temperature=TEMPERATURE, max_tokens=request.max_tokens, response_format=EXAMPLES_SCHEMA
                )
                try:
                    answer = ask(request.system, request.user, settings)
                except ModelError:
                    answer = None
                cached[label] = parse_examples(answer)[: request.wanted]
            # As the product does: a phrase that is another node's example is dropped (first node keeps it).
            kept = [t for t in cached[label] if example_key(t) not in taken]
            taken.update(example_key(t) for t in kept)
            drafts[key] = kept
    if cache_path is not None:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        cache_path.write_text(json.dumps(cached, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return drafts
