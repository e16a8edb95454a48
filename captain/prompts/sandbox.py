"""The one Jinja2 environment every prompt and builder template is rendered in: sandboxed, strict, and bounded.

Builder-written text (assistant and scenario instructions, custom tool templates) is template source and therefore
untrusted: `policy` decides what it may contain before it is stored and again before each render; this module makes
every render bounded anyway, in case a template gets past the policy (or was stored before it existed):

- every operation that can make a huge value is bounded before it runs: `**` and `*` by the size of the result (a
  chain such as `((9**100)**100)**100` is refused at the second step, where the stock sandbox computed a number
  of 95 million digits while holding the GIL), `%` string formatting is refused (`'%50000000d' % 1`), and the
  filters that take a width or a repeat (`center`, `indent`, `format`, `wordwrap`, `replace`, `join`, `tojson`,
  `batch`, `slice`) refuse sizes that would exceed the output cap;
- `render` streams the output and stops at `MAX_RENDERED_CHARS`, and every intercepted operation and every output
  chunk checks a CPU-time deadline (`RENDER_SECONDS`), so no render holds a web request's worker or a Celery
  worker for longer than that.
"""

from __future__ import annotations

import contextvars
import functools
import operator
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined, Template
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATE_DIR = Path(__file__).parent / "templates"
MAX_POWER_EXPONENT = 100
MAX_NUMBER_BITS = 4_096
"""The largest integer `**` or `*` may produce (about 1,233 decimal digits): computing it takes microseconds."""
MAX_PRODUCT_SIZE = 10_000  # characters or list items a `*` may produce
MAX_RENDERED_CHARS = 60_000
MAX_FILTER_WIDTH = 1_000
"""The widest `center`/`indent`/`wordwrap` width and the most `batch`/`slice` items a template may ask for."""
RENDER_SECONDS = 0.5
"""CPU time one render may take: the rendering thread's own CPU time (`time.thread_time`), so a render on a busy
machine is not cut short for waiting its turn; checked at every intercepted operation and output chunk."""

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "prompt_render_deadline", default=None
)


class PromptTemplateError(ValueError):
    """A builder-written template that cannot be rendered (syntax, unknown variable, forbidden operation)."""


def _check_deadline() -> None:
    deadline = _deadline.get()
    if deadline is not None and time.thread_time() > deadline:
        raise SecurityError(f"the template used more than {RENDER_SECONDS:g} s of CPU time to render")


def _bits(value: Any) -> float:
    """log2 of an integer's magnitude (0 for 0 and 1); floats are bounded by their type."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0.0
    return float(abs(value).bit_length())


def _checked_power(left: Any, right: Any) -> Any:
    if isinstance(right, int | float) and abs(right) > MAX_POWER_EXPONENT:
        raise SecurityError("exponent too large")
    if isinstance(right, int | float) and _bits(left) * abs(right) > MAX_NUMBER_BITS:
        raise SecurityError("number too large")
    return operator.pow(left, right)


def _checked_product(left: Any, right: Any) -> Any:
    for seq, count in ((left, right), (right, left)):
        repeats = isinstance(seq, str | list | tuple) and isinstance(count, int)
        if repeats and len(seq) * count > MAX_PRODUCT_SIZE:
            raise SecurityError("repetition too large")
    if _bits(left) + _bits(right) > MAX_NUMBER_BITS:
        raise SecurityError("number too large")
    return operator.mul(left, right)


def _checked_modulo(left: Any, right: Any) -> Any:
    if isinstance(left, str | bytes):
        # printf-style widths are unbounded ('%50000000d' % 1): builder text has filters for formatting.
        raise SecurityError("'%' string formatting is not allowed")
    return operator.mod(left, right)


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "**": _checked_power,
    "*": _checked_product,
    "%": _checked_modulo,
}


class PromptSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox where no single operation can run long or make a huge value, and every
    operation checks the render's deadline."""

    intercepted_binops = frozenset(_BINOPS)

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        _check_deadline()
        if operator_name in _BINOPS:
            return _BINOPS[operator_name](left, right)
        return super().call_binop(context, operator_name, left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        _check_deadline()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _check_deadline()
        return super().getitem(obj, argument)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        return super().call(__context, __obj, *args, **kwargs)


# ---- filters with a width or a repeat ------------------------------------------------------------------------


def _refuse_width(name: str, width: Any) -> None:
    if isinstance(width, int | float) and abs(width) > MAX_FILTER_WIDTH:
        raise SecurityError(f"'{name}' width {width} is larger than {MAX_FILTER_WIDTH}")
    if isinstance(width, str) and len(width) > MAX_FILTER_WIDTH:
        raise SecurityError(f"'{name}' text argument is longer than {MAX_FILTER_WIDTH} characters")


def _refuse_size(name: str, size: float) -> None:
    if size > MAX_RENDERED_CHARS:
        raise SecurityError(f"'{name}' would produce more than {MAX_RENDERED_CHARS} characters")


def _bounded_filter(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """`original` with its size-making arguments checked before it runs (Jinja calls filters directly, not
    through the sandbox's `call`, so they are wrapped here)."""

    @functools.wraps(original)
    def bounded_filter(*args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        _check_filter_arguments(name, args, kwargs)
        return original(*args, **kwargs)

    return bounded_filter


def _argument(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


# filter -> the (position, keyword) of its width-like arguments, as Jinja 3.1 declares them (filters that take the
# environment or eval context get it as the first positional argument).
_WIDTHS: dict[str, tuple[tuple[int, str], ...]] = {
    "center": ((1, "width"),),
    "indent": ((1, "width"),),
    "wordwrap": ((2, "width"), (4, "wrapstring")),
    "batch": ((1, "linecount"),),
    "slice": ((1, "slices"),),
    "tojson": ((2, "indent"),),
}


def _check_filter_arguments(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    if name == "format":
        raise SecurityError("the 'format' filter is not allowed (its widths are unbounded)")
    for index, keyword in _WIDTHS.get(name, ()):
        _refuse_width(name, _argument(args, kwargs, index, keyword, None))
    if name == "replace":  # replace(eval_ctx, s, old, new, count=None)
        text, old, new = (
            str(_argument(args, kwargs, i, n, "")) for i, n in ((1, "s"), (2, "old"), (3, "new"))
        )
        copies = text.count(old) if old else len(text) + 1
        _refuse_size(name, len(text) + copies * len(new))
    if name == "join":  # join(eval_ctx, value, d="", attribute=None)
        items, separator = _argument(args, kwargs, 1, "value", ()), _argument(args, kwargs, 2, "d", "")
        count = len(items) if hasattr(items, "__len__") else MAX_RENDERED_CHARS
        _refuse_size(name, count * len(str(separator)))


_SIZED_FILTERS = ("center", "format", "indent", "wordwrap", "replace", "join", "tojson", "batch", "slice")


def _environment() -> PromptSandbox:
    sandbox = PromptSandbox(
        loader=FileSystemLoader(TEMPLATE_DIR),
        undefined=StrictUndefined,
        autoescape=False,  # prompts are plain text for a model, not HTML
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    for name in _SIZED_FILTERS:
        sandbox.filters[name] = _bounded_filter(name, sandbox.filters[name])
    return sandbox


env = _environment()


@contextmanager
def _render_budget() -> Iterator[None]:
    token = _deadline.set(time.thread_time() + RENDER_SECONDS)
    try:
        yield
    finally:
        _deadline.reset(token)


def render(template: Template, variables: Mapping[str, Any]) -> str:
    """Render `template` within the time budget and the output cap; SecurityError (a TemplateError) when either is
    exceeded. Output is streamed, so a template that prints too much stops at the cap instead of being built
    whole first."""
    pieces: list[str] = []
    size = 0
    with _render_budget():
        chunks: Iterable[str] = template.generate(**variables)
        for chunk in chunks:
            size += len(chunk)
            if size > MAX_RENDERED_CHARS:
                raise PromptTemplateError(f"rendered text exceeds {MAX_RENDERED_CHARS} characters")
            _check_deadline()
            pieces.append(chunk)
    return "".join(pieces)


def render_file(name: str, **variables: Any) -> str:
    """Render one of our own prompt templates."""
    return render(env.get_template(name), variables)
