"""Routing graph of an assistant and the routing decisions of a conversation.

- `accounts/<id>/assistants/<aid>/routing/`: GET the graph (with each node's resulting candidates), PUT a whole
  new graph (validated as a whole: an edge to a disabled or foreign scenario, a duplicate key, an unknown node
  or a rule off the node's edges is a 400 naming it), DELETE to go back to the plain star of handoff tools.
- `accounts/<id>/conversations/<cid>/routing-decisions/`: every routing decision, grouped per customer turn
  (administrators only: decisions hold router prompts, which quote the conversation).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant
from captain.routing.models import RoutingDecision, RoutingMode, RoutingRule, RoutingTiming
from captain.routing.selectors import conversation_routing_decisions
from captain.routing.services.routing import (
    GraphSpec,
    routing_disable,
    routing_get,
    routing_graph,
    routing_replace,
)
from captain.runtime.routing import GraphError
from helpdesk.api.auth import AccountAdminApi, AccountAdminOrReadOnlyApi
from helpdesk.selectors import access_conversation


def _key() -> serializers.CharField:
    """A fresh field each time: a DRF field instance binds to one serializer."""
    return serializers.CharField(max_length=64)


class RoutingConfigSerializer(serializers.Serializer):
    default_mode = serializers.ChoiceField(choices=RoutingMode.choices, default=RoutingMode.SEMANTIC)
    history_rounds = serializers.IntegerField(min_value=0, max_value=20, default=2)
    max_hops = serializers.IntegerField(min_value=0, max_value=10, default=3)
    star = serializers.BooleanField(default=True)
    router_model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    router_endpoint = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")

    class Meta:
        ref_name = "RoutingConfig"


class RoutingNodeSerializer(serializers.Serializer):
    key = _key()
    mode = serializers.ChoiceField(
        choices=[("", "default"), *RoutingMode.choices], required=False, default=""
    )
    timing = serializers.ChoiceField(choices=RoutingTiming.choices, default=RoutingTiming.AFTER_INPUT)
    history_rounds = serializers.IntegerField(
        min_value=0, max_value=20, required=False, allow_null=True, default=None
    )
    rule_prompt = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    router_model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    router_endpoint = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    is_global = serializers.BooleanField(default=False)
    examples = serializers.ListField(child=serializers.CharField(max_length=500), max_length=50, default=list)

    class Meta:
        ref_name = "RoutingNode"


class RoutingRuleSerializer(serializers.Serializer):
    node = _key()
    match = serializers.ChoiceField(choices=RoutingRule.Match.choices, default=RoutingRule.Match.EXACT)
    value = serializers.CharField(max_length=500, trim_whitespace=False)
    target = _key()

    class Meta:
        ref_name = "RoutingRule"


class RoutingGraphSerializer(serializers.Serializer):
    """A whole graph. `nodes`, `edges` and `rules` are required (`[]` for none): see `RoutingGraphApi.put`."""

    config = RoutingConfigSerializer(default=dict)
    nodes = RoutingNodeSerializer(many=True)
    edges = serializers.ListField(child=serializers.ListField(child=_key(), min_length=2, max_length=2))
    rules = RoutingRuleSerializer(many=True)

    class Meta:
        ref_name = "RoutingGraph"


def _graph_payload(assistant: Assistant) -> dict[str, Any]:
    spec = routing_get(assistant=assistant)
    graph = routing_graph(assistant)
    return {
        "enabled": bool(spec.config),
        "config": spec.config,
        "nodes": spec.nodes,
        "edges": [list(e) for e in spec.edges],
        "rules": [{k: r[k] for k in ("node", "match", "value", "target")} for r in spec.rules],
        "candidates": {} if graph is None else {k: graph.candidates(k) for k in graph.nodes},
    }


class RoutingGraphApi(AccountAdminOrReadOnlyApi):
    """`GET` / `PUT` (whole graph) / `DELETE` (back to the star) the routing graph of an assistant."""

    InputSerializer = RoutingGraphSerializer

    @extend_schema(responses={200: dict})
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return Response(_graph_payload(assistant))

    @extend_schema(request=InputSerializer, responses={200: dict})
    def put(self, request: Request, account_id: int, assistant_id: int) -> Response:
        """Replace the whole graph. The body is a JSON object that names all three of `nodes`, `edges` and
        `rules`, each a list; "explicitly empty" means the key is present with `[]`, and only that clears it
        (`{"nodes": [], "edges": [], "rules": []}` keeps only the config's edges, the star). A missing key or
        `null` is a 400 naming it and nothing changes: a body that lost its lists on the way (a form
        encoding, which cannot carry them; a client that dropped a key) must not empty a working graph.
        `config` may be left out: its fields take their defaults. DELETE removes the graph and its config."""
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        spec = GraphSpec(
            config=dict(v["config"]),
            nodes=[dict(n) for n in v["nodes"]],
            edges=[(a, b) for a, b in v["edges"]],
            rules=[dict(r, position=i) for i, r in enumerate(v["rules"])],
        )
        try:
            routing_replace(assistant=assistant, spec=spec)
        except GraphError as exc:
            raise serializers.ValidationError({"graph": exc.errors}) from exc
        return Response(_graph_payload(assistant))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        routing_disable(assistant=assistant)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RoutingDecisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = RoutingDecision
        ref_name = "RoutingDecision"
        fields = [
            "id",
            "node",
            "phase",
            "mode",
            "candidates",
            "target",
            "switched",
            "refused",
            "reason",
            "prompt",
            "raw_output",
            "parsed",
            "scores",
            "model",
            "input_tokens",
            "output_tokens",
            "latency_ms",
            "trace_id",
            "created_at",
        ]
        read_only_fields = fields


class ConversationRoutingDecisionsApi(AccountAdminApi):
    """Routing decisions of a conversation, one entry per customer turn (oldest first)."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        turns: dict[tuple, dict] = {}
        for decision in conversation_routing_decisions(conversation=conversation):
            key = (decision.message_id, decision.trace_id)
            turn = turns.setdefault(
                key, {"message": decision.message_id, "trace_id": decision.trace_id, "decisions": []}
            )
            turn["decisions"].append(RoutingDecisionSerializer(decision).data)
        for turn in turns.values():
            decisions = turn["decisions"]
            turn["start"] = decisions[0]["node"] if decisions else None
            turn["end"] = decisions[-1]["target"] if decisions else None
        return Response({"conversation": conversation.id, "turns": list(turns.values())})
