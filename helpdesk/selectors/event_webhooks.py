"""Reads of an account's event webhook endpoints and their delivery log; another account's rows are 404."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from helpdesk.models import WebhookDelivery, WebhookEndpoint


def account_webhook_endpoints(*, account_id: int) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(account_id=account_id).order_by("name")


def access_webhook_endpoint(*, account_id: int, endpoint_id: int) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(account_id=account_id, pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("No such webhook endpoint.")
    return endpoint


def webhook_deliveries(
    *, account_id: int, endpoint_id: int | None = None, status: str = ""
) -> QuerySet[WebhookDelivery]:
    """The delivery log, newest first."""
    rows = WebhookDelivery.objects.filter(account_id=account_id)
    if endpoint_id is not None:
        rows = rows.filter(endpoint_id=endpoint_id)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("-created_at", "-pk")


def access_webhook_delivery(*, account_id: int, delivery_id: int) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.filter(account_id=account_id, pk=delivery_id).first()
    if delivery is None:
        raise Http404("No such webhook delivery.")
    return delivery
