"""Modes `router` and `custom`: a router model picks `stay` or one of the node's candidates, its answer
constrained by a JSON-schema enum where the endpoint supports it (`custom` adds the builder's rule prompt).
Output that does not parse, or names anything but an offered id, means stay, and is recorded."""

from __future__ import annotations

import json
from typing import Any

from ..model import ModelError, ModelSettings
from .decision import Decision
from .prompts import router_messages
from .request import DecisionRequest, Router
from .router_calls import NO_CALLS, TEMPERATURE, RouterCalls, ask
from .view import RoutingView

MAX_TOKENS = 24
"""`{"route": "<id>"}` fits; a model that rambles is cut short (and its output refused)."""


def route_schema(enum: list[str]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "route",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"route": {"type": "string", "enum": enum}},
                "required": ["route"],
                "additionalProperties": False,
            },
        },
    }


def parse_route(text: str, enum: list[str]) -> str | None:
    """`{"route": "x"}` or a bare id; anything else is unparseable (None). Never a guess."""
    text = (text or "").strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = text.strip("`'\" \n.")
    if isinstance(value, dict):
        value = value.get("route")
    if isinstance(value, str):
        value = value.strip()
        return value if value in enum else (value or None)
    return None


def decide_by_router(
    request: DecisionRequest,
    view: RoutingView,
    mode: str,
    router: Router | None,
    *,
    candidates: list[str],
    scores: dict[str, float],
) -> Decision:
    """`candidates`: the view's, or the encoder's shortlist of them (whose `scores` are recorded)."""
    rule_prompt = view.rule_prompt if mode == "custom" else ""
    messages, enum = router_messages(view, candidates, request.message, rule_prompt=rule_prompt)

    def decision(reason: str, calls: RouterCalls = NO_CALLS, **fields: Any) -> Decision:
        return Decision(
            node=request.node,
            phase=request.phase,
            mode=mode,
            candidates=list(view.candidates),
            target=fields.pop("target", request.node),
            reason=reason,
            prompt=messages[-1]["content"],
            scores={k: round(v, 4) for k, v in scores.items()},
            **calls.fields(),
            **fields,
        )

    if router is None:
        return decision("no router model configured: stay")
    settings = ModelSettings(
        temperature=TEMPERATURE, max_tokens=MAX_TOKENS, response_format=route_schema(enum)
    )
    try:
        response = ask(router, messages, settings)
    except ModelError as exc:
        return decision(f"router model failed ({exc.kind}): stay")
    calls = RouterCalls().plus(response, router[1])
    parsed = parse_route(calls.raw_output, enum)
    if parsed is None or parsed not in enum:
        what = "unparseable output" if parsed is None else f"{parsed!r} is not a candidate"
        return decision(f"{what}: stay", calls, parsed=parsed, refused=True)
    if parsed == "stay":
        return decision("router chose stay", calls, parsed=parsed)
    return decision(f"router chose {parsed}", calls, parsed=parsed, target=parsed)
