"""Asking a router model, and what the calls of one decision cost (summed onto the decision record)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..model import ModelResponse, ModelSettings
from .request import Router

TEMPERATURE = 0
"""Every router question is asked at temperature 0 (sent as the integer 0, as it always was)."""


def ask(router: Router, messages: list[dict[str, Any]], settings: ModelSettings) -> ModelResponse:
    """One router call through the same `ModelClient` the agents use. Raises `ModelError`."""
    client, model = router
    return client.complete(model=model, messages=messages, settings=settings)


@dataclass(frozen=True)
class RouterCalls:
    """The model calls one decision made: counted, summed, and the last raw output."""

    model: str = ""
    raw_output: str = ""
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0

    def plus(self, response: ModelResponse, model: str) -> RouterCalls:
        return replace(
            self,
            model=model,
            raw_output=response.content or "",
            llm_calls=self.llm_calls + 1,
            input_tokens=self.input_tokens + response.usage.input_tokens,
            output_tokens=self.output_tokens + response.usage.output_tokens,
            latency_ms=self.latency_ms + response.latency_ms,
        )

    def fields(self) -> dict[str, Any]:
        """The `Decision` fields these calls fill."""
        return {
            "model": self.model,
            "raw_output": self.raw_output,
            "llm_calls": self.llm_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": self.latency_ms,
        }


NO_CALLS = RouterCalls()
"""A decision that asked no model."""
