"""The model boundary: what the runner and the router know of a model.

The runner and the router depend on the small `ModelClient` protocol below, never on the SDK, so tests script
a fake model in process and any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, the bundled local
model) plugs in through `OpenAIChatModel` (captain.runtime.openai_chat, with openai_reading the only code that
talks to the SDK). One call shape serves both: an agent's turn (tools, temperature) and
a router's short question (a few tokens, a JSON-schema `response_format`, the first token's log-probabilities),
chosen by a typed `ModelSettings`. Every failure of a model call, whatever its cause, surfaces as one exception
type, `ModelError`, so the run can end in a typed outcome instead of a stack trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .types import Usage

ModelErrorKind = Literal[
    "timeout",
    "rate_limited",
    "server_error",
    "connection",
    "bad_request",
    "auth",
    "bad_response",
    "unexpected",
]


class ModelError(Exception):
    """A model call failed. `kind` says why; the message is internal and never shown to a customer."""

    def __init__(
        self,
        kind: ModelErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ModelErrorKind = kind
        """timeout, rate_limited, server_error, connection, bad_request, auth, bad_response or unexpected."""
        self.status_code = status_code
        """HTTP status of the last attempt, when there was one."""
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), when it said so."""

    def __str__(self) -> str:
        status = f" (HTTP {self.status_code})" if self.status_code is not None else ""
        return f"{self.kind}{status}: {self.args[0]}"


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model."""

    id: str
    """Call id chosen by the model endpoint; the tool result must quote it."""
    name: str
    """Function name as the model wrote it (untrusted: may name a tool that does not exist)."""
    arguments: str
    """Raw JSON text of the arguments (untrusted: may be invalid JSON)."""


@dataclass(frozen=True)
class ModelSettings:
    """How to ask: everything of a Chat Completions request besides the model, the messages and the tools.
    A field left at its default is not sent, so each caller's request body carries exactly what it sets."""

    temperature: float | None = None
    """Sampling temperature; None: not sent (the endpoint's default)."""
    max_tokens: int | None = None
    """Cap on generated tokens (a router question needs one to a few dozen); None: not sent."""
    top_logprobs: int = 0
    """> 0: ask for the log-probabilities of this many alternatives per generated token (`logprobs: true`);
    the response carries the first token's (`ModelResponse.first_token_logprobs`)."""
    response_format: Mapping[str, Any] | None = None
    """E.g. a JSON-schema `{"type": "json_schema", ...}` the endpoint enforces by grammar; None: not sent."""
    tool_choice: str | Mapping[str, Any] | None = None
    """`auto`, `required`, `none` or a named function; sent only along with tools."""


DEFAULT_SETTINGS = ModelSettings()


@dataclass
class ModelResponse:
    """One model answer, normalised."""

    content: str | None
    """Assistant text (None when the model only called tools)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Function calls, in the order the model emitted them."""
    usage: Usage = field(default_factory=Usage)
    """Tokens reported for this call (zero when the endpoint reports none)."""
    model: str = ""
    """Model name the endpoint says answered (falls back to the requested one)."""
    raw: dict[str, Any] | None = None
    """The response body as JSON-compatible data, for the debug log; None for scripted models."""
    finish_reason: str | None = None
    """`stop`, `tool_calls`, `length`... as reported by the endpoint."""
    response_id: str | None = None
    """Provider's response id, for correlating with provider logs."""
    first_token_logprobs: dict[str, float] = field(default_factory=dict)
    """{token text: log-probability} of the first generated token's top alternatives (the token itself
    included); empty unless `ModelSettings.top_logprobs` asked for them and the endpoint returned them."""
    latency_ms: float = 0.0
    """Wall time of the call, retries included."""
    first_token_ms: float | None = None
    """Streamed calls: time from the request to the first generated text or tool-call delta; None when the
    call did not stream or nothing was generated."""
    stopped_early: bool = False
    """Streamed calls: the caller stopped reading before the model finished (it had what it needed)."""
    usage_estimated: bool = False
    """The usage is an estimate (a stream stopped early never receives the endpoint's count)."""
    gate_wait_ms: float = 0.0
    """How long the call waited for a slot of the endpoint's gate before it was sent."""


class ModelClient(Protocol):
    """What the runner and the router need from a model: one synchronous Chat Completions call."""

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
    ) -> ModelResponse:
        """Return the model's answer, or raise `ModelError` (and nothing else) when there is none.

        `messages` are Chat Completions message dicts (system first); `tools` are Chat Completions tool
        definitions (`{"type": "function", "function": {...}}`), possibly empty.
        """
        ...


class StreamingModelClient(ModelClient, Protocol):
    """A model client that can also stream: the generated text reaches `on_text` as it is generated (the text
    tool protocol shows the model's Thought live)."""

    def stream(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
        on_text: Callable[[str], bool | None],
    ) -> ModelResponse:
        """Like `complete`, calling `on_text` with each text delta in order; raises `ModelError` (and nothing
        else of its own) when there is no complete answer, a stream that breaks midway included. An exception
        raised by `on_text` propagates unchanged. `on_text` returning False stops reading: the connection
        closes (a server stops generating), and the answer is what arrived (`stopped_early`)."""
        ...


class ModelGate(Protocol):
    """Admission to an endpoint's model: a call holds a slot for as long as it talks to the model (customers
    first: captain.model_gate). `slot()` waits for one and yields the milliseconds it waited."""

    def slot(self) -> AbstractContextManager[float]: ...
