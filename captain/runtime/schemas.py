"""Tool arguments and schemas: the model's argument text read as a JSON object, each tool's schema made strict
and compiled once, the validation message the model gets back, and the Chat Completions function definitions
the agent is offered."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema

HANDOFF_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "One short sentence: why this agent should take over."},
    },
    "additionalProperties": False,
}


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse the model's argument text; return ({}, why) when it is not a JSON object."""
    if not raw.strip():
        return {}, None  # models commonly send "" for a tool without parameters
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return {}, f"arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def schema_key(parameters: dict[str, Any]) -> str:
    # Agents are rebuilt from DB rows for each run, so schemas are new dicts every time: cache by content.
    return json.dumps(parameters, sort_keys=True)


@functools.lru_cache(maxsize=512)
def compiled(key: str) -> tuple[dict[str, Any], jsonschema.protocols.Validator | None, str | None]:
    """(schema offered to the model, validator, schema error) for one tool schema, compiled once."""
    schema = json.loads(key)
    # Model arguments are untrusted: an undeclared field is a hallucination, never a feature. Forbid extra
    # fields even when the tool author forgot to, and offer the model the same strict schema we enforce.
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return schema, None, f"the tool's own schema is invalid ({exc.message})"
    return schema, validator_class(schema), None


def validation_error(parameters: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """A short explanation for the model of what is wrong with the arguments, or None when they are valid."""
    _, validator, schema_error = compiled(schema_key(parameters))
    if validator is None:
        return schema_error
    errors = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.absolute_path)
        parts.append(f"{where}: {error.message}" if where else error.message)
    return "; ".join(parts)


def function_spec(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }
