"""Conversation lists, the conversation page and the poll that shows new messages without a reload.

The side panel's one-click actions live in `conversation_actions`; both render the side panel through
`side_context` here. Reads go through `helpdesk.selectors`, writes through `helpdesk.services` (the same functions
the REST API and the AI's tools call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import account_labels, account_members, dashboard, dashboard_conversation
from helpdesk.selectors.contacts import contact_panel
from helpdesk.selectors.macros import macros_for
from helpdesk.selectors.messages import delivery_statuses, messages_after, thread_page
from helpdesk.selectors.sla import sla_labels
from helpdesk.selectors.teams import account_team_choices

from .attributes import attributes_panel
from .base import AuthenticatedHttpRequest, account_view, frame_context, is_admin
from .composer import composer_kind, take_composer_draft, whatsapp_composer
from .responder import copilot_panel, debug_log_url, reroute_form, with_cited_sources
from .snooze import SNOOZE_CHOICES, account_zone
from .workspace import came_from, list_context, shown_next, workspace

POLL_INTERVAL_MS = 3000


@dataclass(frozen=True)
class FolderLink:
    key: str
    title: str
    help: str
    count: int | None
    active: bool


def folder_nav(*, counts: dict[str, int] | None = None, active: str = "") -> list[FolderLink]:
    return [
        FolderLink(f.key, str(f.title), str(f.help), counts.get(f.key) if counts else None, f.key == active)
        for f in dashboard.FOLDERS.values()
    ]


def _page_number(request: HttpRequest) -> int:
    value = request.GET.get("page", "1")
    return int(value) if value.isdigit() and int(value) > 0 else 1


@require_GET
@account_view()
def conversation_list(request: AuthenticatedHttpRequest, membership: Membership, folder: str) -> HttpResponse:
    selected = dashboard.FOLDERS.get(folder)
    if selected is None:
        raise Http404("No such list.")
    filters = dashboard.ListFilters.from_query(request.GET)
    page = dashboard.conversation_page(
        account_id=membership.account_id,
        user=request.user,
        folder=selected,
        filters=filters,
        page=_page_number(request),
    )
    context = frame_context(
        request,
        membership,
        folder_nav=folder_nav(counts=page.counts, active=selected.key),
        current=page,
        filters=filters,
        filter_qs=urlencode(filters.as_query()),
        list_qs=urlencode({"list": selected.key, **filters.as_query()}),
        priorities=Conversation.Priority.choices,
        members=list(account_members(account_id=membership.account_id)),
        snooze_choices=SNOOZE_CHOICES,
        macros=list(macros_for(account_id=membership.account_id, user=request.user)),
        **dashboard.filter_options(account_id=membership.account_id, user=request.user),
    )
    return render(request, "dashboard/conversation_list.html", context)


def side_context(membership: Membership, conversation: Conversation, user: Any) -> dict[str, Any]:
    """What the side panel shows (the page renders it, and every one-click action renders it again)."""
    return {
        "conversation": conversation,
        "members": list(account_members(account_id=membership.account_id)),
        "account_labels": account_labels(account_id=membership.account_id),
        "priorities": Conversation.Priority.choices,
        "teams": list(account_team_choices(account_id=membership.account_id)),
        "reroute": reroute_form(conversation),
        "attributes": attributes_panel(account_id=membership.account_id, conversation=conversation),
        "contact_panel": contact_panel(
            account_id=membership.account_id, conversation=conversation, user=user
        ),
        "macros": list(macros_for(account_id=membership.account_id, user=user)),
        "snooze_choices": SNOOZE_CHOICES,
        "snooze_min": timezone.localtime(timezone.now(), account_zone(membership)).strftime("%Y-%m-%dT%H:%M"),
        # The debug log holds prompts and model output: its links are for the account's administrators only.
        "debug_url": debug_log_url(membership.account_id, conversation.pk) if is_admin(membership) else None,
    }


@require_GET
@account_view()
def conversation_detail(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    before = request.GET.get("before", "")
    thread = thread_page(conversation=conversation, before=int(before) if before.isdigit() else None)
    with_cited_sources(thread.messages)
    last_id = thread.messages[-1].pk if thread.messages else 0
    around = workspace(
        account_id=membership.account_id,
        user=request.user,
        context=list_context(request, conversation),
        conversation_id=conversation.pk,
        shown=shown_next(request),
    )
    context = frame_context(
        request,
        membership,
        folder_nav=folder_nav(counts=around.page.counts, active=around.context.folder.key),
        filter_qs=urlencode(around.context.filters.as_query()),
        workspace=around,
        came_from=came_from(request),
        list_qs=around.context.query,
        next_id=around.next_id,
        thread=thread,
        paged_back=bool(before),
        last_id=last_id,
        first_id=thread.messages[0].pk if thread.messages else 0,
        copilot=copilot_panel(conversation, membership),
        canned_url=reverse("dashboard:canned-search", args=[membership.account_id, conversation.pk]),
        poll_url=reverse("dashboard:conversation-poll", args=[membership.account_id, conversation.pk]),
        poll_interval_ms=POLL_INTERVAL_MS,
        composer_kind=composer_kind(request, conversation.pk),
        composer_text=take_composer_draft(request, conversation.pk),
        whatsapp_window=whatsapp_composer(conversation),
        sla=sla_labels([conversation]).get(conversation.pk),
        **side_context(membership, conversation, request.user),
    )
    return render(request, "dashboard/conversation_detail.html", context)


@require_GET
@account_view()
def conversation_poll(request: HttpRequest, membership: Membership, conversation_id: int) -> JsonResponse:
    """New messages since `after` as an HTML fragment (rendered and escaped by the same template as the page),
    delivery statuses of the outgoing messages shown since `since`, and the conversation status."""
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    after = request.GET.get("after", "0")
    since = request.GET.get("since", "0")
    new = with_cited_sources(
        list(messages_after(conversation=conversation, after=int(after) if after.isdigit() else 0))
    )
    debug_url = debug_log_url(membership.account_id, conversation.pk) if is_admin(membership) else None
    html = render_to_string(
        "dashboard/partials/messages.html", {"messages_list": new, "debug_url": debug_url}, request=request
    )
    statuses = delivery_statuses(conversation=conversation, since=int(since) if since.isdigit() else 0)
    return JsonResponse(
        {
            "html": html,
            "last_id": new[-1].pk if new else int(after) if after.isdigit() else 0,
            "status": conversation.status,
            "status_display": conversation.get_status_display(),
            "deliveries": {str(pk): status for pk, status in statuses.items()},
        }
    )


@require_GET
@account_view()
def folder_counts(request: AuthenticatedHttpRequest, membership: Membership) -> JsonResponse:
    """Every folder's count with the page's filters (`inbox`, `label`, `team`, `priority`, `q`): what an open
    conversation's sidebar asks after a live event, so its counts follow without a reload."""
    filters = dashboard.ListFilters.from_query(request.GET)
    counts = dashboard.folder_counts(account_id=membership.account_id, user=request.user, filters=filters)
    return JsonResponse({"counts": counts})
