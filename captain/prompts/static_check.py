"""The check of builder-written template source over its parsed AST, at save time and again before each render.

Rendering one sample cannot prove a template: only the branches the sample takes run, so
`{% if contact.name == 'x' %}ok{% else %}{{ contact.missing }}{% endif %}` passed and failed for real customers.
This check reads every branch instead: every variable must be a declared value (`variables.PROMPT_VARIABLES`),
and every comparison must be between kinds Python can compare.
"""

from __future__ import annotations

from collections.abc import Sequence

from jinja2 import nodes

from captain.prompts.policy import INSTRUCTIONS, TEXT_FILTERS, check_policy, parse
from captain.prompts.sandbox import PromptTemplateError
from captain.prompts.variables import available_variables, declared_kinds, is_namespace

_DEFAULT_FILTERS = frozenset({"default", "d"})

Kinds = frozenset[str]
"""What an expression may evaluate to: a subset of {"string", "number", "boolean", "none"}."""

_STRING: Kinds = frozenset({"string"})
_BOOLEAN: Kinds = frozenset({"boolean"})
_NUMERIC = frozenset({"number", "boolean"})  # Python orders True/False among numbers
_OPERATORS = {
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "lteq": "<=",
    "gt": ">",
    "gteq": ">=",
    "in": "in",
    "notin": "not in",
}


def check_builder_template(source: str) -> None:
    """Raise PromptTemplateError unless `source` uses only substitution, conditions and harmless filters, over
    declared variables only, in every branch."""
    tree = parse(source)
    # Builder text needs substitution and simple conditions, nothing more: no loops, calls, assignments or
    # arithmetic, so no template can run for minutes or reach Python internals through a call.
    check_policy(tree, INSTRUCTIONS)
    _check_statements(tree.body)


def _check_statements(body: Sequence[nodes.Node]) -> None:
    for node in body:
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if not isinstance(child, nodes.TemplateData):
                    _kinds(child)
        elif isinstance(node, nodes.If):  # test, then every branch, taken or not
            _kinds(node.test)
            _check_statements(node.body)
            _check_statements(node.elif_)
            _check_statements(node.else_)
        else:  # the allowlist lets no other statement through; refuse rather than skip if that ever changes
            raise PromptTemplateError(f"'{type(node).__name__}' is not allowed in instructions")


def _kinds(node: nodes.Node) -> Kinds:
    """Check one expression (all its operands) and return what it may evaluate to."""
    if isinstance(node, nodes.Const):
        return frozenset({_const_kind(node.value)})
    if isinstance(node, nodes.Name | nodes.Getattr | nodes.Getitem):
        return frozenset({_variable_kind(node)})
    if isinstance(node, nodes.Filter):
        return _filter_kinds(node)
    if isinstance(node, nodes.CondExpr):
        if node.expr2 is None:
            # Without an else, a false test yields an undefined value, which StrictUndefined refuses to print.
            raise PromptTemplateError("an inline 'if' needs an 'else': write {{ a if condition else b }}")
        _kinds(node.test)
        return _kinds(node.expr1) | _kinds(node.expr2)
    if isinstance(node, nodes.And | nodes.Or):  # `a or b` is a or b, not a boolean
        return _kinds(node.left) | _kinds(node.right)
    if isinstance(node, nodes.Not):
        _kinds(node.node)
        return _BOOLEAN
    if isinstance(node, nodes.Concat):
        for operand in node.nodes:
            _kinds(operand)
        return _STRING
    if isinstance(node, nodes.Compare):
        left = _kinds(node.expr)
        for comparison in node.ops:
            right = _kinds(comparison.expr)
            _check_comparison(comparison.op, left, right)
            left = right  # a < b < c compares a with b, then b with c
        return _BOOLEAN
    raise PromptTemplateError(f"'{type(node).__name__}' is not allowed in instructions")


def _const_kind(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise PromptTemplateError(f"the constant {value!r} is not allowed in instructions")


def _filter_kinds(node: nodes.Filter) -> Kinds:
    if node.node is None:  # only a {% filter %} block has no operand, and the allowlist refuses those
        raise PromptTemplateError("filter blocks are not allowed in instructions")
    value = _kinds(node.node)
    args = [_kinds(arg) for arg in node.args]
    for extra in (node.dyn_args, node.dyn_kwargs):
        if extra is not None:
            _kinds(extra)
    if node.name in _DEFAULT_FILTERS:
        # The value, or the fallback (`default()` alone falls back to an empty string).
        return value | (args[0] if args else _STRING)
    return _STRING  # upper, lower, title, capitalize, trim, escape: text of anything


def _check_comparison(op: str, left: Kinds, right: Kinds) -> None:
    if op in ("eq", "ne"):
        return  # == and != accept any two values
    if op not in _OPERATORS:
        raise PromptTemplateError(f"comparison '{op}' is not allowed in instructions")
    for a in sorted(left):
        for b in sorted(right):
            if not _comparable(op, a, b):
                raise PromptTemplateError(f"cannot compare a {a} with a {b} using '{_OPERATORS[op]}'")


def _comparable(op: str, a: str, b: str) -> bool:
    if op in ("in", "notin"):  # only text in text: 3 in 'abc' and 'a' in 3 both raise TypeError
        return a == b == "string"
    return {a, b} <= _NUMERIC or a == b == "string"  # <, <=, >, >=


def _variable_kind(node: nodes.Node) -> str:
    """The declared kind of a variable reference such as `contact.name` or `contact['name']`."""
    parts = _path(node)
    dotted = ".".join(parts)
    declared = declared_kinds()
    if dotted in declared:
        return declared[dotted]
    available = f"available: {available_variables()}"
    for end in range(len(parts) - 1, 0, -1):
        value = ".".join(parts[:end])
        if value in declared:
            # e.g. contact.name.format: the sandbox would print a bound method's repr into the prompt.
            kind, attr = declared[value], parts[end]
            hint = f" (for the filter write {{{{ {value}|{attr} }}}})" if attr in TEXT_FILTERS else ""
            raise PromptTemplateError(
                f"unknown variable '{dotted}': {value} is a {kind} and has no attribute '{attr}'{hint}; {available}"
            )
    if is_namespace(dotted):
        raise PromptTemplateError(f"'{dotted}' is a group of variables, not a value; {available}")
    raise PromptTemplateError(f"unknown variable '{dotted}'; {available}")


def _path(node: nodes.Node) -> list[str]:
    """`contact.name` and `contact['name']` both as ['contact', 'name']."""
    parts: list[str] = []
    while True:
        if isinstance(node, nodes.Name):
            parts.append(node.name)
            return parts[::-1]
        if isinstance(node, nodes.Getattr):
            parts.append(node.attr)
            node = node.node
        elif isinstance(node, nodes.Getitem):
            if not (isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)):
                raise PromptTemplateError(
                    "only a quoted name may follow '[' (as in contact['name']); "
                    f"available: {available_variables()}"
                )
            parts.append(node.arg.value)
            node = node.node
        else:  # 'abc'.upper, ('a' ~ 'b')['x']: attributes of anything but a declared variable
            raise PromptTemplateError(
                f"'.' and '[...]' may only follow a variable name; available: {available_variables()}"
            )
