"""The one Jinja2 environment every prompt is rendered in: sandboxed, strict, and bounded.

Builder-written text (assistant instructions, scenario instructions) may use variables such as
`{{ contact.name }}`; it is template source and therefore untrusted. Customer text is only ever a variable.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined, TemplateError, nodes
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
    return _bounded(env.get_template(name).render(**variables))


# Builder text needs substitution and simple conditions, nothing more. Allowing only these node types rules out
# loops, calls, assignments and arithmetic, so no template can run for minutes (nested loops produce no output,
# so a size cap alone would not stop them) or reach Python internals through a call.
_ALLOWED_NODES = (
    nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Getattr, nodes.Getitem, nodes.Const,
    nodes.If, nodes.CondExpr, nodes.And, nodes.Or, nodes.Not, nodes.Compare, nodes.Operand, nodes.Filter,
    nodes.Concat,
)  # fmt: skip
_ALLOWED_FILTERS = frozenset({"default", "d", "upper", "lower", "title", "capitalize", "trim", "e", "escape"})


def check_builder_template(source: str) -> None:
    """Raise PromptTemplateError unless `source` uses only substitution, conditions and harmless filters."""
    try:
        tree = env.parse(source)
    except TemplateError as exc:
        raise PromptTemplateError(f"{type(exc).__name__}: {exc}") from exc
    for node in [tree, *tree.find_all(nodes.Node)]:
        if not isinstance(node, _ALLOWED_NODES):
            raise PromptTemplateError(f"'{type(node).__name__}' is not allowed in instructions")
        if isinstance(node, nodes.Filter) and node.name not in _ALLOWED_FILTERS:
            raise PromptTemplateError(f"filter '{node.name}' is not allowed in instructions")
        if isinstance(node, nodes.Getattr | nodes.Name) and (
            getattr(node, "attr", "") or node_name(node)
        ).startswith("_"):
            raise PromptTemplateError("names starting with '_' are not allowed")


def node_name(node: nodes.Node) -> str:
    return getattr(node, "name", "") or ""


def render_builder_text(source: str, **variables: Any) -> str:
    """Render builder-written text as a sandboxed template; any failure is a PromptTemplateError."""
    if "{" not in source:
        return source
    check_builder_template(source)
    try:
        return _bounded(env.from_string(source).render(**variables))
    except PromptTemplateError:
        raise
    except Exception as exc:  # any failure of builder text (incl. ZeroDivisionError) is a template error
        raise PromptTemplateError(f"{type(exc).__name__}: {exc}") from exc


def _bounded(text: str) -> str:
    if len(text) > MAX_RENDERED_CHARS:
        raise PromptTemplateError(f"rendered prompt exceeds {MAX_RENDERED_CHARS} characters")
    return text
