"""The API edge of the write services: their domain errors become HTTP 400 with messages per field."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ValidationError
from rest_framework import serializers


@contextmanager
def service_errors_as_400() -> Iterator[None]:
    """Run a service call; its `ValidationError({field: [messages]})` answers 400 with that body (DRF's shape,
    so a rule moved from a serializer into a service answers exactly as before)."""
    try:
        yield
    except ValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        raise serializers.ValidationError(detail) from exc
