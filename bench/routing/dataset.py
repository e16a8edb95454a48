"""The benchmark's datasets: JSON Lines, one labelled conversation per line (docs/routing.md), and the routing
graph each conversation describes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from captain.runtime.routing import Graph, Node, RouterEndpoint, Rule

ROOT = "triage"
"""Key of the triage node in the datasets (`expect: triage`)."""


def load_dataset(path: str | Path) -> list[dict[str, Any]]:
    conversations = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                conversations.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not JSON ({exc})") from exc
    return conversations


def graph_from_dataset(conv: dict[str, Any]) -> Graph:
    settings = conv.get("nodes") or {}
    assistant = conv.get("assistant") or {}
    nodes = [
        Node(
            key=ROOT, title=assistant.get("name") or "Assistant", description=assistant.get("description", "")
        )
    ]
    for s in conv.get("scenarios", []):
        nodes.append(
            Node(
                key=s["key"],
                title=s.get("title") or s["key"],
                description=s.get("description", ""),
                examples=list(s.get("examples") or []),
            )
        )
    for node in nodes:
        cfg = settings.get(node.key) or {}
        node.mode = cfg.get("mode") or None
        node.timing = cfg.get("timing") or "after_input"
        node.history_rounds = cfg.get("history_rounds")
        node.rule_prompt = cfg.get("rule_prompt", "")
        node.rules = [Rule(match=r["match"], value=r["value"], to=r["to"]) for r in cfg.get("rules", [])]
        node.examples += list(cfg.get("examples") or [])
        router = cfg.get("router") or {}
        node.router = RouterEndpoint(model=router.get("model", ""), endpoint=router.get("endpoint", ""))
    edges = [tuple(e) for e in conv["edges"]] if conv.get("edges") else None
    return Graph.build(nodes, edges, root=ROOT, global_keys=list(conv.get("global") or []))
