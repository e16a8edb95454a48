"""Custom HTTP tools: making one call (`custom_tool_call`) through the outbound HTTP policy. Rules that hold for
every call:

- The secret is decrypted only to build the request headers. Headers are recorded with credentials and the
  contact's identity replaced by "[redacted]", and every text that leaves this module (the model's output,
  errors, span attributes) has the secret removed, in case a service echoes it.
- Only idempotent methods are retried, once, and only on a connection error, a timeout or 502/503/504.
- Every bad answer becomes a `ToolFailed` with a short message the model can act on.

What a tool may be, and storing it, is `custom_tools`; its templates are `custom_tool_templates`.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from jsonpath_ng import JSONPath
from jsonpath_ng.ext import parse as jsonpath_parse
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from captain.actions.models import CustomTool
from captain.actions.services.custom_tool_templates import (
    RESPONSE_VARIABLE,
    custom_tool_body,
    custom_tool_url,
    plain_text,
    template_render,
    tool_variables,
)
from captain.conf import captain_setting
from captain.crypto import SecretUnreadable, secret_decrypt
from captain.prompts.sandbox import PromptTemplateError
from captain.runtime import semconv as sc
from captain.runtime.types import ToolFailed
from helpdesk.models import Conversation
from helpdesk.outbound import OutboundRefused, ResponseTooLarge, outbound_client

logger = logging.getLogger(__name__)

MAX_MODEL_CHARS = 40_000
"""What the model sees of one answer at most; the runtime stores long outputs as artifacts anyway."""
RECORDED_BODY_CHARS = 4_000
"""The start of a request or response body kept on the span (content recording on only)."""
REDACTED = "[redacted]"
IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE"})
RETRY_STATUSES = frozenset({502, 503, 504})
RETRY_PAUSE_SECONDS = 0.2
DEFAULT_API_KEY_HEADER = "X-API-Key"


def contact_identity(*, account_id: int, conversation_id: int | None) -> str | None:
    """The contact's verified channel identity, `<channel type>:<source id>` of the conversation's contact in
    the conversation's inbox (what the channel itself authenticated), never anything the model wrote."""
    if conversation_id is None:
        return None
    conversation = (
        Conversation.objects.select_related("inbox", "contact_inbox")
        .filter(account_id=account_id, pk=conversation_id)
        .first()
    )
    if conversation is None or conversation.contact_inbox.inbox_id != conversation.inbox_id:
        return None
    return f"{conversation.inbox.channel_type}:{conversation.contact_inbox.source_id}"


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str]
    body: str | None
    secrets: list[str] = field(default_factory=list, repr=False)
    """Values removed from every text that leaves this module (the secret, its Basic encoding, the identity)."""
    redacted_headers: dict[str, str] = field(default_factory=dict)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, REDACTED)
        return text


@dataclass
class Exchange:
    """One call as the debug log and the test call show it."""

    request: _Request | None = None
    status: int | None = None
    content_type: str = ""
    response_text: str = ""
    shown: str = ""
    error: str = ""
    attempts: int = 0
    elapsed_ms: float = 0.0

    def record(self) -> dict[str, Any]:
        request = self.request
        return {
            "request": {
                "method": request.method if request else "",
                "url": request.redact(request.url) if request else "",
                "headers": request.redacted_headers if request else {},
                "body": request.redact(request.body) if request and request.body is not None else None,
            },
            "response": None
            if self.status is None
            else {
                "status": self.status,
                "content_type": self.content_type,
                "body": self._redact(self.response_text[:RECORDED_BODY_CHARS]),
            },
            "shown_to_model": self.shown,
            "error": self.error,
            "attempts": self.attempts,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }

    def _redact(self, text: str) -> str:
        return self.request.redact(text) if self.request else text


def _request(tool: CustomTool, arguments: Mapping[str, Any], identity: str | None) -> _Request:
    url = custom_tool_url(tool, arguments)
    body = custom_tool_body(tool, arguments)
    try:
        secret = secret_decrypt(tool.secret_encrypted)
    except SecretUnreadable as exc:
        raise ToolFailed("the tool's secret cannot be read; enter it again") from exc
    if tool.auth_type != CustomTool.Auth.NONE and not secret:
        # Never a request with an empty credential: the secret was cleared or dropped when the URL moved to
        # another host (`destinations`), and only an administrator can give it again.
        raise ToolFailed("the tool has no secret stored (an administrator must enter it); nothing was sent")
    headers = {"Accept": "application/json", "User-Agent": "captain-custom-tool"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    hidden: set[str] = set()
    secrets = [secret]
    if tool.auth_type == CustomTool.Auth.BEARER:
        headers["Authorization"] = f"Bearer {secret}"
        hidden.add("Authorization")
    elif tool.auth_type == CustomTool.Auth.BASIC:
        token = base64.b64encode(f"{tool.auth_username}:{secret}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        hidden.add("Authorization")
        secrets.append(token)
    elif tool.auth_type == CustomTool.Auth.API_KEY:
        name = tool.auth_header or DEFAULT_API_KEY_HEADER
        headers[name] = secret
        hidden.add(name)
    if tool.identity_header and identity:
        headers[tool.identity_header] = identity
        hidden.add(tool.identity_header)
        secrets.append(identity)
    redacted = {k: (REDACTED if k in hidden else v) for k, v in headers.items()}
    # Longest first: a Basic token is never partly replaced by a shorter secret it contains.
    secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
    return _Request(tool.method, url, headers, body, secrets, redacted)


def _send(tool: CustomTool, request: _Request, exchange: Exchange) -> httpx.Response | None:
    """The response, or None with `exchange.error` set. One retry for idempotent methods on a connection
    error, a timeout or 502/503/504; never for POST/PATCH (the first attempt may have done the change)."""
    attempts_allowed = 2 if request.method in IDEMPOTENT_METHODS else 1
    content = request.body.encode() if request.body is not None else None
    with outbound_client(timeout=tool.timeout_seconds, max_response_bytes=tool.max_response_bytes) as client:
        while True:
            exchange.attempts += 1
            retry = exchange.attempts < attempts_allowed
            try:
                response = client.request(
                    request.method, request.url, headers=request.headers, content=content
                )
            except ResponseTooLarge as exc:
                exchange.error = f"the answer is too large ({exc})"
                return None
            except OutboundRefused as exc:
                exchange.error = f"the address is refused by the outbound policy: {exc}"
                return None
            except httpx.TimeoutException:
                if retry:
                    time.sleep(RETRY_PAUSE_SECONDS)
                    continue
                exchange.error = f"no answer within {tool.timeout_seconds:g} s"
                return None
            except httpx.TransportError as exc:
                if retry:
                    time.sleep(RETRY_PAUSE_SECONDS)
                    continue
                exchange.error = f"the service could not be reached ({type(exc).__name__})"
                return None
            if response.status_code in RETRY_STATUSES and retry:
                time.sleep(RETRY_PAUSE_SECONDS)
                continue
            return response


def _pick(tool: CustomTool, data: Any) -> Any:
    path: JSONPath = jsonpath_parse(tool.response_path)
    matches = [match.value for match in path.find(data)]
    if not matches:
        return None
    return matches[0] if len(matches) == 1 else matches


def _shown(
    tool: CustomTool, request: _Request, response: httpx.Response, arguments: Mapping[str, Any]
) -> str:
    """What the model sees of a successful answer; ToolFailed for one it cannot use."""
    content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    text = response.text
    if content_type == "text/html" or (
        not content_type and text.lstrip()[:15].lower().startswith("<!doctype")
    ):
        raise ToolFailed("the answer is HTML, not JSON (the URL may point at a web page, not the API)")
    data: Any = None
    parsed = False
    if text.strip():
        try:
            data, parsed = json.loads(text), True
        except ValueError:
            parsed = False
    wants_json = bool(tool.response_path.strip() or tool.response_template.strip())
    if wants_json and not parsed:
        raise ToolFailed("the answer is not JSON, so the tool cannot pick what to show from it")
    if tool.response_path.strip():
        picked = _pick(tool, data)
        if picked is None:
            return f"(the answer has nothing at {tool.response_path})"
        shown = plain_text(picked)
    elif tool.response_template.strip():
        try:
            shown = template_render(
                "text", tool.response_template, {**tool_variables(tool, arguments), RESPONSE_VARIABLE: data}
            )
        except PromptTemplateError as exc:
            raise ToolFailed(f"the tool's response template failed on this answer ({exc})") from exc
    elif parsed:
        shown = json.dumps(data, ensure_ascii=False)
    else:
        shown = text
    shown = request.redact(shown)
    if len(shown) > MAX_MODEL_CHARS:
        shown = shown[:MAX_MODEL_CHARS] + f"\n[... {len(shown) - MAX_MODEL_CHARS} more characters cut]"
    return shown or "(the service answered with an empty body)"


def _judge(
    tool: CustomTool, request: _Request, response: httpx.Response, arguments: Mapping[str, Any]
) -> str:
    status = response.status_code
    if 300 <= status < 400:
        raise ToolFailed(
            f"the service answered HTTP {status}, a redirect to another address, which is not followed"
        )
    if status >= 400:
        detail = ""
        content_type = response.headers.get("Content-Type", "").lower()
        if status < 500 and "html" not in content_type and response.text.strip():
            detail = ": " + request.redact(" ".join(response.text.split()))[:200]
        raise ToolFailed(f"the service answered HTTP {status}{detail}")
    return _shown(tool, request, response, arguments)


def custom_tool_exchange(tool: CustomTool, arguments: Mapping[str, Any], identity: str | None) -> Exchange:
    """Build, send and judge one call inside a `captain.http_tool` span; never raises for a bad answer."""
    exchange = Exchange()
    record_content = bool(captain_setting("RECORD_CONTENT"))
    tracer = trace.get_tracer(sc.TRACER_NAME)
    started = time.monotonic()
    with tracer.start_as_current_span(sc.SPAN_HTTP_TOOL) as span:
        span.set_attribute(sc.GEN_AI_TOOL_NAME, tool.name)
        span.set_attribute(sc.CAPTAIN_HTTP_METHOD, tool.method)
        try:
            exchange.request = _request(tool, arguments, identity)
            span.set_attribute(sc.CAPTAIN_HTTP_URL, exchange.request.redact(exchange.request.url))
            span.set_attribute(sc.CAPTAIN_HTTP_REQUEST_HEADERS, json.dumps(exchange.request.redacted_headers))
            if record_content and exchange.request.body is not None:
                span.set_attribute(
                    sc.CAPTAIN_HTTP_REQUEST_BODY,
                    exchange.request.redact(exchange.request.body)[:RECORDED_BODY_CHARS],
                )
            response = _send(tool, exchange.request, exchange)
            if response is not None:
                exchange.status = response.status_code
                exchange.content_type = response.headers.get("Content-Type", "")
                exchange.response_text = response.text
                span.set_attribute(sc.CAPTAIN_HTTP_STATUS_CODE, response.status_code)
                if record_content:
                    span.set_attribute(
                        sc.CAPTAIN_HTTP_RESPONSE_BODY,
                        exchange.request.redact(response.text[:RECORDED_BODY_CHARS]),
                    )
                exchange.shown = _judge(tool, exchange.request, response, arguments)
        except ToolFailed as exc:
            exchange.error = str(exc)
        except Exception as exc:  # never a crash for the run or a 500 for the test call; no message: it may
            # quote the request
            logger.warning("custom tool %s (#%s): %s", tool.name, tool.pk, type(exc).__name__)
            exchange.error = f"the request could not be made ({type(exc).__name__})"
        exchange.elapsed_ms = (time.monotonic() - started) * 1000
        span.set_attribute(sc.CAPTAIN_HTTP_ATTEMPTS, exchange.attempts)
        if exchange.error:
            if exchange.request is not None:
                exchange.error = exchange.request.redact(exchange.error)
            span.set_attribute(sc.CAPTAIN_HTTP_ERROR, exchange.error)
            span.set_status(Status(StatusCode.ERROR, "http_tool_failed"))
    logger.info(
        "custom tool %s (#%s): %s -> %s in %.0f ms, %d attempt(s)%s",
        tool.name,
        tool.pk,
        tool.method,
        exchange.status,
        exchange.elapsed_ms,
        exchange.attempts,
        f": {exchange.error}" if exchange.error else "",
    )
    return exchange


def custom_tool_call(tool: CustomTool, arguments: Mapping[str, Any], *, contact_identity: str | None) -> str:
    """Make the call and return what the model sees; ToolFailed (a short, secret-free message) otherwise.
    `arguments` were validated against the tool's schema by the runtime."""
    exchange = custom_tool_exchange(tool, arguments, contact_identity)
    if exchange.error:
        raise ToolFailed(exchange.error)
    return exchange.shown
