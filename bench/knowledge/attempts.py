"""What the knowledge step did inside one benchmark question: every model attempt's reply (the first reply, the
rewrite, a re-ask), the evidence it was given and the step's action, and a way to run the benchmark with some of
the `KnowledgeSettings` changed (a before/after in one sitting without editing the product's defaults).

The benchmark's own record is the reply the customer got; a refusal the check had written again, or a first reply
the model declined, is not in it. `recorded()` wraps `KnowledgeAnswerer` for the run (the benchmark runs the reply
task in this process), and `ask` takes what was recorded for its question.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from captain.runtime.knowledge.answerer import KnowledgeAnswerer, KnowledgeSettings
from captain.runtime.types import Reply

_RECORD: list[dict[str, Any]] = []
"""The attempts of the question being asked (one benchmark question at a time, in this thread)."""


def take() -> list[dict[str, Any]]:
    """What was recorded since the last call (the attempts of one question), and start again."""
    out = list(_RECORD)
    _RECORD.clear()
    return out


@contextlib.contextmanager
def recorded() -> Iterator[None]:
    """Record each model attempt of every knowledge answer while the benchmark runs."""
    run, call = KnowledgeAnswerer._run, KnowledgeAnswerer.__call__

    def _run(self: KnowledgeAnswerer, node: str, messages: list[dict[str, Any]], agents: Any) -> Any:
        result = run(self, node, messages, agents)
        outcome = result.outcome
        _RECORD.append(
            {"attempt": outcome.text if isinstance(outcome, Reply) else f"<{type(outcome).__name__}>"}
        )
        return result

    def _call(self: KnowledgeAnswerer, node: str, messages: list[dict[str, Any]]) -> Any:
        before = len(self.steps)
        result = call(self, node, messages)
        if len(self.steps) > before:
            step = self.steps[-1]
            _RECORD.append(
                {
                    "action": step.action,
                    "unsupported": step.unsupported,
                    "evidence": [
                        {"text": e.unit.full[:300], "score": round(e.score, 3), "lang": e.unit.language}
                        for e in step.evidence[:3]
                    ],
                }
            )
        return result

    KnowledgeAnswerer._run = _run  # type: ignore[method-assign]
    KnowledgeAnswerer.__call__ = _call  # type: ignore[method-assign]
    try:
        yield
    finally:
        KnowledgeAnswerer._run = run  # type: ignore[method-assign]
        KnowledgeAnswerer.__call__ = call  # type: ignore[method-assign]


def parse_overrides(text: str) -> dict[str, Any]:
    """`name=value,name=value` of `KnowledgeSettings` fields, each value read as its field's default's type."""
    defaults = KnowledgeSettings()
    out: dict[str, Any] = {}
    for pair in [p for p in text.split(",") if p.strip()]:
        name, _, raw = pair.partition("=")
        name = name.strip()
        if name not in {f.name for f in dataclasses.fields(KnowledgeSettings)}:
            raise ValueError(f"not a knowledge setting: {name}")
        default = getattr(defaults, name)
        if isinstance(default, bool):
            out[name] = raw.strip().lower() in ("1", "true", "on", "yes")
        elif isinstance(default, int | float) and default is not None:
            out[name] = type(default)(raw)
        else:
            out[name] = raw
    return out


@contextlib.contextmanager
def overridden(overrides: dict[str, Any]) -> Iterator[None]:
    """Every turn's `KnowledgeSettings` with `overrides` applied (the host builds them per turn)."""
    if not overrides:
        yield
        return
    from captain.answering.services import team

    build = team.knowledge_settings_for

    def changed(*args: Any, **kwargs: Any) -> KnowledgeSettings:
        return dataclasses.replace(build(*args, **kwargs), **overrides)

    team.knowledge_settings_for = changed
    try:
        yield
    finally:
        team.knowledge_settings_for = build
