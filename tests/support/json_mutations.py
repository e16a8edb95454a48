"""Hypothesis strategies that MUTATE real, valid JSON documents (provider fixtures, API bodies) into hostile ones.

A fuzz body starts from a document the server accepts, so most mutations land deep inside shapes the parser
actually walks, instead of being refused at the first key. Mutations: replace any node with any JSON value (text
with lone surrogates, NUL, RTL overrides, emoji, huge strings; huge and negative integers; floats; null; bools;
nested lists and objects), delete a key or item, add one, change a container's type, duplicate a key, write a
literal Python's encoder cannot produce (`1e999`, a 4,500-digit integer, a depth bomb), then at the byte level
truncate, prefix a BOM or append junk. The result is the exact bytes to sign and send.

Objects are kept as lists of pairs (`Obj`) so a key can appear twice, as JSON allows and hostile senders do.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st


@dataclass
class Obj:
    """A JSON object as written: its pairs in order, a key possibly repeated."""

    pairs: list[tuple[str, Any]]


@dataclass(frozen=True)
class Raw:
    """JSON text written as-is: literals `json.dumps` cannot produce from a Python value."""

    text: str


Path = tuple[int, ...]

# Text that has broken parsers and databases: NUL (PostgreSQL refuses it), lone surrogates (valid JSON escapes,
# not UTF-8), bidirectional overrides, joined emoji, a BOM, line separators, quotes and template syntax.
SPECIAL_TEXT = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff",
    "x\udc80y",
    "\udbff\ud800",
    "\u202etxt.exe\u202c",
    "\u200f\u0645\u0631\u062d\u0628\u0627",
    "\u05e9\u05dc\u05d5\u05dd",
    "\U0001f642",
    "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "\ufeff",
    "\u2028\u2029",
    "\\",
    '"',
    "\r\n",
    "0",
    "-1",
    "1e999",
    "null",
    "{{ 7*7 }}",
    "%s%n",
]
_ODD_CHARS = ["\x00", "\ud800", "\udfff", "\u202e", "\U0001f642", "\ufeff", "\x7f", "\u0085"]
# Units repeated into strings longer than every column and limit we have (200, 255, 4096, 10,000, 40,000).
_HUGE_UNITS = ["x", "\U0001f642", "\ud800", "\x00", "ab\u202e", "9", " "]
_HUGE_LENGTHS = [201, 256, 4_097, 10_001, 40_001]

SPECIAL_INTS = [
    0,
    -1,
    1,
    2**31,
    -(2**31) - 1,
    2**53 + 1,
    2**63,
    -(2**63) - 1,
    2**64,
    10**100,
    10**300,
    -(10**300),
]

# Literals only a hand-written body contains: an overflowing float (Python reads 1e999 as inf), an integer over
# Python's 4,300-digit conversion limit, negative zero, depth bombs under and over any sane limit.
RAW_LITERALS = [
    "1e999",
    "-1e999",
    "1E400",
    "-0",
    "1e-400",
    "123456789" * 500,
    "9" * 4_000,
    "NaN",
    "Infinity",
    "-Infinity",
    '"\\ud800"',
    '"\\u0000"',
    '"\\udfff\\ud800"',
    "[" * 25 + "]" * 25,
    '{"a":' * 30 + "1" + "}" * 30,
    "[" * 100_000 + "]" * 100_000,
]


# The replacements that break parsers most often, drawn three times as often as all other values: a container
# where a scalar is read (unhashable, no `.strip()`), the wrong scalar type, numbers a column or `int()` cannot
# hold, text a database cannot store, and a depth bomb.
TRAPS: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    2**63,
    10**300,
    [],
    [""],
    Obj([]),
    Obj([("", None)]),
    "",
    " ",
    "1",
    "\x00",
    "\ud800",
    "x" * 256,
    Raw("1e999"),
    Raw("-1e999"),
    Raw("9" * 4_500),
    Raw("[" * 25 + "]" * 25),
]


def traps() -> st.SearchStrategy[Any]:
    return st.sampled_from(TRAPS).map(copy.deepcopy)  # a fresh copy: mutations change containers in place


def texts(keywords: Sequence[str] = ()) -> st.SearchStrategy[str]:
    huge = st.builds(lambda unit, n: unit * n, st.sampled_from(_HUGE_UNITS), st.sampled_from(_HUGE_LENGTHS))
    alphabet = st.one_of(st.characters(), st.sampled_from(_ODD_CHARS))
    special = st.sampled_from(SPECIAL_TEXT)
    known = st.sampled_from(sorted(set(keywords))) if keywords else special
    # Weighted by repetition: the document's own words reach deeper branches; huge strings are costly and rarer.
    return st.one_of(known, known, special, special, st.text(alphabet=alphabet, max_size=30), huge)


def json_values(keywords: Sequence[str] = ()) -> st.SearchStrategy[Any]:
    """Any JSON value, nested lists and objects included (objects as `Obj`, possibly with repeated keys)."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(SPECIAL_INTS),
        # Finite mostly: NaN and Infinity are refused at the first byte, so they would hide everything else.
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([float("nan"), float("inf"), -0.0, 1e308, 5e-324]),
        st.sampled_from(RAW_LITERALS).map(Raw),
        texts(keywords),
    )
    keys = st.one_of(st.sampled_from(sorted(set(keywords)) or ["k"]), texts())
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.lists(st.tuples(keys, children), max_size=4).map(Obj),
        ),
        max_leaves=8,
    )


def to_tree(value: Any) -> Any:
    """A parsed JSON value with its objects as `Obj` (the form the mutations work on)."""
    if isinstance(value, dict):
        return Obj([(k, to_tree(v)) for k, v in value.items()])
    if isinstance(value, list):
        return [to_tree(v) for v in value]
    return value


def keywords_of(value: Any) -> list[str]:
    """Every key and short string value of a document: mutations reuse them to reach the shapes parsers know."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) <= 40:
            found.append(item)
    return found


def dumps(node: Any, *, ensure_ascii: bool) -> str:
    """JSON text of a tree. Recursive, which is fine: generated trees are shallow (depth bombs are `Raw`)."""
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, Obj):
        pairs = (
            f"{json.dumps(k, ensure_ascii=ensure_ascii)}:{dumps(v, ensure_ascii=ensure_ascii)}"
            for k, v in node.pairs
        )
        return "{" + ",".join(pairs) + "}"
    if isinstance(node, list):
        return "[" + ",".join(dumps(v, ensure_ascii=ensure_ascii) for v in node) + "]"
    # floats nan/inf come out as NaN/Infinity: non-standard JSON the server must refuse.
    return json.dumps(node, ensure_ascii=ensure_ascii)


def encode(node: Any, *, ensure_ascii: bool) -> bytes:
    """The body's bytes; without ensure_ascii a lone surrogate becomes invalid UTF-8, as a broken sender's would."""
    return dumps(node, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


def _paths(node: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every node's path, the root's excepted: replacing the whole document is the "replace_root" operation."""
    if prefix:
        yield prefix
    children = [v for _, v in node.pairs] if isinstance(node, Obj) else node if isinstance(node, list) else []
    for i, child in enumerate(children):
        yield from _paths(child, (*prefix, i))


def _get(root: list[Any], path: Path) -> Any:
    node = root[0]
    for i in path:
        node = node.pairs[i][1] if isinstance(node, Obj) else node[i]
    return node


def _set(root: list[Any], path: Path, value: Any) -> None:
    if not path:
        root[0] = value
        return
    parent, i = _get(root, path[:-1]), path[-1]
    if isinstance(parent, Obj):
        parent.pairs[i] = (parent.pairs[i][0], value)
    else:
        parent[i] = value


def _retyped(node: Any) -> Any:
    """The same content in another type: object <-> list, number <-> string, scalar -> a one-item container."""
    if isinstance(node, Obj):
        return [v for _, v in node.pairs]
    if isinstance(node, list):
        return Obj([(str(i), v) for i, v in enumerate(node)])
    if isinstance(node, bool) or node is None:
        return str(node).lower()
    if isinstance(node, int | float):
        return str(node)
    if isinstance(node, str):
        # An ASCII integer under Python's 4,300-digit limit becomes a number ("²".isdigit() is True too).
        return int(node) if re.fullmatch(r"-?[0-9]{1,4000}", node) else [node]
    return node


# Weighted by repetition: most mutations keep the document parseable, so they reach the channel's own checks.
OPERATIONS = (
    *("replace", "replace", "replace", "delete", "delete", "add", "add", "retype", "retype"),
    *("duplicate", "raw", "replace_root"),
)


def mutated_bodies(documents: Sequence[Any], keywords: Sequence[str] = ()) -> st.SearchStrategy[bytes]:
    """Bytes of one of `documents` (trees from `to_tree`) with one to four mutations applied, sometimes also
    damaged at the byte level (truncated, BOM, junk). Strategies are built once here: building them per draw
    cost more than the request under test."""
    # Traps three times out of four: with a few hundred examples, random values alone rarely hit the one field
    # and the one value that breaks a parser (measured: a seeded bug was found in 1 of 6 seeds, then 3 of 6).
    values = st.one_of(traps(), traps(), traps(), json_values(keywords))
    keys = st.one_of(st.sampled_from(sorted(set(keywords)) or ["k"]), texts())
    raw_literals = st.sampled_from(RAW_LITERALS)
    operations = st.sampled_from(OPERATIONS)
    damages = st.sampled_from(["none"] * 17 + ["truncate", "bom", "junk"])
    junk = st.sampled_from([b"}", b"\x00", b"\xff", b" x", b",", b"\n\n{}"])

    def mutate(draw: st.DrawFn, root: list[Any], operation: str) -> None:
        if operation == "add":
            containers = [p for p in [(), *_paths(root[0])] if isinstance(_get(root, p), Obj | list)]
            if containers:
                node = _get(root, draw(st.sampled_from(containers)))
                if isinstance(node, Obj):
                    node.pairs.insert(draw(st.integers(0, len(node.pairs))), (draw(keys), draw(values)))
                else:
                    node.insert(draw(st.integers(0, len(node))), draw(values))
                return
        # Scalars three times as likely as containers: parsers read scalars, and there are more of them to break.
        paths = [p for p in _paths(root[0]) for _ in range(1 if isinstance(_get(root, p), Obj | list) else 3)]
        # Inside the document; the document itself when asked for, or when nothing is left inside it.
        path = draw(st.sampled_from(paths)) if paths and operation != "replace_root" else ()
        node = _get(root, path)
        parent = _get(root, path[:-1]) if path else None
        if operation == "delete" and parent is not None:
            if isinstance(parent, Obj):
                del parent.pairs[path[-1]]
            else:
                del parent[path[-1]]
        elif operation == "retype":
            _set(root, path, _retyped(node))
        elif operation == "duplicate" and isinstance(parent, Obj):
            key = parent.pairs[path[-1]][0]
            # The repeat comes last or first: Python keeps the last one, other parsers the first.
            pair = (key, copy.deepcopy(node) if draw(st.booleans()) else draw(values))
            parent.pairs.insert(draw(st.sampled_from([0, len(parent.pairs)])), pair)
        elif operation == "raw":
            _set(root, path, Raw(draw(raw_literals)))
        else:
            _set(root, path, draw(values))

    @st.composite
    def tree(draw: st.DrawFn) -> Any:
        root = [copy.deepcopy(draw(st.sampled_from(documents)))]
        for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):
            mutate(draw, root, draw(operations))
        return root[0]

    @st.composite
    def body(draw: st.DrawFn) -> bytes:
        # Without ensure_ascii a lone surrogate is invalid UTF-8 (refused whole); with it, an escape to clean.
        raw = encode(draw(tree()), ensure_ascii=draw(st.sampled_from([True, True, True, False])))
        damage = draw(damages)
        if damage == "truncate" and raw:
            return raw[: draw(st.integers(0, len(raw) - 1))]
        if damage == "bom":
            return b"\xef\xbb\xbf" + raw
        if damage == "junk":
            return raw + draw(junk)
        return raw

    return body()
