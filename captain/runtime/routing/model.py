"""The router's model boundary: one short, constrained Chat Completions call through the `openai` SDK.

A router call differs from an agent call: no tools, a tiny `max_tokens`, and, where the endpoint supports them,
a JSON-schema `response_format` (an enum of candidate ids, enforced by grammar on llama.cpp) and token
log-probabilities (`logprobs` / `top_logprobs`). Endpoints that reject either option get the call again without
it, once, and the client remembers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai

from ..model import ModelError, _map_openai_error, make_openai_client


@dataclass
class RouterResponse:
    content: str
    """Raw text the model produced."""
    top_logprobs: list[dict[str, float]] = field(default_factory=list)
    """Per generated token: {token text: log-probability} of its top alternatives (empty when unavailable)."""
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    constrained: bool = False
    """True when the endpoint accepted the JSON-schema constraint."""


class RouterModel(Protocol):
    """What a router strategy needs from a model."""

    def route(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
        enum: list[str] | None = None,
        top_logprobs: int = 0,
    ) -> RouterResponse:
        """Answer `messages`; with `enum`, constrain the answer to `{"route": <one of enum>}` where supported;
        with `top_logprobs`, return that many alternatives per token where supported. Raise `ModelError`."""
        ...


def route_schema(enum: list[str]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "route",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"route": {"type": "string", "enum": enum}},
                "required": ["route"],
                "additionalProperties": False,
            },
        },
    }


class OpenAIRouterModel:
    """`RouterModel` over any OpenAI-compatible endpoint."""

    def __init__(self, client: openai.OpenAI) -> None:
        self.client = client
        self.supports_schema = True
        self.supports_logprobs = True

    @classmethod
    def for_endpoint(
        cls, base_url: str, api_key: str | None = None, *, timeout: float = 30.0
    ) -> OpenAIRouterModel:
        return cls(make_openai_client(base_url, api_key, timeout, 1))

    def route(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
        enum: list[str] | None = None,
        top_logprobs: int = 0,
    ) -> RouterResponse:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        use_schema = bool(enum) and self.supports_schema
        use_logprobs = top_logprobs > 0 and self.supports_logprobs
        if use_schema:
            kwargs["response_format"] = route_schema(list(enum or []))
        if use_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = top_logprobs
        started = time.monotonic()
        try:
            completion = self.client.chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if not (use_schema or use_logprobs):
                raise _map_openai_error(exc) from exc
            # The endpoint refuses an option: drop both for good and ask once more, plainly.
            self.supports_schema = self.supports_logprobs = False
            kwargs.pop("response_format", None)
            kwargs.pop("logprobs", None)
            kwargs.pop("top_logprobs", None)
            use_schema = use_logprobs = False
            try:
                completion = self.client.chat.completions.create(**kwargs)
            except openai.OpenAIError as exc2:
                raise _map_openai_error(exc2) from exc2
        except openai.OpenAIError as exc:
            raise _map_openai_error(exc) from exc
        except Exception as exc:  # anything else from the SDK is still a model failure to the router
            raise ModelError("unexpected", f"{type(exc).__name__}: {exc}") from exc
        latency = (time.monotonic() - started) * 1000
        try:
            choice = completion.choices[0]
            content = choice.message.content or ""
            tops: list[dict[str, float]] = []
            if use_logprobs and choice.logprobs is not None and choice.logprobs.content:
                for token in choice.logprobs.content:
                    alternatives = {alt.token: alt.logprob for alt in (token.top_logprobs or [])}
                    alternatives.setdefault(token.token, token.logprob)
                    tops.append(alternatives)
            usage = completion.usage
            return RouterResponse(
                content=content,
                top_logprobs=tops,
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
                latency_ms=latency,
                constrained=use_schema,
            )
        except Exception as exc:
            raise ModelError(
                "bad_response", f"malformed router completion: {type(exc).__name__}: {exc}"
            ) from exc
