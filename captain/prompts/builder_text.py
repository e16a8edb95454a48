"""Rendering builder-written text (assistant and scenario instructions), and validating it before it is saved."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from captain.prompts.sandbox import PromptTemplateError, env, render
from captain.prompts.static_check import check_builder_template
from captain.prompts.variables import memory_declared, sample_contexts


def render_builder_text(source: str, **variables: Any) -> str:
    """Render builder-written text as a sandboxed template; any failure is a PromptTemplateError.

    The static check runs here too, not only at save time: text stored before the check existed gets the same
    rules (and the same clear message) instead of failing only for the customers whose branch reaches the fault.
    """
    if "{" not in source:
        return source
    check_builder_template(source)
    try:
        return render(env.from_string(source), variables)
    except PromptTemplateError:
        raise
    except Exception as exc:  # any failure of builder text (incl. ZeroDivisionError) is a template error
        raise PromptTemplateError(f"{type(exc).__name__}: {exc}") from exc


def validate_builder_text(source: str, *, memory_names: Iterable[str] = ()) -> None:
    """Raise PromptTemplateError unless `source` passes the static check and renders with sample variables.

    The static check covers every branch; the sample renders (a contact with and without a name) stay as a
    second net for anything only evaluation would show, such as the sandbox refusing an operation.
    """
    with memory_declared(memory_names):
        for context in sample_contexts():
            render_builder_text(source, **context)
