"""What builder-written templates may refer to: the one declaration that the save-time check, the sample render
and the runtime context are all derived from, so a template that passes the check finds every variable it names.

A builder template sees a small nested mapping (`{{ contact.name }}`), never model objects: a model instance
would expose methods and relations (`{{ contact.name.format }}`, `{{ assistant.account }}`) that the static check
could not describe.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["string", "number", "boolean"]

_PYTHON_TYPES: dict[Kind, tuple[type, ...]] = {"string": (str,), "number": (int, float), "boolean": (bool,)}
_SAMPLES: dict[Kind, tuple[object, object]] = {
    "string": ("", "x"),
    "number": (0, 1),
    "boolean": (False, True),
}


@dataclass(frozen=True)
class PromptVariable:
    path: str
    """Dotted path as a template writes it: `contact.name`."""
    kind: Kind
    description: str


PROMPT_VARIABLES: tuple[PromptVariable, ...] = (
    PromptVariable("contact.name", "string", "the customer's name as the channel reported it (may be empty)"),
    PromptVariable("assistant.name", "string", "the assistant's name"),
    PromptVariable("assistant.product_name", "string", "the product the assistant supports (may be empty)"),
)

DECLARED_KINDS: dict[str, Kind] = {variable.path: variable.kind for variable in PROMPT_VARIABLES}

# The memory variables of the assistant whose text is being checked or rendered (`memory.<name>`, each a string:
# empty while nothing is known). They differ per assistant, so they are declared for the duration of one check.
_MEMORY: ContextVar[tuple[str, ...]] = ContextVar("prompt_memory_variables", default=())


@contextmanager
def memory_declared(names: Iterable[str]) -> Iterator[None]:
    """Within the block, `memory.<name>` is a declared string variable for each name."""
    token = _MEMORY.set(tuple(names))
    try:
        yield
    finally:
        _MEMORY.reset(token)


def declared_kinds() -> dict[str, Kind]:
    """The fixed variables plus the memory variables declared for the current check."""
    return {**DECLARED_KINDS, **{f"memory.{name}": "string" for name in _MEMORY.get()}}


def available_variables() -> str:
    """The declared paths as an error message or help text lists them."""
    return ", ".join(declared_kinds())


def is_namespace(path: str) -> bool:
    """True for a declared path's prefix such as `contact`: a mapping, not a value a template may print."""
    return any(declared.startswith(f"{path}.") for declared in declared_kinds())


def memory_context(values: Mapping[str, str]) -> dict[str, Any]:
    """The `memory` namespace a builder template renders with: every declared name, "" when unknown."""
    return {"memory": {name: values.get(name, "") for name in _MEMORY.get()}}


def prompt_context(values: Mapping[str, object]) -> dict[str, Any]:
    """Nest `{'contact.name': 'Ann', ...}` into `{'contact': {'name': 'Ann'}, ...}`.

    `values` must give exactly the declared paths with values of the declared kinds: the context the runtime
    renders with can then never offer more (or less) than the save-time check allowed. A mismatch is a bug in
    our code, not in a builder's template, hence ValueError/TypeError rather than PromptTemplateError.
    """
    missing = [path for path in DECLARED_KINDS if path not in values]
    extra = [path for path in values if path not in DECLARED_KINDS]
    if missing or extra:
        raise ValueError(
            f"prompt context does not match the declaration: missing {missing}, undeclared {extra}"
        )
    context: dict[str, Any] = {}
    for path, value in values.items():
        kind = DECLARED_KINDS[path]
        # bool is an int in Python; a flag passed as a number (or the reverse) is still a mistake.
        if not isinstance(value, _PYTHON_TYPES[kind]) or (kind != "boolean" and isinstance(value, bool)):
            raise TypeError(f"prompt variable {path} must be a {kind}, got {type(value).__name__}")
        *parents, leaf = path.split(".")
        node = context
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return context


def leaf_paths(context: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Dotted paths of the non-mapping values in a nested context (what a template could print)."""
    paths: set[str] = set()
    for key, value in context.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            paths |= leaf_paths(value, f"{path}.")
        else:
            paths.add(path)
    return paths


def sample_contexts() -> list[dict[str, Any]]:
    """Two contexts for a save-time render: every variable empty (a contact without a name), then every
    variable set, so both sides of `{% if contact.name %}` run at least once."""
    return [
        prompt_context({path: _SAMPLES[kind][which] for path, kind in DECLARED_KINDS.items()})
        | memory_context({name: str(_SAMPLES["string"][which]) for name in _MEMORY.get()})
        for which in (0, 1)
    ]
