"""Structured replies: the agent answers `{"response": ..., "reasoning": ...}` (Chatwoot Captain's reply schema).

`response` goes to the customer; `reasoning` (why this answer, which source, why no tool) is kept for the debug
log and never sent. The schema is enforced by the endpoint (`response_format` json_schema) when it can be; the
parser below is tolerant either way: a reply that is not JSON is used as plain text, and a reply that is JSON but
broken is salvaged or refused, so raw JSON never reaches a customer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "response": {"type": "string", "minLength": 1},
        "reasoning": {"type": "string"},
    },
    "required": ["response", "reasoning"],
    "additionalProperties": False,
}

RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "reply", "strict": True, "schema": REPLY_SCHEMA},
}

Shape = Literal["json", "salvaged", "plain", "broken"]

# Pieces of the reply-format instruction (captain/prompts/templates/reply_format.jinja). Small models sometimes
# answer by repeating the instruction itself; such a reply says nothing to the customer and leaks the prompt.
ECHO_MARKERS = ("reply with one json object", "<your message to the customer>", "the customer sees only")

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)
# The value of a "response" key in JSON that does not parse as a whole (cut off, a stray quote elsewhere...).
_RESPONSE_VALUE = re.compile(r'"response"\s*:\s*"((?:[^"\\]|\\.)*)"?', re.DOTALL)
_REASONING_VALUE = re.compile(r'"reasoning"\s*:\s*"((?:[^"\\]|\\.)*)"?', re.DOTALL)


@dataclass(frozen=True)
class ParsedReply:
    text: str
    """What the customer is sent (empty only for a `broken` reply)."""
    reasoning: str
    shape: Shape
    """json: well formed; salvaged: the response was read out of broken JSON; plain: no JSON at all (a model
    that ignored the format); broken: JSON-looking text with no readable response: nothing may be sent."""

    @property
    def well_formed(self) -> bool:
        return self.shape == "json"


def _unescape(value: str) -> str:
    try:
        decoded = json.loads(f'"{value}"')
    except ValueError:
        return value.replace('\\"', '"').replace("\\n", "\n")
    return decoded if isinstance(decoded, str) else value


def _looks_like_json(text: str) -> bool:
    # Not "[": a plain answer may well open with a citation such as "[1]".
    return text.startswith("{")


def parse_reply(raw: str) -> ParsedReply:
    """Read a model's final text as a structured reply, as tolerantly as is safe."""
    text = raw.strip()
    if any(marker in text.lower() for marker in ECHO_MARKERS):
        return ParsedReply(text="", reasoning="", shape="broken")
    fenced = _FENCE.match(text)
    body = fenced.group(1).strip() if fenced else text
    if not _looks_like_json(body):
        return ParsedReply(text=text, reasoning="", shape="plain")
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        response, reasoning = data.get("response"), data.get("reasoning", "")
        if isinstance(response, str) and response.strip():
            return ParsedReply(
                text=response.strip(),
                reasoning=reasoning.strip() if isinstance(reasoning, str) else json.dumps(reasoning),
                shape="json",
            )
    found = _RESPONSE_VALUE.search(body)
    if found and _unescape(found.group(1)).strip():
        why = _REASONING_VALUE.search(body)
        return ParsedReply(
            text=_unescape(found.group(1)).strip(),
            reasoning=_unescape(why.group(1)).strip() if why else "",
            shape="salvaged",
        )
    return ParsedReply(text="", reasoning="", shape="broken")
