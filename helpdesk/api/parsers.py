"""The REST API's JSON parser: the webhooks' limits on every API route, so hostile JSON is a 400, never a 500."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from helpdesk.channels.base import json_depth
from helpdesk.conf import helpdesk_setting


class BoundedJSONParser(JSONParser):
    """DRF's parser (strict: NaN and Infinity refused) with the webhooks' nesting limit. Python's decoder
    recurses per level, so `[` x 5000 raised RecursionError out of the view."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        max_depth = helpdesk_setting("WEBHOOK_MAX_JSON_DEPTH")
        if json_depth(data) > max_depth:
            raise ParseError(f"JSON parse error - nested deeper than {max_depth} levels.")
        return data
