"""Model endpoints: which server answers for an assistant, with which key, which models, at what price.

Two kinds, resolved by name for an account (its own endpoints first, then the operator's):
- the operator's endpoints (`CAPTAIN["MODEL_ENDPOINTS"]`): URL and key from the server's settings, the models
  tenants may choose and the credits a reply on each costs. Tenants pick them by name and never set their URL,
  so the platform's key only ever goes to the platform's endpoints;
- an account's own endpoints (`ModelEndpoint` rows): the tenant's URL with the tenant's key (encrypted at rest),
  reached only through the outbound HTTP policy (helpdesk.outbound), charged `OWN_ENDPOINT_CREDITS_PER_REPLY`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from captain.assistants.models import Assistant, ModelEndpoint
from captain.assistants.services.destinations import secret_stays, url_origin
from captain.conf import captain_setting
from captain.crypto import SecretUnreadable, secret_decrypt, secret_encrypt
from captain.model_gate import gate_for
from captain.routing.models import RoutingConfig, RoutingNode
from captain.runtime import ModelClient, OpenAIChatModel, make_openai_client
from helpdesk.models import Account
from helpdesk.outbound import OutboundRefused, check_url, outbound_client, validate_outbound_url

DEFAULT_ENDPOINT = "default"


class EndpointUnavailable(Exception):
    """The endpoint or model an assistant names cannot be used now; `str(exc)` is a reason for people."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str
    model_credits: dict[str, int]
    """Models offered and the credits a reply on each costs; empty for an own endpoint that accepts any name."""
    own_id: int | None = None
    """The ModelEndpoint row of an account's own endpoint; None for the operator's."""
    default_credits: int = 1
    api_key: str = field(default="", repr=False)
    vision_models: frozenset[str] = frozenset()
    """Models on it that accept images (Chat Completions `image_url` parts): customers' photos reach them."""
    text_tool_models: frozenset[str] = frozenset()
    """Models on it that cannot return native tool calls: their agents use the text tool protocol."""

    @property
    def is_own(self) -> bool:
        return self.own_id is not None

    @property
    def default_model(self) -> str:
        return next(iter(self.model_credits), "")

    def offers(self, model: str) -> bool:
        return model in self.model_credits or (self.is_own and not self.model_credits)

    def credits_for(self, model: str) -> int:
        return self.model_credits.get(model, self.default_credits)

    def model_or_default(self, model: str) -> str:
        return model or self.default_model or captain_setting("DEFAULT_MODEL")

    def sees_images(self, model: str) -> bool:
        """Whether `model` on this endpoint is declared able to see images (a `vision` list per operator
        endpoint, `ModelEndpoint.vision_models` for an account's own); a model that is not declared gets a
        statement that it cannot see them instead."""
        return model in self.vision_models

    def uses_text_tools(self, model: str) -> bool:
        """Whether `model` on this endpoint gets its tools through the text protocol (Thought and tagged
        actions in the reply) instead of native tool calls: declared per model (`CAPTAIN_TEXT_TOOL_MODELS` for
        the default endpoint, a `text_tools` list per configured endpoint, `ModelEndpoint.text_tool_models`
        for an account's own), as `manage.py captain_probe_tools` recommends."""
        return model in self.text_tool_models


# ---- the operator's endpoints ---------------------------------------------------------------------------------


def _parse_models(value: Any, where: str) -> dict[str, int]:
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = [(name, captain_setting("CREDITS_PER_REPLY")) for name in value]
    else:
        raise ValueError(f"{where}: 'models' must map model names to credits per reply")
    models: dict[str, int] = {}
    for name, credits in items:
        if not isinstance(name, str) or not name or not isinstance(credits, int) or credits < 0:
            raise ValueError(f"{where}: model {name!r} needs a non-negative whole number of credits")
        models[name] = credits
    return models


def _extra_models(spec: str) -> dict[str, int]:
    """`CAPTAIN_MODELS="gpt-4o-mini=1,gpt-4o=10"`: more models on the default endpoint, with their price."""
    models: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, credits = item.partition("=")
        models[name.strip()] = int(credits) if credits.strip() else captain_setting("CREDITS_PER_REPLY")
    return models


def operator_endpoints() -> dict[str, Endpoint]:
    """The endpoints the operator offers, by name, in the order configured (the first is the default)."""
    configured = captain_setting("MODEL_ENDPOINTS")
    if isinstance(configured, str):  # from the CAPTAIN_MODEL_ENDPOINTS environment variable
        try:
            configured = json.loads(configured)
        except ValueError as exc:
            raise ValueError(f"CAPTAIN_MODEL_ENDPOINTS is not valid JSON: {exc}") from exc
    if configured and not isinstance(configured, dict):
        raise ValueError("CAPTAIN['MODEL_ENDPOINTS'] must map endpoint names to their settings")
    if not configured:
        models = {captain_setting("DEFAULT_MODEL"): captain_setting("CREDITS_PER_REPLY")}
        models.update(_extra_models(captain_setting("EXTRA_MODELS")))
        return {
            DEFAULT_ENDPOINT: Endpoint(
                name=DEFAULT_ENDPOINT,
                base_url=captain_setting("OPENAI_BASE_URL"),
                model_credits=models,
                default_credits=captain_setting("CREDITS_PER_REPLY"),
                api_key=captain_setting("OPENAI_API_KEY"),
                vision_models=_names(captain_setting("VISION_MODELS")),
                text_tool_models=_names(captain_setting("TEXT_TOOL_MODELS")),
            )
        }
    endpoints: dict[str, Endpoint] = {}
    for name, spec in configured.items():
        where = f"CAPTAIN['MODEL_ENDPOINTS'][{name!r}]"
        if not isinstance(spec, dict) or not spec.get("base_url"):
            raise ValueError(f"{where} needs a 'base_url'")
        key_env = spec.get("api_key_env") or ""
        if key_env and key_env not in os.environ:
            raise ValueError(f"{where}: the environment variable {key_env} (its api_key_env) is not set")
        key = spec.get("api_key") or os.environ.get(key_env, "")
        vision = spec.get("vision") or []
        if not isinstance(vision, list) or not all(isinstance(m, str) and m for m in vision):
            raise ValueError(f"{where}: 'vision' must list the names of the models that can see images")
        text_tools = spec.get("text_tools") or []
        if not isinstance(text_tools, list) or not all(isinstance(m, str) and m for m in text_tools):
            raise ValueError(
                f"{where}: 'text_tools' must list the names of the models that use the text tool protocol"
            )
        endpoints[name] = Endpoint(
            name=name,
            base_url=spec["base_url"],
            model_credits=_parse_models(spec.get("models") or {}, where),
            default_credits=captain_setting("CREDITS_PER_REPLY"),
            api_key=key,
            vision_models=frozenset(vision),
            text_tool_models=frozenset(text_tools),
        )
    return endpoints


def _names(value: Any) -> frozenset[str]:
    """`"a, b"` (a comma-separated setting) or a list, as a set of model names."""
    items = value.split(",") if isinstance(value, str) else list(value or [])
    return frozenset(str(name).strip() for name in items if str(name).strip())


def _default_operator_endpoint() -> Endpoint:
    endpoints = operator_endpoints()
    return endpoints.get(DEFAULT_ENDPOINT) or next(iter(endpoints.values()))


# ---- resolving a name for an account ----------------------------------------------------------------------------


def _own_endpoint(row: ModelEndpoint) -> Endpoint:
    try:
        key = secret_decrypt(row.api_key_encrypted)
    except SecretUnreadable as exc:
        raise EndpointUnavailable(
            f"The key of model endpoint {row.name!r} cannot be read: enter it again."
        ) from exc
    credits = captain_setting("OWN_ENDPOINT_CREDITS_PER_REPLY")
    return Endpoint(
        name=row.name,
        base_url=row.base_url,
        model_credits={str(name): credits for name in row.model_names or []},
        own_id=row.pk,
        default_credits=credits,
        api_key=key,
        vision_models=frozenset(str(name) for name in row.vision_models or [] if name),
        text_tool_models=_names(row.text_tool_models),
    )


def endpoint_for(*, account_id: int, name: str) -> Endpoint:
    """The endpoint `name` means for this account ("" is the operator's default). Raises EndpointUnavailable."""
    if not name:
        return _default_operator_endpoint()
    row = ModelEndpoint.objects.filter(account_id=account_id, name=name).first()
    if row is not None:
        if not captain_setting("OWN_ENDPOINTS_ALLOWED"):
            raise EndpointUnavailable("This server does not allow accounts' own model endpoints.")
        return _own_endpoint(row)
    endpoint = operator_endpoints().get(name)
    if endpoint is None:
        raise EndpointUnavailable(f"There is no model endpoint named {name!r}.")
    return endpoint


def endpoint_names(*, account_id: int) -> list[str]:
    """Every name this account may pick: the operator's endpoints, then its own."""
    own = list(ModelEndpoint.objects.filter(account_id=account_id).values_list("name", flat=True))
    return [*operator_endpoints(), *own]


def endpoint_and_model(*, account_id: int, endpoint: str, model: str) -> tuple[Endpoint, str]:
    """Resolve and check a (endpoint name, model name) choice; raises EndpointUnavailable with the reason."""
    resolved = endpoint_for(account_id=account_id, name=endpoint)
    chosen = resolved.model_or_default(model)
    if not resolved.offers(chosen):
        offered = ", ".join(resolved.model_credits) or "none"
        raise EndpointUnavailable(
            f"Model {chosen!r} is not offered on endpoint {resolved.name!r} (offered: {offered})."
        )
    if resolved.is_own:
        try:
            check_url(resolved.base_url)
        except OutboundRefused as exc:
            raise EndpointUnavailable(f"Model endpoint {resolved.name!r} is refused: {exc}") from exc
    return resolved, chosen


def model_choice_errors(*, account_id: int, endpoint: str, model: str) -> list[str]:
    """Save-time check of an endpoint/model choice: [] when usable, else the reasons (forms and serializers)."""
    try:
        endpoint_and_model(account_id=account_id, endpoint=endpoint, model=model)
    except EndpointUnavailable as exc:
        return [str(exc)]
    return []


# ---- clients ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _operator_sdk_client(base_url: str, api_key: str, timeout: float, retries: int) -> Any:
    return make_openai_client(base_url, api_key, timeout, retries)


def operator_clients_clear() -> None:
    """Forget the cached operator clients (their connection pools); for tests that restart model servers."""
    _operator_sdk_client.cache_clear()


def _sdk_client(endpoint: Endpoint) -> Any:
    timeout = float(captain_setting("LLM_TIMEOUT_SECONDS"))
    retries = int(captain_setting("LLM_MAX_RETRIES"))
    if not endpoint.is_own:
        # One client (and connection pool) per operator endpoint per process; keyed by its settings so a
        # changed setting gets a new client.
        return _operator_sdk_client(endpoint.base_url, endpoint.api_key, timeout, retries)
    # A tenant's endpoint: its own key, and a transport that checks every address it connects to.
    return make_openai_client(
        endpoint.base_url, endpoint.api_key, timeout, retries, http_client=outbound_client(timeout=timeout)
    )


def model_client_for(endpoint: Endpoint) -> ModelClient:
    """The model client for `endpoint`, for agents and routers alike. The SDK client underneath (connection
    pool, timeout, retries) is the cached one; the thin wrapper is new per call, so what it learns about an
    endpoint that refuses the router's optional fields (it then asks plainly) lasts for one decision or run,
    never for the whole process."""
    # The server's endpoints are shared by every account and lane: their calls pass the customers-first gate.
    # An account's own endpoint serves that account alone and its capacity is unknown here: no gate (its
    # background work still runs on the background workers).
    gate = None if endpoint.is_own else gate_for(f"{endpoint.name}|{endpoint.base_url}")
    return OpenAIChatModel(_sdk_client(endpoint), gate=gate)


# ---- an account's own endpoints (writes) -----------------------------------------------------------------------


def model_endpoint_check(
    *, account: Account, name: str, base_url: str, model_names: list[str], pk: int | None
) -> None:
    errors: dict[str, list[str]] = {}
    if not captain_setting("OWN_ENDPOINTS_ALLOWED"):
        raise ValidationError("This server does not allow accounts' own model endpoints.")
    if name in operator_endpoints():
        errors["name"] = [f"{name!r} is the name of one of the server's endpoints; choose another."]
    elif ModelEndpoint.objects.filter(account=account, name=name).exclude(pk__in=[pk] if pk else []).exists():
        errors["name"] = [f"This account already has an endpoint named {name!r}."]
    try:
        validate_outbound_url(base_url)
    except ValidationError as exc:
        errors["base_url"] = list(exc.messages)
    if any(not isinstance(m, str) or not m.strip() for m in model_names):
        errors["model_names"] = ["Model names must be non-empty strings."]
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def model_endpoint_save(
    *,
    account: Account,
    name: str,
    base_url: str,
    model_names: list[str],
    api_key: str | None,
    endpoint: ModelEndpoint | None = None,
    text_tool_models: list[str] | None = None,
) -> ModelEndpoint:
    """Create or update an account's own endpoint. `api_key` None keeps the stored key ("" clears it), unless
    the base URL now goes to another scheme, host or port (`destinations`): then it is dropped.
    `text_tool_models` None keeps the stored list (the models that use the text tool protocol).
    Raises ValidationError (per field) for a refused URL, a name taken, or own endpoints turned off."""
    model_endpoint_check(
        account=account,
        name=name,
        base_url=base_url,
        model_names=model_names,
        pk=endpoint.pk if endpoint else None,
    )
    if text_tool_models is not None and any(
        not isinstance(m, str) or not m.strip() for m in text_tool_models
    ):
        raise ValidationError({"text_tool_models": ["Model names must be non-empty strings."]})
    endpoint = endpoint or ModelEndpoint(account=account)
    stored = ModelEndpoint.objects.filter(pk=endpoint.pk).first() if endpoint.pk else None
    endpoint.name, endpoint.base_url, endpoint.model_names = name, base_url, list(model_names)
    if text_tool_models is not None:
        endpoint.text_tool_models = sorted({m.strip() for m in text_tool_models})
    if api_key is not None:
        endpoint.api_key_encrypted = secret_encrypt(api_key)
    elif stored and not secret_stays(url_origin(stored.base_url), url_origin(base_url)):
        endpoint.api_key_encrypted = ""  # the key was given for another server
    endpoint.save()
    return endpoint


def model_endpoint_set_text_tools(*, endpoint: ModelEndpoint, model: str, text_tools: bool) -> list[str]:
    """Declare whether `model` on an account's own endpoint uses the text tool protocol (what
    `captain_probe_tools --save` found); returns the endpoint's list as stored."""
    names = {str(name) for name in endpoint.text_tool_models or [] if name}
    names = names | {model} if text_tools else names - {model}
    endpoint.text_tool_models = sorted(names)
    endpoint.save(update_fields=["text_tool_models"])
    return list(endpoint.text_tool_models)


def model_endpoint_delete(*, endpoint: ModelEndpoint) -> None:
    """Delete an account's own endpoint; refused (ValidationError) while an assistant or a router names it."""
    users = sorted(
        set(
            Assistant.objects.filter(account=endpoint.account, model_endpoint=endpoint.name).values_list(
                "name", flat=True
            )
        )
        | set(
            RoutingConfig.objects.filter(
                assistant__account=endpoint.account, router_endpoint=endpoint.name
            ).values_list("assistant__name", flat=True)
        )
        | set(
            RoutingNode.objects.filter(
                assistant__account=endpoint.account, router_endpoint=endpoint.name
            ).values_list("assistant__name", flat=True)
        )
    )
    if users:
        raise ValidationError(
            f"Endpoint {endpoint.name!r} is used by: {', '.join(users)}. Switch them first."
        )
    endpoint.delete()
