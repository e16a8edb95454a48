"""`.../notifications/`: the caller's own notifications in one account (the bell's list in full), and marking
them read.

Every write is a POST with the CSRF token. A plain form gets a redirect back (to `next` when it is a page of
this site, else the list); helpdesk/notifications.js sends `Accept: application/json` and gets the new unread
count instead. A notification of another account or of another person answers 404, like a missing one.
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import Membership, Notification
from helpdesk.selectors.notifications import access_notification, unread_count, user_notifications
from helpdesk.services.notifications import (
    conversation_path,
    membership_set_email_notifications,
    membership_set_escalation_notifications,
    notification_mark_read,
    notifications_mark_all_read,
)

from .base import ACCOUNT, account_view, frame_context

PAGE_SIZE = 50


def notification_items(notifications: list[Notification]) -> list[dict[str, object]]:
    """What the bell and the list show for each notification (the link is built, not stored)."""
    return [
        {
            "id": n.pk,
            "kind": n.kind,
            "kind_label": n.get_kind_display(),
            "text": n.text,
            "url": conversation_path(account_id=n.account_id, conversation_id=n.conversation_id),
            "read": n.read_at is not None,
            "created_at": n.created_at,
        }
        for n in notifications
    ]


def _answer(request: HttpRequest, membership: Membership, **data: object) -> HttpResponse:
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse(
            {"ok": True, "unread": unread_count(account_id=membership.account_id, user=request.user), **data}
        )
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("dashboard:notifications", args=[membership.account_id])
    return redirect(target)


@require_GET
@account_view()
def notification_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    """All of the caller's notifications in this account, newest first; `?unread=1` only the unread ones."""
    unread_only = request.GET.get("unread") == "1"
    found = user_notifications(account_id=membership.account_id, user=request.user, unread_only=unread_only)
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    context = frame_context(
        request,
        membership,
        page=page,
        items=notification_items(list(page.object_list)),
        unread_only=unread_only,
        unread_total=unread_count(account_id=membership.account_id, user=request.user),
    )
    return render(request, "dashboard/notifications.html", context)


@require_POST
@account_view()
def notification_read(request: HttpRequest, membership: Membership, notification_id: int) -> HttpResponse:
    notification = access_notification(
        account_id=membership.account_id, user=request.user, notification_id=notification_id
    )
    notification_mark_read(notification=notification)
    return _answer(request, membership, id=notification.pk)


@require_POST
@account_view()
def notifications_read_all(request: HttpRequest, membership: Membership) -> HttpResponse:
    changed = notifications_mark_all_read(account_id=membership.account_id, user_id=membership.user_id)
    return _answer(request, membership, marked=changed)


@require_POST
@account_view()
def notifications_email(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Turn one's own e-mail notifications in this account on (`email=on`) or off (anything else)."""
    enabled = request.POST.get("email") == "on"
    membership_set_email_notifications(membership=membership, enabled=enabled)
    return _answer(request, membership, email_notifications=enabled)


@require_POST
@account_view()
def notifications_escalations(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Be told of escalations not assigned to oneself in this account (`escalations=on`) or not (anything else)."""
    enabled = request.POST.get("escalations") == "on"
    membership_set_escalation_notifications(membership=membership, enabled=enabled)
    return _answer(request, membership, escalation_notifications=enabled)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}notifications/", notification_list, name="notifications"),
    path(f"{ACCOUNT}notifications/read-all/", notifications_read_all, name="notifications-read-all"),
    path(f"{ACCOUNT}notifications/email/", notifications_email, name="notifications-email"),
    path(f"{ACCOUNT}notifications/escalations/", notifications_escalations, name="notifications-escalations"),
    path(f"{ACCOUNT}notifications/<id:notification_id>/read/", notification_read, name="notification-read"),
]
