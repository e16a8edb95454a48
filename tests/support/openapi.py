"""The REST API's generated OpenAPI schema, and a check that a real answer is what the schema says it is.

`assert_documented(response, path=..., method=...)` validates the body of a real DRF test-client response against
the schema the operation documents for that status code (a status it does not document fails too). Validation is
OpenAPI 3.0's (`nullable`, `readOnly`, formats) with ECMA-262 regular expressions in Unicode mode, as JSON Schema
asks: what a generated client in another language would check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import regress
from drf_spectacular.generators import SchemaGenerator
from jsonschema import FormatChecker, ValidationError
from jsonschema.validators import extend
from openapi_schema_validator import OAS30Validator, oas30_format_checker


@cache
def api_schema() -> dict[str, Any]:
    """The schema /api/schema/ serves (generated once per test session)."""
    return SchemaGenerator().get_schema(request=None, public=True)


def operation(path: str, method: str) -> dict[str, Any]:
    return api_schema()["paths"][path][method.lower()]


def component(name: str) -> dict[str, Any]:
    return api_schema()["components"]["schemas"][name]


def _unicode_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if isinstance(instance, str) and regress.Regex(pattern, "u").find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = extend(OAS30Validator, {"pattern": _unicode_pattern})
# Formats are checked too, as Schemathesis does; `uri` (absolute: a scheme first) is not in OpenAPI's own list.
_FORMATS = FormatChecker()
_FORMATS.checkers = {**oas30_format_checker.checkers}
_FORMATS.checks("uri")(
    lambda value: not isinstance(value, str) or bool(re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value))
)


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    """What is wrong with `instance` as a value of `schema` ($refs resolved in the API's components)."""
    rooted = {**schema, "components": api_schema()["components"]}
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _Validator(rooted, format_checker=_FORMATS).iter_errors(instance)
    ]


def documented_body(*, path: str, method: str, status: int) -> dict[str, Any]:
    responses = operation(path, method)["responses"]
    assert str(status) in responses, (
        f"{method.upper()} {path} does not document {status}: {sorted(responses)}"
    )
    return responses[str(status)]


def assert_documented(response: Any, *, path: str, method: str) -> None:
    """The response's status is documented for the operation, and its JSON body matches that status's schema."""
    documented = documented_body(path=path, method=method, status=response.status_code)
    content = documented.get("content")
    if content is None:
        assert not response.content, f"{response.status_code} documents no body, got {response.content!r}"
        return
    errors = schema_errors(content["application/json"]["schema"], response.json())
    assert errors == [], f"{method.upper()} {path} {response.status_code}: {errors}"
