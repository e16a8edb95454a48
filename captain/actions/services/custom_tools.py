"""Custom HTTP tools: an account's own API calls a scenario may make (issue 15). This module is the builder's
side: what a tool may be (checked on save), storing it with its secret, and the admin's and the API's test call.

A builder describes the request (method, URL and body templates, authentication, limits) and what the model
sees of the answer. The templates are `custom_tool_templates`; `custom_tool_calls.custom_tool_call` makes the
call through the outbound HTTP policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx
import jsonschema
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from jsonpath_ng.ext import parse as jsonpath_parse

from captain.actions.models import CUSTOM_TOOL_NAME_PATTERN, CustomTool
from captain.actions.services.custom_tool_calls import Exchange, custom_tool_exchange
from captain.actions.services.custom_tool_templates import (
    RESPONSE_VARIABLE,
    custom_tool_schema,
    template_problem,
    template_render,
    tool_properties,
)
from captain.answering.services.warmup import prompt_warm_enqueue
from captain.assistants.models import Scenario
from captain.assistants.services.builder import FieldErrors, raise_field_errors
from captain.assistants.services.destinations import Origin, secret_stays, url_origin
from captain.crypto import secret_encrypt
from captain.prompts.sandbox import PromptTemplateError
from helpdesk.models import Account
from helpdesk.outbound import validate_outbound_url

MAX_TIMEOUT_SECONDS = 30.0
MAX_RESPONSE_BYTES = 1_000_000

CUSTOM_TOOL_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "parameters",
    "method",
    "url_template",
    "body_template",
    "auth_type",
    "auth_header",
    "auth_username",
    "identity_header",
    "timeout_seconds",
    "max_response_bytes",
    "response_path",
    "response_template",
    "safe",
    "confirmation_template",
    "enabled",
)
"""What a builder writes on a custom tool besides its secret (API serializers and the admin form)."""

_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,99}$")
_RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "accept-encoding", "cookie"}
)
_PARAMETER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_SAMPLES: dict[str, Any] = {
    "string": "sample",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


# ---- validation on save ---------------------------------------------------------------------------------------


def _sample_arguments(parameters: Mapping[str, Any], variant: str) -> dict[str, Any]:
    samples: dict[str, Any] = {}
    for name, spec in (parameters.get("properties") or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if isinstance(spec, dict) and spec.get("enum"):
            samples[name] = spec["enum"][0]
        elif kind in (None, "string"):
            samples[name] = f"{variant}{name}"
        else:
            samples[name] = _SAMPLES.get(kind, variant)
    return samples


def _parameters_errors(parameters: Any) -> list[str]:
    if not isinstance(parameters, dict):
        return ['A JSON schema object, e.g. {"type": "object", "properties": {...}}.']
    if parameters.get("type", "object") != "object":
        return ['The arguments schema must have "type": "object".']
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as exc:
        return [f"Not a valid JSON schema: {exc.message}"]
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict):
        return ['"properties" must be an object.']
    bad = [n for n in properties if not _PARAMETER_NAME.match(n) or n == RESPONSE_VARIABLE]
    if bad:
        return [
            f"Parameter name(s) {', '.join(map(repr, bad))}: use letters, digits and underscores, starting "
            f"with a letter ('{RESPONSE_VARIABLE}' is reserved)."
        ]
    return []


def _header_errors(value: str) -> list[str]:
    if value and (not _HEADER_NAME.match(value) or value.lower() in _RESERVED_HEADERS):
        return [f"{value!r} cannot be used: a header name (letters, digits, '-'), not {_RESERVED_HEADERS}."]
    return []


def _url_errors(tool: CustomTool) -> list[str]:
    problem = template_problem(tool.url_template, tool_properties(tool))
    if problem:
        return [problem]
    try:
        urls = [
            template_render("url", tool.url_template, _sample_arguments(tool.parameters or {}, variant))
            for variant in ("a", "b")
        ]
        hosts = [httpx.URL(url.strip()) for url in urls]
    except (PromptTemplateError, httpx.InvalidURL) as exc:
        return [f"The URL template cannot be rendered: {exc}"]
    if hosts[0].scheme != hosts[1].scheme or hosts[0].netloc != hosts[1].netloc:
        return ["The scheme and host must be written in the URL, not taken from the arguments."]
    try:
        validate_outbound_url(urls[0].strip())
    except ValidationError as exc:
        return list(exc.messages)
    return []


def _body_errors(tool: CustomTool) -> list[str]:
    if not tool.body_template.strip():
        return []
    if tool.method == CustomTool.Method.GET:
        return ["A GET request has no body: empty the body template or choose another method."]
    problem = template_problem(tool.body_template, tool_properties(tool))
    if problem:
        return [problem]
    try:
        json.loads(template_render("json", tool.body_template, _sample_arguments(tool.parameters or {}, "a")))
    except PromptTemplateError as exc:
        return [f"The body template cannot be rendered: {exc}"]
    except ValueError:
        return [
            'The body template must produce JSON. Write values without quotes: {"id": {{ order_id }}} '
            "(each value is JSON-encoded)."
        ]
    return []


def custom_tool_errors(*, account_id: int, tool: CustomTool) -> FieldErrors:
    """Why `tool` (an unsaved or changed row) cannot be stored; {} when it can."""
    from captain.actions.services.tools import BUILTIN_TOOL_NAMES

    errors: FieldErrors = {}
    name = tool.name or ""
    if not re.match(CUSTOM_TOOL_NAME_PATTERN, name):
        errors["name"] = ["Lowercase letters, digits and underscores, starting with a letter (at most 48)."]
    elif name in BUILTIN_TOOL_NAMES or name.startswith("handoff_to_"):
        errors["name"] = [f"{name!r} is a built-in tool name or a handoff name; choose another."]
    elif CustomTool.objects.filter(account_id=account_id, name=name).exclude(pk=tool.pk).exists():
        errors["name"] = [f"This account already has a tool named {name!r}."]
    if not (tool.description or "").strip():
        errors["description"] = ["Say what the tool does and when to use it: the model reads it."]
    if tool.method not in CustomTool.Method.values:
        errors["method"] = [f"One of {', '.join(CustomTool.Method.values)}."]
    if tool.auth_type not in CustomTool.Auth.values:
        errors["auth_type"] = [f"One of {', '.join(CustomTool.Auth.values)}."]
    errors["parameters"] = _parameters_errors(
        tool.parameters if tool.parameters != {} else {"type": "object"}
    )
    if not errors["parameters"]:
        errors["url_template"] = _url_errors(tool)
        errors["body_template"] = _body_errors(tool)
        for field_name, extra in (("response_template", (RESPONSE_VARIABLE,)), ("confirmation_template", ())):
            source = getattr(tool, field_name)
            if source.strip():
                problem = template_problem(source, [*tool_properties(tool), *extra])
                errors[field_name] = [problem] if problem else []
    if tool.response_path.strip():
        try:
            jsonpath_parse(tool.response_path)
        except Exception as exc:  # the parser raises JsonPathParserError, but also lexer errors of its own
            errors["response_path"] = [f"Not a JSON path ({type(exc).__name__}); e.g. $.order.status"]
    errors["auth_header"] = _header_errors(tool.auth_header)
    errors["identity_header"] = _header_errors(tool.identity_header)
    if tool.auth_type == CustomTool.Auth.BASIC and not tool.auth_username:
        errors["auth_username"] = ["Basic authentication needs a user name."]
    if not 0 < float(tool.timeout_seconds or 0) <= MAX_TIMEOUT_SECONDS:
        errors["timeout_seconds"] = [f"More than 0 and at most {MAX_TIMEOUT_SECONDS:g} seconds."]
    if not 0 < int(tool.max_response_bytes or 0) <= MAX_RESPONSE_BYTES:
        errors["max_response_bytes"] = [f"More than 0 and at most {MAX_RESPONSE_BYTES} bytes (1 MB)."]
    return {k: v for k, v in errors.items() if v}


def custom_tool_clean(*, account_id: int, tool: CustomTool) -> None:
    """Raise ValidationError({field: [messages]}) unless `tool` may be stored."""
    raise_field_errors(custom_tool_errors(account_id=account_id, tool=tool))


def custom_tool_set_secret(tool: CustomTool, secret: str) -> None:
    """Store `secret` encrypted ("" clears it); the plain value is never kept or shown again."""
    tool.secret_encrypted = secret_encrypt(secret)
    if tool.pk:
        tool.save(update_fields=["secret_encrypted", "updated_at"])


def custom_tool_destination(tool: CustomTool) -> Origin | None:
    """The (scheme, host, port) the tool's requests go to: the URL template rendered with sample arguments (the
    save-time check makes sure no argument can change them)."""
    try:
        return url_origin(
            template_render("url", tool.url_template, _sample_arguments(tool.parameters or {}, "a"))
        )
    except PromptTemplateError:
        return None


def _stored_destination(tool: CustomTool) -> Origin | None:
    """The destination as stored, before this save's changes (the admin's form has already changed `tool`)."""
    stored = CustomTool.objects.filter(pk=tool.pk).first() if tool.pk else None
    return custom_tool_destination(stored) if stored else None


def custom_tool_save(
    *, account: Account, fields: Mapping[str, Any], secret: str | None = None, tool: CustomTool | None = None
) -> CustomTool:
    """Create, or update the given fields; `secret` None keeps the stored one, unless the URL now goes to another
    scheme, host or port (`destinations`): then it is dropped and must be given again. Raises ValidationError."""
    unknown = sorted(set(fields) - set(CUSTOM_TOOL_FIELDS))
    if unknown:
        raise TypeError(f"Not a custom tool field: {', '.join(unknown)}")
    tool = tool or CustomTool(account=account)
    before = _stored_destination(tool)
    for name, value in fields.items():
        setattr(tool, name, value)
    custom_tool_clean(account_id=account.pk, tool=tool)
    if secret is not None:
        tool.secret_encrypted = secret_encrypt(secret)
    elif tool.secret_encrypted and not secret_stays(before, custom_tool_destination(tool)):
        tool.secret_encrypted = ""  # the secret was given for another destination
    renamed_from = (
        CustomTool.objects.filter(pk=tool.pk).values_list("name", flat=True).first() if tool.pk else None
    )
    try:
        with transaction.atomic():
            tool.save()
    except IntegrityError as exc:  # a concurrent save took the name
        raise ValidationError({"name": [f"This account already has a tool named {tool.name!r}."]}) from exc
    _prompts_warm(account.pk, {tool.name, renamed_from or tool.name})
    return tool


def custom_tool_delete(*, tool: CustomTool) -> None:
    """Scenarios naming it stop offering it (unknown names are skipped when agents are built)."""
    tool.delete()
    _prompts_warm(tool.account_id, {tool.name})


def _prompts_warm(account_id: int, names: set[str]) -> None:
    """A tool's schema is part of the fixed prompt of every agent offered it (the chat template appends the tool
    schemas to it): the model server's cache no longer holds those assistants' prompts, so they are warmed again
    in the background, as after an assistant's or a scenario's edit. A tool offered nowhere warms nothing."""
    offered = Scenario.objects.filter(assistant__account_id=account_id).values_list("assistant_id", "tools")
    for assistant_id in sorted({a for a, tools in offered if isinstance(tools, list) and names & set(tools)}):
        prompt_warm_enqueue(assistant_id=assistant_id)


def custom_tool_names(*, account_id: int) -> list[str]:
    return list(CustomTool.objects.filter(account_id=account_id).values_list("name", flat=True))


# ---- the test call -----------------------------------------------------------------------------------------------


def custom_tool_test_call(
    tool: CustomTool, arguments: Mapping[str, Any], *, contact_identity: str | None = None
) -> dict[str, Any]:
    """The admin's and the API's test call: the request (credentials redacted) and the response or the error.
    Never raises for bad arguments or a bad answer. It really sends, POST included: it is a test of the API."""
    try:
        jsonschema.validate(dict(arguments), custom_tool_schema(tool))
    except jsonschema.ValidationError as exc:
        return Exchange(error=f"invalid arguments: {exc.message}").record()
    return custom_tool_exchange(tool, arguments, contact_identity).record()
