"""Drafted routing examples, the model's side: what the model is asked for one scenario's node (prompt, languages,
response format) and how its answer is read. No database: the routing benchmark's drafted variant
(bench/routing/drafted.py) drafts from a dataset's scenarios with the same request and parsing. Drafting and
storing for the product is `example_drafts`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from django.utils.translation import get_language_info

from captain.assistants.models import Scenario
from captain.assistants.services.drafting import json_values
from captain.conf import captain_setting
from captain.runtime.knowledge.tokens import has_cjk

MAX_EXAMPLE_CHARS = 200
"""Longer "messages" are the model explaining, not a customer asking (the model field holds 500)."""
SCENARIO_TEXT_CHARS = 1500
"""Of a description or instruction put in the prompt, so a long instruction cannot crowd out the request."""
TOKENS_PER_EXAMPLE = 48
"""Generation budget per example asked (a short Chinese sentence takes ~25 tokens, plus JSON quoting)."""
TEMPERATURE = 0.7
"""Higher than FAQ drafting's 0.2: the point is varied phrasings, and nothing here is a fact to copy."""
MIN_LINES_AS_LIST = 3
"""An answer that is not JSON is read one example per line only when it has at least this many lines: a one-line
refusal or comment is not a list of examples."""

EXAMPLES_SCHEMA: dict[str, Any] = {
    # An object around the array: OpenAI's structured outputs want an object at the root; llama.cpp's grammar
    # takes either. A model that ignores the format still gets read (a bare array, or one example per line).
    "type": "json_schema",
    "json_schema": {
        "name": "routing_examples",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"examples": {"type": "array", "items": {"type": "string"}}},
            "required": ["examples"],
            "additionalProperties": False,
        },
    },
}

SYSTEM_PROMPT = (
    "You help set up a customer support assistant that passes each customer message to the right specialist. "
    "Write {n} messages a customer could send that THIS specialist should handle, in each of these languages: "
    "{languages}. Keep each message short (one sentence, at most 20 words) and make them varied: direct "
    "requests, indirect ones that describe the situation without naming the topic, casual and polite ones, one "
    "with a typo, and one written as a follow-up inside an ongoing conversation. Write as the customer, never "
    "as the support team; no names, order numbers or other personal details. Do not write messages that belong "
    "to one of the other specialists. "
    'Reply with only JSON: {{"examples": ["...", "..."]}}.'
)

_LIST_MARK_RE = re.compile(r"^(?:[-*•·]|\d{1,2}\s*[.)、:：]|\(\d{1,2}\))\s*")
_QUOTES = "\"'“”‘’「」『』`"


def example_key(text: str) -> str:
    """What makes two examples the same message: case, blanks and punctuation aside."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


# ---- languages ----------------------------------------------------------------------------------------------


def draft_languages(scenario: Scenario) -> list[str]:
    """ROUTING_EXAMPLE_LANGUAGES, plus the scenario's own language when it is not among them (Chinese when its
    title or description has CJK characters, English otherwise)."""
    return languages_for(scenario.title, scenario.description)


def languages_for(title: str, description: str) -> list[str]:
    configured = [str(code).strip() for code in captain_setting("ROUTING_EXAMPLE_LANGUAGES") or []]
    languages = list(dict.fromkeys(code for code in configured if code))
    own = "zh" if has_cjk(f"{title} {description}") else "en"
    if not any(code.lower().split("-")[0] == own for code in languages):
        languages.append(own)
    return languages


def language_name(code: str) -> str:
    """An English name the model understands for a language code ("zh" is Django's "zh-hans")."""
    if code.lower() in ("zh", "zh-cn"):
        return "Simplified Chinese"
    try:
        return str(get_language_info(code)["name"])
    except KeyError:
        return code


# ---- the model's answer -------------------------------------------------------------------------------------


def _clean(text: str) -> str | None:
    text = " ".join(text.split()).strip(_QUOTES).strip()
    if not text or len(text) > MAX_EXAMPLE_CHARS or not example_key(text):
        return None
    return text


def _strings(value: Any) -> list[str]:
    """Strings of a JSON value: an array of them, {"examples": [...]}, or per-language arrays
    ({"en": [...], "zh": [...]}); anything else holds none."""
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, dict):
        return [item for inner in value.values() if isinstance(inner, list) for item in _strings(inner)]
    return []


def _lines(content: str) -> list[str]:
    lines = []
    for raw in content.splitlines():
        line = raw.strip()
        if not line or line.startswith("```") or line.endswith((":", "：")):
            continue  # blank, a fence, or a heading ("Here are some examples:", "English:")
        lines.append(_LIST_MARK_RE.sub("", line, count=1))
    return lines if len(lines) >= MIN_LINES_AS_LIST else []


def parse_examples(content: str | None) -> list[str]:
    """The example messages in a model's answer, cleaned and without repeats; [] when there are none. JSON
    first; an answer that holds no JSON at all is read one example per line. Never raises."""
    if not content or not content.strip():
        return []
    values = json_values(content)
    if values:
        candidates = [text for value in values for text in _strings(value)]
    elif content.lstrip().startswith(("[", "{")):
        candidates = []  # JSON broken off or malformed: not a list of lines either
    else:
        candidates = _lines(content)
    texts: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        text = _clean(candidate)
        if text is not None and example_key(text) not in seen:
            seen.add(example_key(text))
            texts.append(text)
    return texts


# ---- the request --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DraftRequest:
    """What the model is asked for one node: the same for the product and the routing benchmark's drafted
    variant, which drafts from a dataset's scenarios without a database."""

    system: str
    user: str
    wanted: int
    """Examples kept at most."""

    @property
    def max_tokens(self) -> int:
        return 40 + TOKENS_PER_EXAMPLE * self.wanted


def draft_request(
    *,
    title: str,
    description: str,
    instruction: str,
    other_titles: list[str],
    languages: list[str],
    per_language: int,
) -> DraftRequest:
    lines = [
        f"Specialist: {title}",
        f"When it applies: {description[:SCENARIO_TEXT_CHARS]}",
        f"What it does: {instruction[:SCENARIO_TEXT_CHARS]}",
    ]
    if other_titles:
        lines.append("Other specialists (not this one): " + "; ".join(other_titles))
    system = SYSTEM_PROMPT.format(n=per_language, languages=", ".join(language_name(c) for c in languages))
    return DraftRequest(system, "\n".join(lines), per_language * len(languages))
