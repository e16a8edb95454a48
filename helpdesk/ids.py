"""Ids that arrive in a URL: a path segment or a query parameter, checked against a 64-bit primary key's range
before any lookup.

Every primary key is a 64-bit signed integer (BigAutoField; SQLite's INTEGER). Django's `<int:...>` takes any
run of digits, and SQLite cannot even bind a value above 2**63-1: the lookup raised OverflowError, a 500, on
every account-scoped route (PostgreSQL answered 404). So a path takes `<id:...>` (registered here, on import:
each URL module that uses it imports this module first), which matches at most 19 digits and refuses 0 and
anything above `MAX_ID`; Django then finds no route, a 404 (JSON under /api/, `config.urls.not_found`). An id a
client filters by (a query parameter, a body's list of ids) uses `IdFilterField`, a 400 that names the parameter.
"""

from __future__ import annotations

from typing import Any

from django.urls import register_converter
from rest_framework import serializers

MAX_ID = 2**63 - 1
"""The largest value of a 64-bit signed primary key (SQLite INTEGER, PostgreSQL bigint)."""


class IdConverter:
    """`<id:name>`: a positive integer up to `MAX_ID`; anything else matches no route (404)."""

    # 19 digits bound the work and the value's size; the range check is in `to_python`.
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= MAX_ID:
            raise ValueError(f"{value} is not a 64-bit id")  # Django's resolver: "no match"
        return number

    def to_url(self, value: Any) -> str:
        return str(int(value))


register_converter(IdConverter, "id")


class IdFilterField(serializers.IntegerField):
    """An id a client filters by, in a query (`?inbox=`) or a body (`{"ids": [...]}`): a positive integer up to
    `MAX_ID`, else a 400 naming the parameter."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)
