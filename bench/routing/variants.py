"""Dataset variants and breakdowns: the same conversations with their example phrases stripped (or replaced by
drafted ones, or extended by accepted corrections), and the graph shapes a conversation has."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

SHAPES = ("star", "chain", "global", "router")
VARIANTS = ("as-written", "stripped", "drafted", "router-mode")


def variant_conversations(
    variant: str,
    conversations: list[dict[str, Any]],
    drafts: Mapping[tuple[str, str], list[str]] | None = None,
) -> list[dict[str, Any]]:
    """`drafts`: the drafted examples (`bench.routing.drafted`) the `drafted` variant uses."""
    if variant == "as-written":
        return conversations
    if variant == "stripped":
        return with_examples(conversations, None)
    if variant == "router-mode":
        return with_mode(with_examples(conversations, None), "router")
    if variant == "drafted":
        if drafts is None:
            raise ValueError("the drafted variant needs drafts")
        return with_examples(conversations, drafts)
    raise ValueError(f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})")


def with_mode(conversations: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """A deep copy in which every node the builder left on the default mode (triage included) is decided in
    `mode`: the `router-mode` variant measures router-model nodes on every conversation, not only on the few
    graphs written with them. Rules and explicitly chosen modes stay."""
    out = copy.deepcopy(conversations)
    for conv in out:
        nodes = conv.setdefault("nodes", {})
        for key in ["triage", *(s["key"] for s in conv.get("scenarios", []))]:
            cfg = nodes.setdefault(key, {})
            cfg["mode"] = cfg.get("mode") or mode
    return out


def has_examples(conversations: list[dict[str, Any]]) -> bool:
    return any(s.get("examples") for c in conversations for s in c.get("scenarios", [])) or any(
        cfg.get("examples") for c in conversations for cfg in (c.get("nodes") or {}).values()
    )


def with_examples(
    conversations: list[dict[str, Any]], examples: Mapping[tuple[str, str], list[str]] | None
) -> list[dict[str, Any]]:
    """A deep copy whose scenarios carry `examples[(assistant name, key)]` instead of their own (none when
    missing): `None` strips every example phrase, as a builder who wrote only titles and descriptions."""
    out = copy.deepcopy(conversations)
    for conv in out:
        name = assistant_name(conv)
        for s in conv.get("scenarios", []):
            s["examples"] = list((examples or {}).get((name, s["key"]), []))
        for cfg in (conv.get("nodes") or {}).values():
            cfg.pop("examples", None)
    return out


def add_examples(
    conversations: list[dict[str, Any]], extra: Mapping[tuple[str, str], list[str]]
) -> list[dict[str, Any]]:
    """A deep copy with `extra[(assistant name, key)]` appended to each node's examples (accepted corrections
    are used next to what the node has). Triage (`triage`) gets its own through the node settings."""
    out = copy.deepcopy(conversations)
    for conv in out:
        name = assistant_name(conv)
        for s in conv.get("scenarios", []):
            s["examples"] = [*s.get("examples", []), *extra.get((name, s["key"]), [])]
        triage = extra.get((name, "triage"))
        if triage:
            nodes = conv.setdefault("nodes", {})
            cfg = nodes.setdefault("triage", {})
            cfg["examples"] = [*cfg.get("examples", []), *triage]
    return out


def assistant_name(conv: dict[str, Any]) -> str:
    return (conv.get("assistant") or {}).get("name") or conv.get("id", "")


def shapes_of(conv: dict[str, Any]) -> set[str]:
    """Which graph shapes a conversation exercises: `router` (a node decided by a router or custom router
    model), `chain` (scenario -> scenario edges), `global` (a node reachable from everywhere), else `star`."""
    found: set[str] = set()
    if any((cfg or {}).get("mode") in ("router", "custom") for cfg in (conv.get("nodes") or {}).values()):
        found.add("router")
    if any(a != "triage" and b not in ("triage", "human") for a, b in conv.get("edges") or []):
        found.add("chain")
    if conv.get("global"):
        found.add("global")
    return found or {"star"}
