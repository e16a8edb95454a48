"""Routing graph of an assistant: database rows -> runtime `Graph`, validation with clear errors, atomic
replacement (API), and the record of decisions.

A new assistant gets a `RoutingConfig` with the defaults (semantic router, star edges): graph routing is the
product's default. An assistant without one (created before graph routing existed, or whose routing was
deleted through the API) keeps the plain star of handoff tools.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from captain.assistants.models import TRIAGE_KEY, Assistant, Scenario
from captain.assistants.services.model_endpoints import model_choice_errors
from captain.routing.models import (
    RoutingConfig,
    RoutingDecision,
    RoutingEdge,
    RoutingMode,
    RoutingNode,
    RoutingRule,
)
from captain.routing.services.routing_examples import examples_in_use
from captain.runtime.routing import HUMAN, Decision, Graph, GraphError, Node, RouterEndpoint, Rule

logger = logging.getLogger(__name__)


@dataclass
class GraphSpec:
    """The editable part of a routing graph, as the API and the admin write it."""

    config: dict[str, Any] = field(default_factory=dict)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)


def _scenario_keys(assistant: Assistant) -> tuple[set[str], set[str]]:
    """(enabled keys, disabled keys) of the assistant's own scenarios."""
    enabled: set[str] = set()
    disabled: set[str] = set()
    for key, on in Scenario.objects.filter(assistant=assistant).values_list("key", "enabled"):
        (enabled if on else disabled).add(key)
    return enabled, disabled


def _foreign_keys(assistant: Assistant, keys: set[str]) -> set[str]:
    """Keys that are scenarios of the account's OTHER assistants (a copy-paste from another team), for a
    clearer error. Only the caller's account: another tenant's keys must not be confirmed."""
    return set(
        Scenario.objects.filter(key__in=keys, assistant__account_id=assistant.account_id)
        .exclude(assistant=assistant)
        .values_list("key", flat=True)
    )


def _reference_errors(assistant: Assistant, where: str, key: str, *, target: bool) -> list[str]:
    enabled, disabled = _scenario_keys(assistant)
    if key == TRIAGE_KEY or key in enabled or (target and key == HUMAN):
        return []
    if key in disabled:
        return [f"{where}: scenario {key!r} is disabled"]
    if _foreign_keys(assistant, {key}):
        return [f"{where}: {key!r} is a scenario of another assistant"]
    return [f"{where}: unknown node {key!r}"]


def routing_reference_errors(*, assistant: Assistant, where: str, key: str, target: bool) -> list[str]:
    """Why `key` cannot be used as a node (or, with `target`, as a jump target) of `assistant`'s graph."""
    return _reference_errors(assistant, where, key, target=target)


def router_choice_errors(*, assistant: Assistant, where: str, endpoint: str, model: str) -> list[str]:
    """Why a router's endpoint/model choice cannot be used: an endpoint this account may not pick, or a model
    its endpoint does not offer. Routers name endpoints, never URLs (services/model_endpoints.py)."""
    if not endpoint and not model:
        return []
    problems = model_choice_errors(
        account_id=assistant.account_id, endpoint=endpoint or assistant.model_endpoint, model=model
    )
    return [f"{where}: {problem}" for problem in problems]


def routing_validate(*, assistant: Assistant, spec: GraphSpec) -> list[str]:
    """Every reason `spec` is not a valid graph for `assistant` (empty when valid)."""
    errors: list[str] = router_choice_errors(
        assistant=assistant,
        where="config",
        endpoint=str(spec.config.get("router_endpoint") or ""),
        model=str(spec.config.get("router_model") or ""),
    )
    for i, node in enumerate(spec.nodes, start=1):
        errors += router_choice_errors(
            assistant=assistant,
            where=f"node {i}",
            endpoint=str(node.get("router_endpoint") or ""),
            model=str(node.get("router_model") or ""),
        )
    seen: set[str] = set()
    for i, node in enumerate(spec.nodes, start=1):
        key = str(node.get("key", ""))
        if key in seen:
            errors.append(f"node {i}: duplicate key {key!r}")
        seen.add(key)
        errors += _reference_errors(assistant, f"node {i}", key, target=False)
    edge_seen: set[tuple[str, str]] = set()
    for a, b in spec.edges:
        if (a, b) in edge_seen:
            errors.append(f"edge {a} -> {b}: duplicate edge")
        edge_seen.add((a, b))
        errors += _reference_errors(assistant, f"edge {a} -> {b}", a, target=False)
        errors += _reference_errors(assistant, f"edge {a} -> {b}", b, target=True)
    for i, rule in enumerate(spec.rules, start=1):
        errors += _reference_errors(assistant, f"rule {i}", str(rule.get("node", "")), target=False)
        errors += _reference_errors(assistant, f"rule {i}", str(rule.get("target", "")), target=True)
    # The structural checks run too, on what the references above left standing, so a builder sees every
    # problem at once instead of one round of fixes per kind.
    enabled, _ = _scenario_keys(assistant)
    known = {TRIAGE_KEY, HUMAN} | enabled
    standing = GraphSpec(
        config=spec.config,
        nodes=[n for n in spec.nodes if n.get("key") in known],
        edges=[(a, b) for a, b in spec.edges if a in known and b in known],
        rules=[r for r in spec.rules if r.get("node") in known and r.get("target") in known],
    )
    try:
        _graph(assistant, standing)
    except GraphError as exc:
        errors += [error for error in exc.errors if error not in errors]
    return errors


def _spec_from_db(assistant: Assistant) -> GraphSpec:
    config = RoutingConfig.objects.filter(assistant=assistant).first()
    return GraphSpec(
        config={}
        if config is None
        else {
            "default_mode": config.default_mode,
            "history_rounds": config.history_rounds,
            "max_hops": config.max_hops,
            "star": config.star,
            "router_model": config.router_model,
            "router_endpoint": config.router_endpoint,
        },
        nodes=[
            dict(row)
            for row in RoutingNode.objects.filter(assistant=assistant).values(
                "key",
                "mode",
                "timing",
                "history_rounds",
                "rule_prompt",
                "router_model",
                "router_endpoint",
                "is_global",
                "examples",
            )
        ],
        edges=list(RoutingEdge.objects.filter(assistant=assistant).values_list("source", "target")),
        rules=[
            dict(row)
            for row in RoutingRule.objects.filter(assistant=assistant).values(
                "node", "position", "match", "value", "target"
            )
        ],
    )


def _graph(
    assistant: Assistant,
    spec: GraphSpec,
    *,
    strict: bool = True,
    learned: dict[str, list[str]] | None = None,
) -> Graph:
    """`learned`: node key -> every example in use (builder's, drafted, accepted corrections), replacing the
    builder's list alone; None in validation, which only checks what the builder wrote."""
    config = spec.config
    scenarios = list(Scenario.objects.filter(assistant=assistant, enabled=True).order_by("id"))
    nodes = [Node(key=TRIAGE_KEY, title=assistant.name, description=assistant.description)]
    nodes += [Node(key=s.key, title=s.title, description=s.description) for s in scenarios]
    by_key = {n.key: n for n in nodes}
    global_keys = []
    for row in spec.nodes:
        node = by_key.get(row.get("key", ""))
        if node is None:
            continue  # strict validation reports it; at run time a deleted scenario's settings are ignored
        node.mode = row.get("mode") or None
        node.timing = row.get("timing") or "after_input"
        node.history_rounds = row.get("history_rounds")
        node.rule_prompt = row.get("rule_prompt") or ""
        node.router = RouterEndpoint(
            model=row.get("router_model") or "", endpoint=row.get("router_endpoint") or ""
        )
        node.examples = [str(e) for e in (row.get("examples") or []) if str(e).strip()]
        if row.get("is_global"):
            global_keys.append(node.key)
    for key, texts in (learned or {}).items():
        if key in by_key:
            by_key[key].examples = list(texts)
    rules = sorted(spec.rules, key=lambda r: r.get("position", 0))
    for rule in rules:
        node = by_key.get(rule.get("node", ""))
        if node is not None and (rule.get("target") in by_key or rule.get("target") == HUMAN):
            node.rules.append(
                Rule(match=rule.get("match", "exact"), value=rule.get("value", ""), to=rule["target"])
            )
    edges = {(a, b) for a, b in spec.edges}
    if config.get("star", True):
        edges |= {(TRIAGE_KEY, s.key) for s in scenarios} | {(s.key, TRIAGE_KEY) for s in scenarios}
    if not strict:
        edges = {(a, b) for a, b in edges if a in by_key and (b in by_key or b == HUMAN)}
        for node in nodes:  # a rule whose edge was removed since would be refused anyway; drop it quietly
            allowed = {b for a, b in edges if a == node.key} | set(global_keys) | {HUMAN}
            node.rules = [r for r in node.rules if r.to in allowed]
    return Graph.build(
        nodes,
        sorted(edges),
        root=TRIAGE_KEY,
        global_keys=global_keys,
        default_mode=config.get("default_mode") or "semantic",
        default_history_rounds=config.get("history_rounds", 2),
        max_hops=config.get("max_hops", 3),
        router=RouterEndpoint(
            model=config.get("router_model") or "", endpoint=config.get("router_endpoint") or ""
        ),
    )


def routing_graph(assistant: Assistant) -> Graph | None:
    """The assistant's graph for a run, or None when graph routing is off (no RoutingConfig)."""
    spec = _spec_from_db(assistant)
    if not spec.config:
        return None
    learned = examples_in_use(assistant)
    try:
        return _graph(assistant, spec, strict=False, learned=learned)
    except GraphError as exc:
        # The graph was valid when saved; a scenario edited since must not stop customers from being answered.
        logger.warning("routing graph of assistant %s is invalid (%s); using the star", assistant.pk, exc)
        return _graph(assistant, GraphSpec(config=spec.config), strict=False, learned=learned)


def routing_graph_with(assistant: Assistant, learned: dict[str, list[str]]) -> Graph:
    """The assistant's graph with `learned` as its nodes' examples (what-if checks: `draft_check`)."""
    spec = _spec_from_db(assistant)
    try:
        return _graph(assistant, spec, strict=False, learned=learned)
    except GraphError:
        return _graph(assistant, GraphSpec(config=spec.config), strict=False, learned=learned)


def star_graph(assistant: Assistant) -> Graph:
    """The plain star of an assistant without a routing configuration: triage <-> every enabled scenario, and
    every node decides with its own model's handoff tools (mode `tool`), as the agents always have."""
    return _graph(assistant, GraphSpec(config={"default_mode": "tool", "star": True}), strict=False)


def routing_enable_default(*, assistant: Assistant) -> RoutingConfig:
    """Turn graph routing on with the defaults (new assistants); an existing configuration is left as it is."""
    config, _ = RoutingConfig.objects.get_or_create(assistant=assistant)
    return config


def routing_config_update(*, assistant: Assistant, default_mode: str) -> RoutingConfig:
    """Turn graph routing on (if it was off) with `default_mode` for nodes that do not name their own."""
    if default_mode not in RoutingMode.values:
        raise ValidationError({"default_mode": [f"One of: {', '.join(RoutingMode.values)}."]})
    config, _ = RoutingConfig.objects.update_or_create(
        assistant=assistant, defaults={"default_mode": default_mode}
    )
    return config


def routing_node_examples_set(*, assistant: Assistant, key: str, examples: list[str]) -> RoutingNode:
    """The phrases the semantic router compares a customer message with for node `key` (its other settings,
    or the defaults for a node without a row, stay)."""
    errors = _reference_errors(assistant, "node", key, target=False)
    if errors:
        raise ValidationError({"key": errors})
    node, _ = RoutingNode.objects.update_or_create(
        assistant=assistant, key=key, defaults={"examples": examples}
    )
    return node


def routing_get(*, assistant: Assistant) -> GraphSpec:
    return _spec_from_db(assistant)


@transaction.atomic
def routing_replace(*, assistant: Assistant, spec: GraphSpec) -> GraphSpec:
    """Validate and store the whole graph at once. Raises GraphError with every problem found."""
    errors = routing_validate(assistant=assistant, spec=spec)
    if errors:
        raise GraphError(errors)
    config = spec.config
    RoutingConfig.objects.update_or_create(
        assistant=assistant,
        defaults={
            "default_mode": config.get("default_mode") or "semantic",
            "history_rounds": config.get("history_rounds", 2),
            "max_hops": config.get("max_hops", 3),
            "star": config.get("star", True),
            "router_model": config.get("router_model", ""),
            "router_endpoint": config.get("router_endpoint", ""),
        },
    )
    RoutingNode.objects.filter(assistant=assistant).delete()
    RoutingEdge.objects.filter(assistant=assistant).delete()
    RoutingRule.objects.filter(assistant=assistant).delete()
    RoutingNode.objects.bulk_create(
        RoutingNode(
            assistant=assistant,
            key=n["key"],
            mode=n.get("mode") or "",
            timing=n.get("timing") or "after_input",
            history_rounds=n.get("history_rounds"),
            rule_prompt=n.get("rule_prompt", ""),
            router_model=n.get("router_model", ""),
            router_endpoint=n.get("router_endpoint", ""),
            is_global=bool(n.get("is_global")),
            examples=list(n.get("examples") or []),
        )
        for n in spec.nodes
    )
    RoutingEdge.objects.bulk_create(
        RoutingEdge(assistant=assistant, source=a, target=b) for a, b in spec.edges
    )
    RoutingRule.objects.bulk_create(
        RoutingRule(
            assistant=assistant,
            node=r["node"],
            position=r.get("position", i),
            match=r.get("match", "exact"),
            value=r["value"],
            target=r["target"],
        )
        for i, r in enumerate(spec.rules)
    )
    return _spec_from_db(assistant)


def routing_disable(*, assistant: Assistant) -> None:
    RoutingConfig.objects.filter(assistant=assistant).delete()


def routing_decisions_record(
    *,
    account_id: int,
    assistant: Assistant,
    conversation_id: int,
    message_id: int | None,
    trace_id: str,
    decisions: list[Decision],
    record_content: bool = True,
) -> None:
    RoutingDecision.objects.bulk_create(
        RoutingDecision(
            account_id=account_id,
            assistant=assistant,
            conversation_id=conversation_id,
            message_id=message_id,
            trace_id=trace_id,
            node=d.node,
            phase=d.phase,
            mode=d.mode,
            candidates=list(d.candidates),
            target=d.target,
            switched=d.switched,
            refused=d.refused,
            reason=d.reason,
            prompt=d.prompt if record_content else "",
            raw_output=d.raw_output if record_content else "",
            parsed=(d.parsed or "")[:200],
            scores=d.scores,
            model=d.model,
            input_tokens=d.input_tokens,
            output_tokens=d.output_tokens,
            latency_ms=round(d.latency_ms, 1),
        )
        for d in decisions
    )
