"""Custom HTTP tools: an account's own API calls a scenario may make (issue 15).

A builder describes the request (method, URL and body templates, authentication, limits) and what the model
sees of the answer; `custom_tool_call` makes it through the outbound HTTP policy. Rules that hold everywhere:

- Templates follow the tool-template policy (`captain.prompts.policy`: an allowlist of constructs and filters,
  checked on save and before every render) and are rendered in the one prompt sandbox
  (`captain.prompts.sandbox`, through `overlay`: the same sandbox class, time and size bounds and
  StrictUndefined, only the output finalizer differs). The arguments are always
  values, never template source: in the URL each `{{ value }}` is percent-encoded with no safe character, so
  `../admin?x=1` stays one path segment; in the body each `{{ value }}` is JSON-encoded, so a string cannot
  close its quotes. The URL's scheme and host are fixed by the builder (checked on save), never an argument.
- The secret is decrypted only to build the request headers. Headers are recorded with credentials and the
  contact's identity replaced by "[redacted]", and every text that leaves this module (the model's output,
  errors, span attributes) has the secret removed, in case a service echoes it.
- Only idempotent methods are retried, once, and only on a connection error, a timeout or 502/503/504.
- Every bad answer becomes a `ToolFailed` with a short message the model can act on.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from jinja2 import Template
from jsonpath_ng import JSONPath
from jsonpath_ng.ext import parse as jsonpath_parse
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from captain.actions.models import CUSTOM_TOOL_NAME_PATTERN, CustomTool
from captain.assistants.services.builder import FieldErrors, raise_field_errors
from captain.assistants.services.destinations import Origin, secret_stays, url_origin
from captain.conf import captain_setting
from captain.crypto import SecretUnreadable, secret_decrypt, secret_encrypt
from captain.prompts.policy import TOOL_TEMPLATE, check_policy, check_tool_template, parse
from captain.prompts.sandbox import PromptTemplateError, env, render
from captain.runtime import semconv as sc
from captain.runtime.types import ToolFailed
from helpdesk.models import Account, Conversation
from helpdesk.outbound import OutboundRefused, ResponseTooLarge, outbound_client, validate_outbound_url

logger = logging.getLogger(__name__)

MAX_TIMEOUT_SECONDS = 30.0
MAX_RESPONSE_BYTES = 1_000_000
MAX_MODEL_CHARS = 40_000
"""What the model sees of one answer at most; the runtime stores long outputs as artifacts anyway."""
RECORDED_BODY_CHARS = 4_000
"""The start of a request or response body kept on the span (content recording on only)."""
REDACTED = "[redacted]"
IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE"})
RETRY_STATUSES = frozenset({502, 503, 504})
RETRY_PAUSE_SECONDS = 0.2
DEFAULT_API_KEY_HEADER = "X-API-Key"
RESPONSE_VARIABLE = "response"

CUSTOM_TOOL_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "parameters",
    "method",
    "url_template",
    "body_template",
    "auth_type",
    "auth_header",
    "auth_username",
    "identity_header",
    "timeout_seconds",
    "max_response_bytes",
    "response_path",
    "response_template",
    "safe",
    "confirmation_template",
    "enabled",
)
"""What a builder writes on a custom tool besides its secret (API serializers and the admin form)."""

_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,99}$")
_RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "accept-encoding", "cookie"}
)
_PARAMETER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_SAMPLES: dict[str, Any] = {
    "string": "sample",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


# ---- templates ----------------------------------------------------------------------------------------------


def _url_value(value: Any) -> str:
    """An argument inside the URL: one percent-encoded value that cannot change the URL's structure."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    return quote(str(value), safe="")


def _json_value(value: Any) -> str:
    """An argument inside the body: a JSON value (a string cannot close its quotes)."""
    return json.dumps(value, ensure_ascii=False)


# Overlays of the one sandbox (same class, limits and StrictUndefined); only what `{{ ... }}` outputs differs.
_ENVIRONMENTS = {
    "url": env.overlay(finalize=_url_value),
    "json": env.overlay(finalize=_json_value),
    "text": env,
}


def _template_problem(source: str, allowed: Iterable[str]) -> str | None:
    """Why `source` cannot be a tool template (None when it can): syntax, a construct the tool-template policy
    does not allow (calls, `**`, nested loops, width filters: `captain.prompts.policy`), or a variable that is not
    one of `allowed`."""
    try:
        check_tool_template(source, allowed)
    except PromptTemplateError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=512)
def _compiled(kind: str, source: str) -> Template:
    """`source` checked against the tool-template policy, then compiled. The check runs before every render, not
    only on save: a template stored before the policy existed gets the same rules."""
    check_policy(parse(source), TOOL_TEMPLATE)
    return _ENVIRONMENTS[kind].from_string(source)


def _render(kind: str, source: str, variables: Mapping[str, Any]) -> str:
    """Render a tool template within the sandbox's time and size bounds; PromptTemplateError on any failure."""
    try:
        return render(_compiled(kind, source), variables)
    except PromptTemplateError:
        raise
    except Exception as exc:  # builder template failures of any kind (incl. the sandbox's SecurityError)
        raise PromptTemplateError(f"{type(exc).__name__}: {exc}") from exc


def _properties(tool: CustomTool) -> dict[str, Any]:
    properties = (tool.parameters or {}).get("properties") or {}
    return properties if isinstance(properties, dict) else {}


def _variables(tool: CustomTool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared parameter (None when not given, so optional ones may be tested with `if`)."""
    variables: dict[str, Any] = dict.fromkeys(_properties(tool))
    variables.update({k: v for k, v in arguments.items() if k in variables})
    return variables


def custom_tool_schema(tool: CustomTool) -> dict[str, Any]:
    """The JSON schema the runtime validates arguments against: the builder's, closed to extra arguments."""
    schema = dict(tool.parameters or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    return schema


def custom_tool_url(tool: CustomTool, arguments: Mapping[str, Any]) -> str:
    """The request URL with each argument percent-encoded; ToolFailed when the template cannot render."""
    try:
        return _render("url", tool.url_template, _variables(tool, arguments)).strip()
    except PromptTemplateError as exc:
        raise ToolFailed(
            f"the tool's URL template cannot be rendered ({exc}); the tool needs fixing"
        ) from exc


def _body(tool: CustomTool, arguments: Mapping[str, Any]) -> str | None:
    if tool.method == CustomTool.Method.GET:
        return None
    if not tool.body_template.strip():
        return json.dumps(dict(arguments), ensure_ascii=False)
    try:
        rendered = _render("json", tool.body_template, _variables(tool, arguments))
    except PromptTemplateError as exc:
        raise ToolFailed(
            f"the tool's body template cannot be rendered ({exc}); the tool needs fixing"
        ) from exc
    try:
        json.loads(rendered)
    except ValueError as exc:
        raise ToolFailed(
            "the tool's body template does not produce valid JSON; the tool needs fixing"
        ) from exc
    return rendered


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text)[:300].rstrip(".!?")


def custom_tool_confirmation(tool: CustomTool, arguments: Mapping[str, Any]) -> str:
    """The question the customer confirms before a call that changes something runs."""
    if tool.confirmation_template.strip():
        try:
            return _render("text", tool.confirmation_template, _variables(tool, arguments)).strip()
        except PromptTemplateError:
            logger.warning(
                "custom tool %s: confirmation template failed; using the default question", tool.pk
            )
    shown = ", ".join(f"{k}: {_plain(v)}" for k, v in arguments.items())
    what = _first_sentence(tool.description) or tool.name
    return f"Please confirm: {what}{f' ({shown})' if shown else ''}. Reply yes to go ahead or no to cancel."


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# ---- validation on save ---------------------------------------------------------------------------------------


def _sample_arguments(parameters: Mapping[str, Any], variant: str) -> dict[str, Any]:
    samples: dict[str, Any] = {}
    for name, spec in (parameters.get("properties") or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if isinstance(spec, dict) and spec.get("enum"):
            samples[name] = spec["enum"][0]
        elif kind in (None, "string"):
            samples[name] = f"{variant}{name}"
        else:
            samples[name] = _SAMPLES.get(kind, variant)
    return samples


def _parameters_errors(parameters: Any) -> list[str]:
    if not isinstance(parameters, dict):
        return ['A JSON schema object, e.g. {"type": "object", "properties": {...}}.']
    if parameters.get("type", "object") != "object":
        return ['The arguments schema must have "type": "object".']
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as exc:
        return [f"Not a valid JSON schema: {exc.message}"]
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict):
        return ['"properties" must be an object.']
    bad = [n for n in properties if not _PARAMETER_NAME.match(n) or n == RESPONSE_VARIABLE]
    if bad:
        return [
            f"Parameter name(s) {', '.join(map(repr, bad))}: use letters, digits and underscores, starting "
            f"with a letter ('{RESPONSE_VARIABLE}' is reserved)."
        ]
    return []


def _header_errors(value: str) -> list[str]:
    if value and (not _HEADER_NAME.match(value) or value.lower() in _RESERVED_HEADERS):
        return [f"{value!r} cannot be used: a header name (letters, digits, '-'), not {_RESERVED_HEADERS}."]
    return []


def _url_errors(tool: CustomTool) -> list[str]:
    problem = _template_problem(tool.url_template, _properties(tool))
    if problem:
        return [problem]
    try:
        urls = [
            _render("url", tool.url_template, _sample_arguments(tool.parameters or {}, variant))
            for variant in ("a", "b")
        ]
        hosts = [httpx.URL(url.strip()) for url in urls]
    except (PromptTemplateError, httpx.InvalidURL) as exc:
        return [f"The URL template cannot be rendered: {exc}"]
    if hosts[0].scheme != hosts[1].scheme or hosts[0].netloc != hosts[1].netloc:
        return ["The scheme and host must be written in the URL, not taken from the arguments."]
    try:
        validate_outbound_url(urls[0].strip())
    except ValidationError as exc:
        return list(exc.messages)
    return []


def _body_errors(tool: CustomTool) -> list[str]:
    if not tool.body_template.strip():
        return []
    if tool.method == CustomTool.Method.GET:
        return ["A GET request has no body: empty the body template or choose another method."]
    problem = _template_problem(tool.body_template, _properties(tool))
    if problem:
        return [problem]
    try:
        json.loads(_render("json", tool.body_template, _sample_arguments(tool.parameters or {}, "a")))
    except PromptTemplateError as exc:
        return [f"The body template cannot be rendered: {exc}"]
    except ValueError:
        return [
            'The body template must produce JSON. Write values without quotes: {"id": {{ order_id }}} '
            "(each value is JSON-encoded)."
        ]
    return []


def custom_tool_errors(*, account_id: int, tool: CustomTool) -> FieldErrors:
    """Why `tool` (an unsaved or changed row) cannot be stored; {} when it can."""
    from captain.actions.services.tools import BUILTIN_TOOL_NAMES

    errors: FieldErrors = {}
    name = tool.name or ""
    if not re.match(CUSTOM_TOOL_NAME_PATTERN, name):
        errors["name"] = ["Lowercase letters, digits and underscores, starting with a letter (at most 48)."]
    elif name in BUILTIN_TOOL_NAMES or name.startswith("handoff_to_"):
        errors["name"] = [f"{name!r} is a built-in tool name or a handoff name; choose another."]
    elif CustomTool.objects.filter(account_id=account_id, name=name).exclude(pk=tool.pk).exists():
        errors["name"] = [f"This account already has a tool named {name!r}."]
    if not (tool.description or "").strip():
        errors["description"] = ["Say what the tool does and when to use it: the model reads it."]
    if tool.method not in CustomTool.Method.values:
        errors["method"] = [f"One of {', '.join(CustomTool.Method.values)}."]
    if tool.auth_type not in CustomTool.Auth.values:
        errors["auth_type"] = [f"One of {', '.join(CustomTool.Auth.values)}."]
    errors["parameters"] = _parameters_errors(
        tool.parameters if tool.parameters != {} else {"type": "object"}
    )
    if not errors["parameters"]:
        errors["url_template"] = _url_errors(tool)
        errors["body_template"] = _body_errors(tool)
        for field_name, extra in (("response_template", (RESPONSE_VARIABLE,)), ("confirmation_template", ())):
            source = getattr(tool, field_name)
            if source.strip():
                problem = _template_problem(source, [*_properties(tool), *extra])
                errors[field_name] = [problem] if problem else []
    if tool.response_path.strip():
        try:
            jsonpath_parse(tool.response_path)
        except Exception as exc:  # the parser raises JsonPathParserError, but also lexer errors of its own
            errors["response_path"] = [f"Not a JSON path ({type(exc).__name__}); e.g. $.order.status"]
    errors["auth_header"] = _header_errors(tool.auth_header)
    errors["identity_header"] = _header_errors(tool.identity_header)
    if tool.auth_type == CustomTool.Auth.BASIC and not tool.auth_username:
        errors["auth_username"] = ["Basic authentication needs a user name."]
    if not 0 < float(tool.timeout_seconds or 0) <= MAX_TIMEOUT_SECONDS:
        errors["timeout_seconds"] = [f"More than 0 and at most {MAX_TIMEOUT_SECONDS:g} seconds."]
    if not 0 < int(tool.max_response_bytes or 0) <= MAX_RESPONSE_BYTES:
        errors["max_response_bytes"] = [f"More than 0 and at most {MAX_RESPONSE_BYTES} bytes (1 MB)."]
    return {k: v for k, v in errors.items() if v}


def custom_tool_clean(*, account_id: int, tool: CustomTool) -> None:
    """Raise ValidationError({field: [messages]}) unless `tool` may be stored."""
    raise_field_errors(custom_tool_errors(account_id=account_id, tool=tool))


def custom_tool_set_secret(tool: CustomTool, secret: str) -> None:
    """Store `secret` encrypted ("" clears it); the plain value is never kept or shown again."""
    tool.secret_encrypted = secret_encrypt(secret)
    if tool.pk:
        tool.save(update_fields=["secret_encrypted", "updated_at"])


def custom_tool_destination(tool: CustomTool) -> Origin | None:
    """The (scheme, host, port) the tool's requests go to: the URL template rendered with sample arguments (the
    save-time check makes sure no argument can change them)."""
    try:
        return url_origin(_render("url", tool.url_template, _sample_arguments(tool.parameters or {}, "a")))
    except PromptTemplateError:
        return None


def _stored_destination(tool: CustomTool) -> Origin | None:
    """The destination as stored, before this save's changes (the admin's form has already changed `tool`)."""
    stored = CustomTool.objects.filter(pk=tool.pk).first() if tool.pk else None
    return custom_tool_destination(stored) if stored else None


def custom_tool_save(
    *, account: Account, fields: Mapping[str, Any], secret: str | None = None, tool: CustomTool | None = None
) -> CustomTool:
    """Create, or update the given fields; `secret` None keeps the stored one, unless the URL now goes to another
    scheme, host or port (`destinations`): then it is dropped and must be given again. Raises ValidationError."""
    unknown = sorted(set(fields) - set(CUSTOM_TOOL_FIELDS))
    if unknown:
        raise TypeError(f"Not a custom tool field: {', '.join(unknown)}")
    tool = tool or CustomTool(account=account)
    before = _stored_destination(tool)
    for name, value in fields.items():
        setattr(tool, name, value)
    custom_tool_clean(account_id=account.pk, tool=tool)
    if secret is not None:
        tool.secret_encrypted = secret_encrypt(secret)
    elif tool.secret_encrypted and not secret_stays(before, custom_tool_destination(tool)):
        tool.secret_encrypted = ""  # the secret was given for another destination
    try:
        with transaction.atomic():
            tool.save()
    except IntegrityError as exc:  # a concurrent save took the name
        raise ValidationError({"name": [f"This account already has a tool named {tool.name!r}."]}) from exc
    return tool


def custom_tool_delete(*, tool: CustomTool) -> None:
    """Scenarios naming it stop offering it (unknown names are skipped when agents are built)."""
    tool.delete()


def custom_tool_names(*, account_id: int) -> list[str]:
    return list(CustomTool.objects.filter(account_id=account_id).values_list("name", flat=True))


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


# ---- making the call ------------------------------------------------------------------------------------------


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
class _Exchange:
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
    body = _body(tool, arguments)
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


def _send(tool: CustomTool, request: _Request, exchange: _Exchange) -> httpx.Response | None:
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
        shown = _plain(picked)
    elif tool.response_template.strip():
        try:
            shown = _render(
                "text", tool.response_template, {**_variables(tool, arguments), RESPONSE_VARIABLE: data}
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


def _perform(tool: CustomTool, arguments: Mapping[str, Any], identity: str | None) -> _Exchange:
    """Build, send and judge one call inside a `captain.http_tool` span; never raises for a bad answer."""
    exchange = _Exchange()
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
    exchange = _perform(tool, arguments, contact_identity)
    if exchange.error:
        raise ToolFailed(exchange.error)
    return exchange.shown


def custom_tool_test_call(
    tool: CustomTool, arguments: Mapping[str, Any], *, contact_identity: str | None = None
) -> dict[str, Any]:
    """The admin's and the API's test call: the request (credentials redacted) and the response or the error.
    Never raises for bad arguments or a bad answer. It really sends, POST included: it is a test of the API."""
    try:
        jsonschema.validate(dict(arguments), custom_tool_schema(tool))
    except jsonschema.ValidationError as exc:
        return _Exchange(error=f"invalid arguments: {exc.message}").record()
    return _perform(tool, arguments, contact_identity).record()
