"""The one Jinja2 environment every prompt is rendered in: sandboxed, strict, and bounded.

Builder-written text (assistant instructions, scenario instructions) may use variables such as
`{{ contact.name }}`; it is template source and therefore untrusted: `static_check` decides what it may contain,
`builder_text` renders it. Customer text is only ever a variable.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATE_DIR = Path(__file__).parent / "templates"
MAX_POWER_EXPONENT = 100
MAX_PRODUCT_SIZE = 10_000  # characters or list items a `*` may produce
MAX_RENDERED_CHARS = 60_000


class PromptSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with `**` and `*` bounded: the stock sandbox hangs on `{{ 9**99999999 }}`."""

    intercepted_binops = frozenset({"**", "*"})

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "**":
            if isinstance(right, int | float) and abs(right) > MAX_POWER_EXPONENT:
                raise SecurityError("exponent too large")
            return operator.pow(left, right)
        if operator_name == "*":
            for seq, count in ((left, right), (right, left)):
                repeats = isinstance(seq, str | list | tuple) and isinstance(count, int)
                if repeats and len(seq) * count > MAX_PRODUCT_SIZE:
                    raise SecurityError("repetition too large")
            if isinstance(left, int) and isinstance(right, int) and max(abs(left), abs(right)) > 10**12:
                raise SecurityError("number too large")
            return operator.mul(left, right)
        return super().call_binop(context, operator_name, left, right)


env = PromptSandbox(
    loader=FileSystemLoader(TEMPLATE_DIR),
    undefined=StrictUndefined,
    autoescape=False,  # prompts are plain text for a model, not HTML
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)


class PromptTemplateError(ValueError):
    """A builder-written template that cannot be rendered (syntax, unknown variable, forbidden operation)."""


def render_file(name: str, **variables: Any) -> str:
    """Render one of our own prompt templates."""
    return bounded(env.get_template(name).render(**variables))


def bounded(text: str) -> str:
    """`text`, unless it is too long to be a prompt."""
    if len(text) > MAX_RENDERED_CHARS:
        raise PromptTemplateError(f"rendered prompt exceeds {MAX_RENDERED_CHARS} characters")
    return text
