"""Outbound event webhooks over the REST API (administrators of the account only; another account's rows 404).

- `accounts/<id>/webhooks/`: `GET` the endpoints; `POST` one (`name`, `url`, `events`, `enabled`). The answer
  carries the signing `secret` this once; it is stored encrypted and never shown again.
- `accounts/<id>/webhooks/<wid>/`: `GET`; `PATCH` any of those fields, `new_secret: true` for a new secret
  (answered once, like on creation); `DELETE`.
- `accounts/<id>/webhook-deliveries/`: `GET` the delivery log, newest first (`?endpoint=&status=`, paginated):
  event, status (queued, sent, failed), attempts, last error and HTTP status, duration.
- `accounts/<id>/webhook-deliveries/<did>/replay/`: `POST` sends the event again (same event id) as a new
  delivery; 202 with it.

Each event is POSTed as JSON `{"event", "event_id", "account_id", "created_at", "data"}` signed like the API
channel: `X-Helpdesk-Timestamp` and `X-Helpdesk-Signature: sha256=<hex HMAC-SHA256(secret, "{ts}.{body}")>`,
with `X-Helpdesk-Event-Id` (the same on retries and replays).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from helpdesk.selectors.event_webhooks import (
    access_webhook_delivery,
    access_webhook_endpoint,
    account_webhook_endpoints,
    webhook_deliveries,
)
from helpdesk.services.event_webhook_endpoints import (
    WebhookEndpointInvalid,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_update,
)
from helpdesk.services.event_webhooks import webhook_delivery_replay

from .auth import AccountAdminApi, Pagination, paginated_response

ACCOUNT = "accounts/<id:account_id>/"


@contextmanager
def refusals_as_400() -> Iterator[None]:
    try:
        yield
    except WebhookEndpointInvalid as exc:
        raise serializers.ValidationError({"non_field_errors": [str(exc)]}) from exc


class WebhookEndpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookEndpoint
        ref_name = "WebhookEndpoint"
        fields = ["id", "name", "url", "events", "enabled", "created_at", "updated_at"]
        read_only_fields = fields


class WebhookEndpointInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    url = serializers.URLField(max_length=500)
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEvent.choices), max_length=10)
    enabled = serializers.BooleanField(required=False)
    new_secret = serializers.BooleanField(required=False, help_text="PATCH only: make a new signing secret.")

    class Meta:
        ref_name = "WebhookEndpointInput"


class WebhookDeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        ref_name = "WebhookDelivery"
        fields = [
            "id",
            "endpoint",
            "event",
            "event_id",
            "status",
            "attempts",
            "last_error",
            "last_status_code",
            "duration_ms",
            "replay_of",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


def _with_secret(endpoint: WebhookEndpoint, secret: str | None, code: int = status.HTTP_200_OK) -> Response:
    body = dict(WebhookEndpointSerializer(endpoint).data)
    if secret:
        body["secret"] = secret  # shown this once
    return Response(body, status=code)


class WebhookEndpointCollectionApi(AccountAdminApi):
    @extend_schema(responses=WebhookEndpointSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        endpoints = account_webhook_endpoints(account_id=self.account_id)
        return Response(WebhookEndpointSerializer(endpoints, many=True).data)

    @extend_schema(request=WebhookEndpointInputSerializer, responses={201: WebhookEndpointSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = WebhookEndpointInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with refusals_as_400():
            endpoint, secret = webhook_endpoint_create(
                account_id=self.account_id,
                name=values["name"],
                url=values["url"],
                events=values["events"],
                enabled=values.get("enabled", True),
            )
        return _with_secret(endpoint, secret, status.HTTP_201_CREATED)


class WebhookEndpointDetailApi(AccountAdminApi):
    @extend_schema(responses=WebhookEndpointSerializer)
    def get(self, request: Request, account_id: int, webhook_id: int) -> Response:
        endpoint = access_webhook_endpoint(account_id=self.account_id, endpoint_id=webhook_id)
        return Response(WebhookEndpointSerializer(endpoint).data)

    @extend_schema(request=WebhookEndpointInputSerializer(partial=True), responses=WebhookEndpointSerializer)
    def patch(self, request: Request, account_id: int, webhook_id: int) -> Response:
        endpoint = access_webhook_endpoint(account_id=self.account_id, endpoint_id=webhook_id)
        data = WebhookEndpointInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with refusals_as_400():
            secret = webhook_endpoint_update(
                endpoint=endpoint,
                name=values.get("name"),
                url=values.get("url"),
                events=values.get("events"),
                enabled=values.get("enabled"),
                new_secret=values.get("new_secret", False),
            )
        return _with_secret(endpoint, secret)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, webhook_id: int) -> Response:
        endpoint = access_webhook_endpoint(account_id=self.account_id, endpoint_id=webhook_id)
        webhook_endpoint_delete(endpoint=endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliveryQuerySerializer(serializers.Serializer):
    endpoint = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices, required=False)


class WebhookDeliveryListApi(AccountAdminApi):
    # Lets the schema say the answer is a page ({count, next, previous, results}) with limit/offset.
    pagination_class = Pagination

    @extend_schema(
        parameters=[DeliveryQuerySerializer],
        responses=WebhookDeliverySerializer(many=True),
    )
    def get(self, request: Request, account_id: int) -> Response:
        query = DeliveryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = webhook_deliveries(
            account_id=self.account_id,
            endpoint_id=query.validated_data.get("endpoint"),
            status=query.validated_data.get("status", ""),
        )
        return paginated_response(
            request=request, view=self, queryset=rows, serializer_class=WebhookDeliverySerializer
        )


class WebhookDeliveryReplayApi(AccountAdminApi):
    @extend_schema(request=None, responses={202: WebhookDeliverySerializer})
    def post(self, request: Request, account_id: int, delivery_id: int) -> Response:
        delivery = access_webhook_delivery(account_id=self.account_id, delivery_id=delivery_id)
        replay = webhook_delivery_replay(delivery=delivery)
        return Response(WebhookDeliverySerializer(replay).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path(f"{ACCOUNT}webhooks/", WebhookEndpointCollectionApi.as_view(), name="webhook-endpoint-list"),
    path(
        f"{ACCOUNT}webhooks/<id:webhook_id>/",
        WebhookEndpointDetailApi.as_view(),
        name="webhook-endpoint-detail",
    ),
    path(f"{ACCOUNT}webhook-deliveries/", WebhookDeliveryListApi.as_view(), name="webhook-delivery-list"),
    path(
        f"{ACCOUNT}webhook-deliveries/<id:delivery_id>/replay/",
        WebhookDeliveryReplayApi.as_view(),
        name="webhook-delivery-replay",
    ),
]
