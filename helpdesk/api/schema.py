"""The REST API's OpenAPI schema class (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]): drf-spectacular's, plus the error
answers each operation can give, so a client generated from /api/schema/ knows them.

Every error body is DRF's (helpdesk.api.exceptions.api_exception_handler): `{"detail": "..."}`, or for a refused
body or query an object of field -> messages (`ValidationErrorResponse`). Each operation documents only the codes
it can answer, read from its view and its own schema:

- 401: the view authenticates (a wrong token is refused even where anonymous callers may read);
- 403: a permission that can refuse the caller, or an unsafe method under session authentication (CSRF);
- 404: an id in the path (another account's rows are "not found"), or a `format` to negotiate;
- 400: a request body, or a query parameter that is validated (pagination's `limit`/`offset` never are: DRF
  falls back to the defaults);
- 415: a request body (a content type no parser reads);
- 429: the view is throttled.

An operation without a body that refuses its objects' state (a document not ready, a name not declared) says so
with `responses={..., **REFUSES_400}`: an error code documented without a body gets the shared one. 405 is never
documented: it answers only methods an operation does not have.

Fields say what the server accepts: a Python regular expression's `\\w` and `\\d` (Unicode in Python, ASCII in
ECMA-262, the dialect of OpenAPI's `pattern`) are spelt out as the characters they match, and a string that may
not be blank has `minLength` 1 and, when DRF trims it, a pattern refusing whitespace only.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.validators import RegexValidator
from django.db import models
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import SAFE_METHODS, AllowAny, IsAuthenticated

from .auth import IsAccountAdminOrReadOnly, IsAccountMember

ERROR = "ErrorResponse"
VALIDATION_ERROR = "ValidationErrorResponse"

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string", "description": "What went wrong, for a person to read."}},
    "required": ["detail"],
}
VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "description": "Each refused field (`non_field_errors`: the body as a whole) -> its messages; a nested "
    "object's fields as an object of the same shape, a list's items by position. A body that could not be "
    'read at all: `{"detail": "..."}`.',
    "additionalProperties": {
        "anyOf": [
            {"type": "string"},
            {
                "type": "array",
                "items": {
                    "anyOf": [{"type": "string"}, {"$ref": f"#/components/schemas/{VALIDATION_ERROR}"}]
                },
            },
            {"$ref": f"#/components/schemas/{VALIDATION_ERROR}"},
        ]
    },
}

DESCRIPTIONS = {
    "400": "The body or a query parameter was refused.",
    "401": "No credentials, or a token or session that is not valid.",
    "403": "The caller may not do this here (an agent where administrators only may; a failed CSRF check).",
    "404": "No such object in an account the caller is a member of.",
    "415": "A content type no parser reads: send JSON.",
    "429": "Too many requests: the `Retry-After` header says when to try again.",
}

REFUSES_400 = {400: OpenApiResponse(description=DESCRIPTIONS["400"])}
"""For `extend_schema(responses=...)` of an operation that answers 400 without having a body or a query."""

# Query parameters that never answer 400: pagination falls back to its defaults; the schema view's `format`
# answers 404 when unknown, its `lang` falls back to the default language.
UNVALIDATED_QUERY = {"limit", "offset", "format", "lang"}
# Policies that never answer 403: an anonymous caller gets 401 (the token authenticator asks for credentials),
# a non-member 404.
NEVER_FORBID = (AllowAny, IsAuthenticated, IsAccountMember)


# A character that is not whitespace to Python's `str.strip()` (what DRF trims): \t-\r, \x1c-space, \x85, ...
# Written out because ECMA's `\s` differs (it has \ufeff, not \x1c-\x1f or \x85); valid in both dialects.
NOT_BLANK = "[^\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"


def pattern_field(pattern: str, message: str, **kwargs: Any) -> serializers.CharField:
    """A string the server checks against `pattern` (a Python regular expression), which the schema documents.
    Not trimmed: a value the documented pattern refuses (" key") is refused, not stored trimmed."""
    return serializers.CharField(
        trim_whitespace=False, validators=[RegexValidator(pattern, message)], **kwargs
    )


@cache
def _spelt_class(shorthand: str) -> str:
    """The characters Python's `re` matches with `shorthand` (`\\w`, `\\d`), as the contents of a character
    class of literal ranges: the same set in every engine, from this server's own Unicode tables."""
    matches = re.compile(shorthand).fullmatch
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if matches(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in ranges)


def ecma_pattern(pattern: str) -> str:
    """`pattern` (a Python regular expression) as every engine reads it. Python's `\\w` and `\\d` are Unicode
    (letters and digits of any script), ECMA-262's (OpenAPI's dialect) ASCII only, and the Unicode property
    escapes that would say it (`\\p{L}`) are read by neither Python's `re` nor some tools (Schemathesis turns
    them into Latin letters): so they are spelt out as the ranges of characters they match here."""
    spelt, in_class = [], False
    for token in re.findall(r"\\.|.", pattern, flags=re.DOTALL):
        in_class = (in_class or token == "[") and token != "]"
        if token in (r"\w", r"\d"):
            token = _spelt_class(token) if in_class else f"[{_spelt_class(token)}]"
        spelt.append(token)
    return "".join(spelt)


def _stores_blank(field: serializers.Field) -> bool:
    """A ModelSerializer's field whose model field may hold "" (text with blank=True)."""
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    if model is None or field.source == "*" or "." in field.source:
        return False
    try:
        model_field = model._meta.get_field(field.source)
    except FieldDoesNotExist:
        return False
    return isinstance(model_field, models.CharField | models.TextField) and model_field.blank


class ApiSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with the error answers of each operation (see the module docstring)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation["responses"]
        declared = [code for code in DESCRIPTIONS if code in responses and "content" not in responses[code]]
        for code in [*self._error_codes(operation), *declared]:
            body = VALIDATION_ERROR if code == "400" else ERROR
            documented = responses.setdefault(code, {"description": DESCRIPTIONS[code]})
            documented["content"] = {"application/json": {"schema": self._ref(body)}}
        return operation

    def _error_codes(self, operation: dict[str, Any]) -> list[str]:
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        has_body = "requestBody" in operation
        wanted = {
            "400": has_body or bool(query - UNVALIDATED_QUERY),
            "401": bool(self.view.get_authenticators()),
            "403": self._can_forbid(),
            "404": "{" in self.path or "format" in query,
            "415": has_body,
            "429": bool(self.view.get_throttles()),
        }
        return [code for code, documented in wanted.items() if documented]

    def _can_forbid(self) -> bool:
        unsafe = self.method not in SAFE_METHODS
        if unsafe and any(isinstance(a, SessionAuthentication) for a in self.view.get_authenticators()):
            return True
        for permission in self.view.get_permissions():
            if isinstance(permission, IsAccountAdminOrReadOnly):
                if unsafe:
                    return True
            elif not isinstance(permission, NEVER_FORBID):
                return True
        return False

    def _map_serializer_field(
        self, field: serializers.Field, direction: str, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        # Requests only: a plain serializer that only answers has writable fields the server never validates.
        refuses_blank = isinstance(field, serializers.CharField) and not (
            field.read_only or field.allow_blank
        )
        if direction == "request" and refuses_blank and schema.get("type") == "string":
            schema.setdefault("minLength", 1)
            # A regex validator's pattern (inserted later, if none is there yet) already refuses blanks.
            has_pattern = any(isinstance(v, RegexValidator) for v in field.validators)
            if field.trim_whitespace and not has_pattern:
                schema.setdefault("pattern", NOT_BLANK)
        if field.read_only and _stores_blank(field) and ("format" in schema or "pattern" in schema):
            # ModelSerializer drops `allow_blank` from a read-only field, so a stored "" (the URL an upload has
            # none of) would be documented as not a URL: "" is listed the way drf-spectacular lists it for writes.
            kept = {"readOnly", "description", "nullable", "deprecated", "title"}
            inner = {key: schema.pop(key) for key in list(schema) if key not in kept}
            schema["oneOf"] = [inner, {"type": "string", "maxLength": 0}]
        return schema

    def _insert_field_validators(self, field: serializers.Field, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        if "pattern" in schema:
            schema["pattern"] = ecma_pattern(schema["pattern"])

    def _ref(self, name: str) -> dict[str, str]:
        schema = VALIDATION_ERROR_SCHEMA if name == VALIDATION_ERROR else ERROR_SCHEMA
        component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema)
        self.registry.register_on_missing(component)
        return component.ref
