"""The caller's own notifications over the REST API.

- `accounts/<id>/notifications/`: `GET` newest first (`?unread=1` only unread; `?limit=&offset=` pages).
- `accounts/<id>/notifications/unread-count/`: `GET {"unread": n}`.
- `accounts/<id>/notifications/<nid>/read/`: `POST` marks one read.
- `accounts/<id>/notifications/read-all/`: `POST` marks all of them read.

A notification of another account or another person answers 404, like a missing one.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import Notification
from helpdesk.selectors.notifications import access_notification, unread_count, user_notifications
from helpdesk.services.notifications import (
    conversation_path,
    notification_mark_read,
    notifications_mark_all_read,
)

from .auth import AccountApi, Pagination, paginated_response

ACCOUNT = "accounts/<id:account_id>/"


class NotificationOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(help_text="The conversation's page in the dashboard.")

    class Meta:
        model = Notification
        ref_name = "Notification"
        fields = ["id", "kind", "text", "conversation", "url", "read_at", "created_at"]
        read_only_fields = fields

    def get_url(self, notification: Notification) -> str:
        return conversation_path(
            account_id=notification.account_id, conversation_id=notification.conversation_id
        )


class NotificationFilterSerializer(serializers.Serializer):
    unread = serializers.BooleanField(required=False, default=False)

    class Meta:
        ref_name = "NotificationFilter"


UnreadCount = inline_serializer("NotificationUnreadCount", fields={"unread": serializers.IntegerField()})


class NotificationCollectionApi(AccountApi):
    """`GET` the caller's notifications in this account."""

    pagination_class = Pagination  # the schema documents the page envelope and `limit`/`offset`

    @extend_schema(
        parameters=[NotificationFilterSerializer], responses=NotificationOutputSerializer(many=True)
    )
    def get(self, request: Request, account_id: int) -> Response:
        filters = NotificationFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return paginated_response(
            request=request,
            view=self,
            queryset=user_notifications(
                account_id=self.account_id, user=request.user, unread_only=filters.validated_data["unread"]
            ),
            serializer_class=NotificationOutputSerializer,
        )


class NotificationUnreadCountApi(AccountApi):
    @extend_schema(responses=UnreadCount)
    def get(self, request: Request, account_id: int) -> Response:
        return Response({"unread": unread_count(account_id=self.account_id, user=request.user)})


class NotificationReadApi(AccountApi):
    """`POST` marks one of the caller's notifications read (again: no change)."""

    @extend_schema(request=None, responses=NotificationOutputSerializer)
    def post(self, request: Request, account_id: int, notification_id: int) -> Response:
        notification = access_notification(
            account_id=self.account_id, user=request.user, notification_id=notification_id
        )
        return Response(NotificationOutputSerializer(notification_mark_read(notification=notification)).data)


class NotificationReadAllApi(AccountApi):
    """`POST` marks all of the caller's notifications in this account read; answers the new unread count."""

    @extend_schema(request=None, responses=UnreadCount)
    def post(self, request: Request, account_id: int) -> Response:
        notifications_mark_all_read(account_id=self.account_id, user_id=self.membership.user_id)
        return Response({"unread": unread_count(account_id=self.account_id, user=request.user)})


urlpatterns = [
    path(f"{ACCOUNT}notifications/", NotificationCollectionApi.as_view(), name="notification-list"),
    path(
        f"{ACCOUNT}notifications/unread-count/",
        NotificationUnreadCountApi.as_view(),
        name="notification-unread-count",
    ),
    path(f"{ACCOUNT}notifications/read-all/", NotificationReadAllApi.as_view(), name="notification-read-all"),
    path(
        f"{ACCOUNT}notifications/<id:notification_id>/read/",
        NotificationReadApi.as_view(),
        name="notification-read",
    ),
]
