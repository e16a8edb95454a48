"""Canned responses in the dashboard: the composer's `/` picker (typing `/` and a few letters asks this view for the
account's matching saved replies, with the conversation's placeholders filled in, as JSON for
helpdesk/conversation.js), and the Canned responses page where every member of the account (agents too, not only
administrators) adds and edits them; deleting one is for administrators.

Placeholders are plain string substitutions, never a template engine: `{{contact.name}}`,
`{{contact.email}}` and `{{agent.name}}` (the person typing). Any other `{{...}}` stays as written.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.selectors.canned import access_canned_response, canned_matching, canned_search
from helpdesk.services.canned import (
    canned_response_create,
    canned_response_delete,
    canned_response_update,
)

from .base import ACCOUNT, CONVERSATION, AuthenticatedHttpRequest, account_view, frame_context, is_admin

PAGE_SIZE = 50


def fill_placeholders(content: str, *, conversation: Conversation, agent_name: str) -> str:
    values = {
        "{{contact.name}}": conversation.contact.name or "",
        "{{contact.email}}": conversation.contact.email or "",
        "{{agent.name}}": agent_name,
    }
    for placeholder, value in values.items():
        content = content.replace(placeholder, value)
    return content


@require_GET
@account_view()
def canned_picker(request: HttpRequest, membership: Membership, conversation_id: int) -> JsonResponse:
    """`?q=` what was typed after `/`: up to 20 of the account's canned responses, best match first."""
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    user = request.user
    agent_name = (user.get_full_name() or user.get_username()) if user.is_authenticated else ""
    found = canned_search(account_id=membership.account_id, query=request.GET.get("q", ""))
    return JsonResponse(
        {
            "results": [
                {
                    "id": c.pk,
                    "short_code": c.short_code,
                    "content": fill_placeholders(c.content, conversation=conversation, agent_name=agent_name),
                }
                for c in found
            ]
        }
    )


def _errors(exc: ValidationError) -> str:
    return " ".join(message for messages in exc.message_dict.values() for message in messages)


@require_http_methods(["GET", "POST"])
@account_view()
def canned_list(request: AuthenticatedHttpRequest, membership: Membership) -> HttpResponse:
    """GET: the account's canned responses (`?q=` searches), each editable in place; POST: add one."""
    here = reverse("dashboard:canned-list", args=[membership.account_id])
    if request.method == "POST":
        try:
            canned = canned_response_create(
                account_id=membership.account_id,
                short_code=request.POST.get("short_code", ""),
                content=request.POST.get("content", ""),
            )
        except ValidationError as exc:
            flash.error(request, _errors(exc))
        else:
            flash.success(request, _("Added /%(code)s.") % {"code": canned.short_code})
        return redirect(here)
    query = request.GET.get("q", "").strip()[:64]
    page = Paginator(canned_matching(account_id=membership.account_id, query=query), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    context = frame_context(request, membership, page=page, query=query, can_delete=is_admin(membership))
    return render(request, "dashboard/canned_list.html", context)


@require_POST
@account_view()
def canned_edit(request: AuthenticatedHttpRequest, membership: Membership, canned_id: int) -> HttpResponse:
    """Change one (any member), or delete it (`delete`: administrators only). Another account's is a 404."""
    canned = access_canned_response(account_id=membership.account_id, canned_id=canned_id)
    here = reverse("dashboard:canned-list", args=[membership.account_id])
    if "delete" in request.POST:
        if not is_admin(membership):
            flash.error(request, _("Only administrators delete canned responses."))
        else:
            canned_response_delete(canned=canned)
            flash.success(request, _("Deleted /%(code)s.") % {"code": canned.short_code})
        return redirect(here)
    code = canned.short_code
    try:
        canned_response_update(
            canned=canned,
            short_code=request.POST.get("short_code", ""),
            content=request.POST.get("content", ""),
        )
    except ValidationError as exc:
        flash.error(
            request, _("/%(code)s was not changed: %(errors)s") % {"code": code, "errors": _errors(exc)}
        )
    else:
        flash.success(request, _("Saved /%(code)s.") % {"code": canned.short_code})
    return redirect(here)


urlpatterns: list[URLPattern] = [
    path(f"{CONVERSATION}canned-responses/", canned_picker, name="canned-search"),
    path(f"{ACCOUNT}canned-responses/", canned_list, name="canned-list"),
    path(f"{ACCOUNT}canned-responses/<id:canned_id>/", canned_edit, name="canned-edit"),
]
