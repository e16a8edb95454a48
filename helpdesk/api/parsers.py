"""The REST API's JSON parser: the webhooks' limits on every API route, so hostile JSON is a 400, never a 500."""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils import json

from helpdesk.channels.base import LONE_SURROGATE, finite_float, json_depth
from helpdesk.conf import helpdesk_setting


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string (key or value) holds half a surrogate pair. Iterative, like `json_depth`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class BoundedJSONParser(JSONParser):
    """DRF's parser (strict: NaN and Infinity refused) with the webhooks' nesting limit, and two more refusals:
    - numbers that overflow a float: Python reads `1e999` as inf, which reached an integer lookup
      (`{"user_id": 1e999}` raised OverflowError, a 500);
    - text with a lone surrogate (`"\\ud800"`: valid JSON, not valid Unicode): an error message echoing it,
      such as `"\\ud800" is not a valid choice.`, could not be encoded into the response (a 500). The webhooks
      replace it with U+FFFD instead, since a provider's message must get through; an API client is told.
    Python's decoder recurses per level, so `[` x 5000 raised RecursionError out of the view: a 400 too."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.load(codecs.getreader(encoding)(stream), parse_float=finite_float)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        except ValueError as exc:  # also UnicodeDecodeError and the strict NaN/Infinity refusal
            raise ParseError(f"JSON parse error - {exc}") from None
        max_depth = helpdesk_setting("WEBHOOK_MAX_JSON_DEPTH")
        if json_depth(data) > max_depth:
            raise ParseError(f"JSON parse error - nested deeper than {max_depth} levels.")
        if _has_lone_surrogate(data):
            raise ParseError(
                "JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff), not Unicode text."
            )
        return data
