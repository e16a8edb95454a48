"""What builder-written template source may contain: one allowlist of node types, filters and tests per kind of
template, checked when the text is saved and again before every render.

Two kinds, because they need different things:
- instructions (assistant and scenario text): substitution and simple conditions over declared variables
  (`static_check` adds the variable and comparison rules);
- tool templates (a custom tool's URL, body, response and confirmation): also one level of loops over an answer's
  lists, attribute access into the answer, and plain arithmetic.

Neither allows calls, `**`, `%`, assignments, macros, includes, nested loops, or a filter that takes a width or a
repeat count (`center`, `indent`, `format`, `wordwrap`, `batch`, `slice`): each of those made the server build a
huge value or loop for minutes inside a save request. The sandbox bounds every render anyway
(`sandbox.render`); this check is what gives a builder a clear message at save time.

Shortcut and canned-response texts are not Jinja: they are `{name}` placeholders substituted once
(`captain.actions.services.shortcuts.render_template`, `helpdesk.services.canned`), with no expression language at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jinja2 import TemplateError, meta, nodes

from captain.prompts.sandbox import PromptTemplateError, env


@dataclass(frozen=True)
class TemplatePolicy:
    label: str
    """How an error message names the template: "instructions", "a tool template"."""
    node_types: tuple[type[nodes.Node], ...]
    filters: frozenset[str]
    tests: frozenset[str]


_TEXT_NODES: tuple[type[nodes.Node], ...] = (
    nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Getattr, nodes.Getitem, nodes.Const,
    nodes.If, nodes.CondExpr, nodes.And, nodes.Or, nodes.Not, nodes.Compare, nodes.Operand, nodes.Filter,
    nodes.Concat,
)  # fmt: skip
TEXT_FILTERS = frozenset({"default", "d", "upper", "lower", "title", "capitalize", "trim", "e", "escape"})

INSTRUCTIONS = TemplatePolicy(
    label="instructions",
    node_types=_TEXT_NODES,
    filters=TEXT_FILTERS,
    tests=frozenset(),
)

_TOOL_NODES: tuple[type[nodes.Node], ...] = (
    *_TEXT_NODES, nodes.For, nodes.Test, nodes.Keyword, nodes.List, nodes.Tuple, nodes.Slice,
    nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Neg, nodes.Pos,
)  # fmt: skip
_TOOL_FILTERS = TEXT_FILTERS | {
    "length", "count", "first", "last", "join", "int", "float", "round", "abs", "string", "tojson",
    "urlencode", "replace", "truncate", "list", "sort", "unique", "sum", "min", "max", "map", "select",
    "reject", "selectattr", "rejectattr", "dictsort", "items", "wordcount", "striptags",
}  # fmt: skip
_TOOL_TESTS = frozenset({
    "defined", "undefined", "none", "number", "integer", "float", "string", "boolean", "true", "false",
    "mapping", "sequence", "iterable", "even", "odd", "divisibleby", "eq", "ne", "lt", "le", "gt", "ge", "in",
})  # fmt: skip

TOOL_TEMPLATE = TemplatePolicy(
    label="a tool template", node_types=_TOOL_NODES, filters=_TOOL_FILTERS, tests=_TOOL_TESTS
)

_NODE_NAMES: dict[type[nodes.Node], str] = {
    nodes.Pow: "'**' (power)",
    nodes.Mod: "'%' (modulo or string formatting)",
    nodes.Call: "a call such as range() or a method ('Call')",
}
"""How the refusal names a construct a builder may not recognise by its node type."""

_TOOL_TEMPLATE_WIDTHS = frozenset({"tojson"})
"""Allowed filters whose optional argument is a width: allowed without it only (`tojson`, not `tojson(9)`)."""


def parse(source: str) -> nodes.Template:
    try:
        return env.parse(source)
    except TemplateError as exc:
        raise PromptTemplateError(f"template syntax error ({type(exc).__name__}): {exc}") from exc


def check_policy(tree: nodes.Template, policy: TemplatePolicy) -> None:
    """Raise PromptTemplateError naming the first construct of `tree` that `policy` does not allow."""
    where = f"in {policy.label}"
    for node in [tree, *tree.find_all(nodes.Node)]:
        if not isinstance(node, policy.node_types):
            shown = _NODE_NAMES.get(type(node), f"'{type(node).__name__}'")
            raise PromptTemplateError(f"{shown} is not allowed {where}")
        if isinstance(node, nodes.Filter):
            _check_filter(node, policy, where)
        if isinstance(node, nodes.Test) and node.name not in policy.tests:
            raise PromptTemplateError(f"test '{node.name}' is not allowed {where}")
        if isinstance(node, nodes.For) and (node.recursive or any(True for _ in node.find_all(nodes.For))):
            raise PromptTemplateError(f"loops inside loops are not allowed {where}")
        if _private_name(node):
            raise PromptTemplateError("names starting with '_' are not allowed")


def _check_filter(node: nodes.Filter, policy: TemplatePolicy, where: str) -> None:
    if node.name not in policy.filters:
        raise PromptTemplateError(f"filter '{node.name}' is not allowed {where}")
    if node.name in _TOOL_TEMPLATE_WIDTHS and (node.args or node.kwargs):
        raise PromptTemplateError(f"filter '{node.name}' takes no arguments {where}")
    if node.name == "map" and node.args:
        # map('upper') applies another filter by name: that name must be allowed too.
        name = node.args[0]
        if not (isinstance(name, nodes.Const) and name.value in policy.filters):
            raise PromptTemplateError(f"map() may only apply an allowed filter {where}")
        if name.value in _TOOL_TEMPLATE_WIDTHS and len(node.args) > 1:
            raise PromptTemplateError(f"filter '{name.value}' takes no arguments {where}")
    if node.dyn_args is not None or node.dyn_kwargs is not None:
        raise PromptTemplateError(f"'*' and '**' arguments are not allowed {where}")


def _private_name(node: nodes.Node) -> bool:
    if isinstance(node, nodes.Name):
        return node.name.startswith("_")
    if isinstance(node, nodes.Getattr):
        return node.attr.startswith("_")
    # x['_y'] is the same lookup as x._y and gets the same answer.
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        return isinstance(node.arg.value, str) and node.arg.value.startswith("_")
    return False


def check_tool_template(source: str, allowed: Iterable[str]) -> None:
    """Raise PromptTemplateError unless `source` is a tool template over the variables `allowed` only."""
    tree = parse(source)
    check_policy(tree, TOOL_TEMPLATE)
    unknown = sorted(meta.find_undeclared_variables(tree) - set(allowed))
    if unknown:
        raise PromptTemplateError(f"unknown variable(s): {', '.join(unknown)} (use the declared parameters)")
