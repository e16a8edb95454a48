"""`{% notification_bell as bell %}`: the top bar's bell on every account page (unread count and the latest
few), read here so the page views need not know about it. One small indexed query per page."""

from __future__ import annotations

from typing import Any

from django import template

from helpdesk.selectors.notifications import bell_notifications

register = template.Library()

BELL_ITEMS = 8


@register.simple_tag(takes_context=True)
def notification_bell(context: template.Context) -> dict[str, Any]:
    from helpdesk.views.notifications import notification_items  # the list page shows items the same way

    membership = context.get("membership")
    request = context.get("request")
    if membership is None or request is None or not request.user.is_authenticated:
        return {"unread": 0, "items": []}
    unread, latest = bell_notifications(account_id=membership.account_id, user=request.user, limit=BELL_ITEMS)
    return {"unread": unread, "items": notification_items(latest)}
