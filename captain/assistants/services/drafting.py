"""What the administrator-side drafting jobs share (FAQ drafts, routing example drafts): the assistant's own model
asked with a job's settings, and reading JSON out of a small model's answer.

Drafting costs the account no credits (no hold, no ledger row), whatever model the assistant uses. It calls only
the endpoint and model the assistant answers with (`team_model_for`), which resolves among the operator's
endpoints and the account's own, so an account's drafts never go to an endpoint it may not use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from captain.answering.services.team import team_model_for
from captain.assistants.models import Assistant
from captain.assistants.services.model_endpoints import model_client_for
from captain.runtime.model import ModelSettings

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()


class DraftingModel:
    """The assistant's model, asked with the settings of one drafting job."""

    def __init__(
        self,
        assistant: Assistant,
        *,
        max_tokens: int,
        temperature: float = 0.2,
        response_format: Mapping[str, Any] | None = None,
    ) -> None:
        team_model = team_model_for(assistant)  # raises EndpointUnavailable
        self.client = model_client_for(team_model.endpoint)
        self.model = team_model.model
        self.settings = ModelSettings(
            temperature=temperature, max_tokens=max_tokens, response_format=response_format
        )

    def ask(self, system: str, user: str) -> str | None:
        """The model's text answer (raises `ModelError` when the call fails)."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self.client.complete(model=self.model, messages=messages, settings=self.settings).content


def _values(text: str) -> list[Any]:
    """Every JSON value that starts at a `[` or `{` of `text`, outermost first, skipping what does not parse."""
    found: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] in "[{":
            try:
                value, end = _decoder.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            found.append(value)
            i = end
        else:
            i += 1
    return found


def json_values(content: str | None) -> list[Any]:
    """The JSON values (arrays and objects) in a model's answer; [] when there are none. Never raises.

    Small models wrap JSON in ```json fences, add a sentence before or after it, or break off mid-array: the
    fenced blocks are read first, the whole answer when they hold nothing readable."""
    if not content:
        return []
    fenced = _FENCE_RE.findall(content)
    for part in [*fenced, content] if fenced else [content]:
        values = _values(part)
        if values:
            return values
    return []
