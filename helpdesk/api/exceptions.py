"""The REST API's exception handler: DRF's, plus the request errors Django raises before any parser runs."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from rest_framework.exceptions import NotFound, ParseError, ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with three more cases.

    A body over DATA_UPLOAD_MAX_MEMORY_SIZE is refused by Django while DRF reads it, before our parser: DRF
    left that to Django's HTML "Bad Request (400)" page, which a JSON client cannot read. Same 400, as JSON."""
    if isinstance(exc, RequestDataTooBig):
        exc = ParseError(f"Request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.")
    if isinstance(exc, ObjectDoesNotExist):
        # The view found the object, then another request deleted it (a contact merged away) before a service
        # re-read it under lock: gone is a 404, as if the request had come a moment later.
        exc = NotFound("Not found: it was deleted or merged meanwhile.")
    if isinstance(exc, ValidationError) and isinstance(exc.detail, list):
        # A ValidationError raised with a message rather than {field: messages} would answer a bare list; the
        # schema documents every 400 as an object (helpdesk.api.schema), so it is the body-wide error.
        exc = ValidationError({api_settings.NON_FIELD_ERRORS_KEY: exc.detail})
    return exception_handler(exc, context)


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """The project's `handler404` for paths under the API: no route matched (an unknown path, or an id the
    `<id:...>` converter refused), so no API view ran to answer DRF's JSON 404. The same body as DRF's."""
    return JsonResponse({"detail": "Not found."}, status=404)
