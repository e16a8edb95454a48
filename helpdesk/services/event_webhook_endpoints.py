"""Outbound event webhooks: an account's endpoints (URL, events, signing secret), created, changed and deleted
here; what is sent to them and when is in helpdesk.services.event_webhooks."""

from __future__ import annotations

from collections.abc import Iterable

from helpdesk.models import WebhookEndpoint, WebhookEvent
from helpdesk.models.webhooks import new_webhook_secret
from helpdesk.outbound import OutboundRefused, check_url

MAX_ENDPOINTS_PER_ACCOUNT = 20


class WebhookEndpointInvalid(ValueError):
    """A refused endpoint: the URL (outbound policy), an unknown event, a taken name, too many endpoints."""


def _clean_events(events: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(events))
    unknown = [event for event in chosen if event not in WebhookEvent.values]
    if unknown:
        raise WebhookEndpointInvalid(f"Unknown events: {', '.join(unknown)}.")
    if not chosen:
        raise WebhookEndpointInvalid("Choose at least one event.")
    return chosen


def _clean_url(url: str) -> str:
    try:
        check_url(url)
    except OutboundRefused as exc:
        raise WebhookEndpointInvalid(f"This URL is refused by the outbound policy: {exc}.") from exc
    return url


def webhook_endpoint_create(
    *, account_id: int, name: str, url: str, events: Iterable[str], enabled: bool = True
) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its signing secret, which is returned this once and stored encrypted."""
    if WebhookEndpoint.objects.filter(account_id=account_id).count() >= MAX_ENDPOINTS_PER_ACCOUNT:
        raise WebhookEndpointInvalid(f"An account has at most {MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints.")
    if WebhookEndpoint.objects.filter(account_id=account_id, name=name).exists():
        raise WebhookEndpointInvalid(f"There is already an endpoint named {name!r}.")
    endpoint = WebhookEndpoint(
        account_id=account_id, name=name, url=_clean_url(url), events=_clean_events(events), enabled=enabled
    )
    secret = new_webhook_secret()
    endpoint.secret_set(secret)
    endpoint.save()
    return endpoint, secret


def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    name: str | None = None,
    url: str | None = None,
    events: Iterable[str] | None = None,
    enabled: bool | None = None,
    new_secret: bool = False,
) -> str | None:
    """Change what is given; `new_secret` makes a new signing secret and returns it (this once). Nothing given
    changes nothing (an empty PATCH), not even `updated_at`."""
    before = (endpoint.name, endpoint.url, list(endpoint.events), endpoint.enabled)
    if name is not None and name != endpoint.name:
        if WebhookEndpoint.objects.filter(account_id=endpoint.account_id, name=name).exists():
            raise WebhookEndpointInvalid(f"There is already an endpoint named {name!r}.")
        endpoint.name = name
    if url is not None and url != endpoint.url:
        endpoint.url = _clean_url(url)
    if events is not None:
        endpoint.events = _clean_events(events)
    if enabled is not None:
        endpoint.enabled = enabled
    secret = None
    if new_secret:
        secret = new_webhook_secret()
        endpoint.secret_set(secret)
    if secret is not None or before != (endpoint.name, endpoint.url, list(endpoint.events), endpoint.enabled):
        endpoint.save()
    return secret


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()
