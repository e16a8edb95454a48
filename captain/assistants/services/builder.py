"""Checks on what builders write (assistant instructions, scenario instructions and tools, scenario keys),
shared by the assistant and scenario services. The admin, the API and the demo commands reach them only through
those services, so each rule is written once.

Builder-written instructions are Jinja template source. At save time they are checked statically (every branch
may use only the declared variables, `captain.prompts.variables`) and rendered with sample variables in the same
sandbox the runtime uses, so a template that would fail (or that tries to escape the sandbox, or to burn CPU with
`9**99999999`) is refused when it is written, not when a customer is waiting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from django.core.exceptions import ValidationError

from captain.actions.services.tools import SCENARIO_TOOL_NAMES
from captain.assistants.models import MAX_SCENARIO_KEY_LENGTH, TRIAGE_KEY, Assistant, validate_scenario_key
from captain.memory.models import MemoryVariable
from captain.prompts import PromptTemplateError, validate_builder_text

MAX_INSTRUCTION_CHARS = 20_000

FieldErrors = dict[str, list[str]]
"""Messages per field name, as a service raises them (`ValidationError(FieldErrors)`)."""


def raise_field_errors(errors: Mapping[str, list[str]]) -> None:
    """Raise the domain error a service reports: Django's `ValidationError` with messages per field, which the
    API turns into a 400 body of the same shape and the admin into form errors."""
    problems = {name: messages for name, messages in errors.items() if messages}
    if problems:
        raise ValidationError(problems)


def memory_names(assistant: Assistant) -> list[str]:
    """The assistant's memory variables, which its instructions may use as `{{ memory.<name> }}` (none while the
    assistant is being created)."""
    if assistant.pk is None:
        return []
    return list(MemoryVariable.objects.filter(assistant=assistant).values_list("name", flat=True))


def template_errors(text: str, *, memory_names: Iterable[str] = ()) -> list[str]:
    """[] when `text` passes the static template check and renders with sample variables; else why not."""
    if len(text) > MAX_INSTRUCTION_CHARS:
        return [f"At most {MAX_INSTRUCTION_CHARS} characters."]
    try:
        validate_builder_text(text, memory_names=memory_names)
    except PromptTemplateError as exc:
        return [f"Template error: {exc}"]
    except Exception as exc:
        # validate_builder_text converts the usual failures; anything else (e.g. `{{ 1/0 }}`) is still the
        # builder's template being wrong, never a server error.
        return [f"Template error: {type(exc).__name__}: {exc}"]
    return []


def tool_errors(tools: Iterable[str]) -> list[str]:
    unknown = [name for name in tools if name not in SCENARIO_TOOL_NAMES]
    if not unknown:
        return []
    return [
        f"Unknown tool(s): {', '.join(map(str, unknown))}. Allowed: {', '.join(SCENARIO_TOOL_NAMES)} "
        "(handoff_to_human is always available and is not listed)."
    ]


def scenario_key_from_title(title: str, *, taken: Iterable[str], position: int = 1) -> str:
    """A stable key for a new scenario: `Refunds & returns` -> `refunds_returns`, then `_2`, `_3`...

    Titles without ASCII letters or digits get `scenario_<position>`. The key is derived once, at creation.
    """
    taken = set(taken) | {TRIAGE_KEY}
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:MAX_SCENARIO_KEY_LENGTH].strip("_")
    if not base:
        base, n = "scenario", max(position, 1)
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = base[: MAX_SCENARIO_KEY_LENGTH - len(suffix)].rstrip("_") + suffix
    validate_scenario_key(candidate)
    return candidate
