"""Find out how a model can use tools: native tool calls, the text tool protocol, or neither.

    python manage.py captain_probe_tools                                   # the server's default endpoint
    python manage.py captain_probe_tools --endpoint local --model qwen     # one of the server's endpoints
    python manage.py captain_probe_tools --account 3 --endpoint ours --save   # an account's own endpoint

The model gets a small task that needs one tool (look up an order's status), twice: first with the tool offered
natively (`tool_choice: auto`; a `tool_calls` entry whose arguments pass the tool's schema counts), then with
the tool described in the prompt and the text protocol (a valid `<action>` counts). Many small models write the
call as text instead of `tool_calls` (LOCAL_LLM.md): those need the text protocol. The command prints what
worked and the recommended setting; `--save` stores it in an account's own endpoint (`text_tool_models`), and
for the server's endpoints prints the value to configure. Two model calls through the model boundary, no credits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema
from django.core.management.base import BaseCommand, CommandError, CommandParser

from captain.assistants.models import ModelEndpoint
from captain.assistants.services.model_endpoints import (
    DEFAULT_ENDPOINT,
    Endpoint,
    EndpointUnavailable,
    endpoint_and_model,
    model_client_for,
    model_endpoint_set_text_tools,
    operator_endpoints,
)
from captain.conf import captain_setting
from captain.runtime.model import ModelClient, ModelError, ModelSettings, ToolCall
from captain.runtime.text_protocol import complete_text_turn, protocol_prompt
from captain.runtime.text_tools import recover_text_tool_calls

TOOL_NAME = "get_order_status"
ORDER_ID = "A-1042"
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": "The order number, e.g. A-1000."}},
    "required": ["order_id"],
    "additionalProperties": False,
}
TOOL_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Look up the shipping status of an order by its number.",
        "parameters": PARAMETERS,
    },
}
SYSTEM = (
    "You are a customer support assistant for an online shop. You do not know any order's status: "
    "look it up with the tool before answering."
)
QUESTION = f"Hi, what is the status of my order {ORDER_ID}?"
SETTINGS = ModelSettings(temperature=0.0, max_tokens=300)


@dataclass(frozen=True)
class Probe:
    works: bool
    detail: str


def _valid_call(calls: list[ToolCall]) -> Probe | None:
    """A call of the probe's tool with schema-valid arguments, as the runner would accept it; None if none."""
    for call in calls:
        if call.name != TOOL_NAME:
            continue
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            continue
        if isinstance(arguments, dict) and jsonschema.Draft202012Validator(PARAMETERS).is_valid(arguments):
            return Probe(True, f"{call.name} {json.dumps(arguments, ensure_ascii=False)}")
    return None


def _short(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def probe_native(client: ModelClient, model: str) -> Probe:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    settings = ModelSettings(temperature=0.0, max_tokens=300, tool_choice="auto")
    try:
        response = client.complete(model=model, messages=messages, tools=[TOOL_SPEC], settings=settings)
    except ModelError as exc:
        return Probe(False, f"the call failed: {exc}")
    valid = _valid_call(response.tool_calls)
    if valid is not None:
        return valid
    if response.tool_calls:
        written = ", ".join(f"{c.name} {c.arguments}" for c in response.tool_calls)
        return Probe(False, f"tool calls with a wrong name or invalid arguments: {_short(written)}")
    if recover_text_tool_calls(response.content, [TOOL_NAME]):
        return Probe(False, f"the call came back as text, not as tool_calls: {_short(response.content)}")
    return Probe(False, f"no tool call; it answered: {_short(response.content)}")


def probe_text(client: ModelClient, model: str) -> Probe:
    messages = [
        {"role": "system", "content": f"{SYSTEM}\n\n{protocol_prompt([TOOL_SPEC])}"},
        {"role": "user", "content": QUESTION},
    ]
    try:
        _, turn = complete_text_turn(
            client, model=model, messages=messages, settings=SETTINGS, offered=[TOOL_NAME], on_thought=_ignore
        )
    except ModelError as exc:
        return Probe(False, f"the call failed: {exc}")
    valid = _valid_call(turn.calls)
    if valid is not None:
        return valid
    if turn.error:
        return Probe(False, f"{turn.error}: {_short(turn.raw)}")
    if turn.calls:
        written = ", ".join(f"{c.name} {c.arguments}" for c in turn.calls)
        return Probe(False, f"actions with a wrong name or invalid arguments: {_short(written)}")
    return Probe(False, f"no action; it answered: {_short(turn.final or turn.raw)}")


def _ignore(_: str) -> None:
    pass


class Command(BaseCommand):
    help = "Probe whether a model returns native tool calls or follows the text tool protocol."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--account", type=int, default=None, help="The account whose endpoint to probe.")
        parser.add_argument(
            "--endpoint",
            default="",
            help="Endpoint name (an account's own with --account); default: the server's.",
        )
        parser.add_argument("--model", default="", help="Model name; default: the endpoint's first model.")
        parser.add_argument(
            "--save",
            action="store_true",
            help="Store the result in the own endpoint's text_tool_models (server endpoints: print the setting).",
        )

    def handle(
        self, *args: Any, account: int | None, endpoint: str, model: str, save: bool, **options: Any
    ) -> None:
        resolved, chosen = self._resolve(account, endpoint, model)
        self.stdout.write(f"endpoint {resolved.name!r} ({resolved.base_url}), model {chosen!r}")
        client = model_client_for(resolved)
        native = probe_native(client, chosen)
        self.stdout.write(f"native tool calls: {'works' if native.works else 'fails'} ({native.detail})")
        text = probe_text(client, chosen)
        self.stdout.write(f"text protocol:     {'works' if text.works else 'fails'} ({text.detail})")
        current = resolved.uses_text_tools(chosen)
        if native.works:
            recommended: bool | None = False
            self.stdout.write("recommended: native tool calls (keep the model out of the text tool models)")
        elif text.works:
            recommended = True
            self.stdout.write("recommended: the text tool protocol (list the model in the text tool models)")
        else:
            recommended = None
            self.stdout.write(
                "recommended: none works; this model cannot use tools reliably (choose another for tool work)"
            )
        self.stdout.write(f"currently: {'text tool protocol' if current else 'native tool calls'}")
        if save:
            self._save(resolved, chosen, recommended)

    def _resolve(self, account: int | None, endpoint: str, model: str) -> tuple[Endpoint, str]:
        if account is not None:
            try:
                return endpoint_and_model(account_id=account, endpoint=endpoint, model=model)
            except EndpointUnavailable as exc:
                raise CommandError(str(exc)) from exc
        endpoints = operator_endpoints()
        if endpoint and endpoint not in endpoints:
            raise CommandError(
                f"The server has no endpoint named {endpoint!r} (use --account for an own one)."
            )
        resolved = endpoints.get(endpoint) if endpoint else endpoints.get(DEFAULT_ENDPOINT)
        resolved = resolved or next(iter(endpoints.values()))
        return resolved, resolved.model_or_default(model)

    def _save(self, endpoint: Endpoint, model: str, text_tools: bool | None) -> None:
        if text_tools is None:
            self.stdout.write("not saved: neither protocol worked")
            return
        if endpoint.own_id is not None:
            row = ModelEndpoint.objects.get(pk=endpoint.own_id)
            stored = model_endpoint_set_text_tools(endpoint=row, model=model, text_tools=text_tools)
            self.stdout.write(f"saved: text_tool_models of endpoint {row.name!r} = {json.dumps(stored)}")
            return
        names = set(endpoint.text_tool_models)
        names = names | {model} if text_tools else names - {model}
        if endpoint.name == DEFAULT_ENDPOINT and not captain_setting("MODEL_ENDPOINTS"):
            self.stdout.write(
                f"set in the server's environment: CAPTAIN_TEXT_TOOL_MODELS={','.join(sorted(names))}"
            )
        else:
            self.stdout.write(
                f'set in CAPTAIN_MODEL_ENDPOINTS["{endpoint.name}"]: "text_tools": {json.dumps(sorted(names))}'
            )
