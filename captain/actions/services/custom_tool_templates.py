"""Custom HTTP tools' templates: the builder's URL, body, confirmation and response templates, rendered with the
model's arguments. `custom_tools` checks them on save with sample arguments; `custom_tool_calls` renders them for
every call.

Templates follow the tool-template policy (`captain.prompts.policy`: an allowlist of constructs and filters,
checked on save and before every render) and are rendered in the one prompt sandbox (`captain.prompts.sandbox`,
through `overlay`: the same sandbox class, time and size bounds and StrictUndefined, only the output finalizer
differs). The arguments are always values, never template source: in the URL each `{{ value }}` is
percent-encoded with no safe character, so `../admin?x=1` stays one path segment; in the body each `{{ value }}`
is JSON-encoded, so a string cannot close its quotes. The URL's scheme and host are fixed by the builder (checked
on save), never an argument.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from jinja2 import Template

from captain.actions.models import CustomTool
from captain.prompts.policy import TOOL_TEMPLATE, check_policy, check_tool_template, parse
from captain.prompts.sandbox import PromptTemplateError, env, render
from captain.runtime.types import ToolFailed

logger = logging.getLogger(__name__)

RESPONSE_VARIABLE = "response"
"""The answer's parsed JSON in the response template; no parameter may take this name."""


def _url_value(value: Any) -> str:
    """An argument inside the URL: one percent-encoded value that cannot change the URL's structure."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    return quote(str(value), safe="")


def _json_value(value: Any) -> str:
    """An argument inside the body: a JSON value (a string cannot close its quotes)."""
    return json.dumps(value, ensure_ascii=False)


# Overlays of the one sandbox (same class, limits and StrictUndefined); only what `{{ ... }}` outputs differs.
_ENVIRONMENTS = {
    "url": env.overlay(finalize=_url_value),
    "json": env.overlay(finalize=_json_value),
    "text": env,
}


def template_problem(source: str, allowed: Iterable[str]) -> str | None:
    """Why `source` cannot be a tool template (None when it can): syntax, a construct the tool-template policy
    does not allow (calls, `**`, nested loops, width filters: `captain.prompts.policy`), or a variable that is not
    one of `allowed`."""
    try:
        check_tool_template(source, allowed)
    except PromptTemplateError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=512)
def _compiled(kind: str, source: str) -> Template:
    """`source` checked against the tool-template policy, then compiled. The check runs before every render, not
    only on save: a template stored before the policy existed gets the same rules."""
    check_policy(parse(source), TOOL_TEMPLATE)
    return _ENVIRONMENTS[kind].from_string(source)


def template_render(kind: str, source: str, variables: Mapping[str, Any]) -> str:
    """Render a tool template within the sandbox's time and size bounds; PromptTemplateError on any failure."""
    try:
        return render(_compiled(kind, source), variables)
    except PromptTemplateError:
        raise
    except Exception as exc:  # builder template failures of any kind (incl. the sandbox's SecurityError)
        raise PromptTemplateError(f"{type(exc).__name__}: {exc}") from exc


def tool_properties(tool: CustomTool) -> dict[str, Any]:
    properties = (tool.parameters or {}).get("properties") or {}
    return properties if isinstance(properties, dict) else {}


def tool_variables(tool: CustomTool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared parameter (None when not given, so optional ones may be tested with `if`)."""
    variables: dict[str, Any] = dict.fromkeys(tool_properties(tool))
    variables.update({k: v for k, v in arguments.items() if k in variables})
    return variables


def custom_tool_schema(tool: CustomTool) -> dict[str, Any]:
    """The JSON schema the runtime validates arguments against: the builder's, closed to extra arguments."""
    schema = dict(tool.parameters or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    return schema


def custom_tool_url(tool: CustomTool, arguments: Mapping[str, Any]) -> str:
    """The request URL with each argument percent-encoded; ToolFailed when the template cannot render."""
    try:
        return template_render("url", tool.url_template, tool_variables(tool, arguments)).strip()
    except PromptTemplateError as exc:
        raise ToolFailed(
            f"the tool's URL template cannot be rendered ({exc}); the tool needs fixing"
        ) from exc


def custom_tool_body(tool: CustomTool, arguments: Mapping[str, Any]) -> str | None:
    if tool.method == CustomTool.Method.GET:
        return None
    if not tool.body_template.strip():
        return json.dumps(dict(arguments), ensure_ascii=False)
    try:
        rendered = template_render("json", tool.body_template, tool_variables(tool, arguments))
    except PromptTemplateError as exc:
        raise ToolFailed(
            f"the tool's body template cannot be rendered ({exc}); the tool needs fixing"
        ) from exc
    try:
        json.loads(rendered)
    except ValueError as exc:
        raise ToolFailed(
            "the tool's body template does not produce valid JSON; the tool needs fixing"
        ) from exc
    return rendered


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text)[:300].rstrip(".!?")


def custom_tool_confirmation(tool: CustomTool, arguments: Mapping[str, Any]) -> str:
    """The question the customer confirms before a call that changes something runs."""
    if tool.confirmation_template.strip():
        try:
            return template_render(
                "text", tool.confirmation_template, tool_variables(tool, arguments)
            ).strip()
        except PromptTemplateError:
            logger.warning(
                "custom tool %s: confirmation template failed; using the default question", tool.pk
            )
    shown = ", ".join(f"{k}: {plain_text(v)}" for k, v in arguments.items())
    what = _first_sentence(tool.description) or tool.name
    return f"Please confirm: {what}{f' ({shown})' if shown else ''}. Reply yes to go ahead or no to cancel."


def plain_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
