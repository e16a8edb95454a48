"""Bulk select on the conversation lists: tick conversations, choose resolve, assign, label, snooze, priority or
team.

A plain form (the list's checkboxes belong to it through `form=`), so it works without JavaScript; the work is
done by `helpdesk.services.bulk`, which runs each conversation through the same service as one at a time.
The answer goes back to the same list with its filters and says how many conversations changed.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import account_member, dashboard
from helpdesk.selectors.teams import account_team
from helpdesk.services.bulk import BULK_LIMIT, KINDS, BulkAction, BulkTooLarge, conversations_bulk_apply

from .base import ACCOUNT, AuthenticatedHttpRequest, account_view
from .snooze import SNOOZE_CHOICES, account_zone, snooze_until

DONE = {
    "resolve": "Resolved",
    "assign": "Assigned",
    "label": "Labelled",
    "snooze": "Snoozed",
    "priority": "Changed the priority of",
    "team": "Changed the team of",
}


class BulkForm(forms.Form):
    action = forms.ChoiceField(choices=[(k, k) for k in KINDS])
    assignee = forms.CharField(required=False, max_length=20)
    label = forms.SlugField(required=False, max_length=64, allow_unicode=True)
    until = forms.ChoiceField(required=False, choices=[("", ""), *SNOOZE_CHOICES])
    priority = forms.ChoiceField(required=False, choices=[("", ""), *Conversation.Priority.choices])
    team = forms.CharField(required=False, max_length=20)


def _ids(request: AuthenticatedHttpRequest) -> list[int]:
    return [int(v) for v in request.POST.getlist("ids")[: BULK_LIMIT + 1] if v.isdigit()]


def _action(request: AuthenticatedHttpRequest, membership: Membership, form: BulkForm) -> BulkAction | str:
    """The action the form asks for, or what is wrong with it (said to the agent)."""
    kind = form.cleaned_data["action"]
    if kind == "assign":
        value = form.cleaned_data["assignee"]
        if value == "":
            return BulkAction(kind)
        user = account_member(account_id=membership.account_id, user_id=int(value) if value.isdigit() else 0)
        return BulkAction(kind, assignee=user) if user else "That person is not a member of this account."
    if kind == "label":
        label = form.cleaned_data["label"].lower()
        return BulkAction(kind, label=label) if label else "A label is one word: letters, digits, - and _."
    if kind == "snooze":
        until = snooze_until(form.cleaned_data["until"], now=timezone.now(), zone=account_zone(membership))
        return BulkAction(kind, snoozed_until=until) if until else "Choose when they wake up."
    if kind == "priority":
        priority = form.cleaned_data["priority"]
        return BulkAction(kind, priority=priority) if priority else "Choose a priority from the list."
    if kind == "team":
        value = form.cleaned_data["team"]
        if value == "":
            return BulkAction(kind)
        team = account_team(account_id=membership.account_id, team_id=int(value) if value.isdigit() else 0)
        return BulkAction(kind, team=team) if team else "That team is not one of this account's."
    return BulkAction(kind)


@require_POST
@account_view()
def conversation_bulk(request: AuthenticatedHttpRequest, membership: Membership) -> HttpResponse:
    folder = dashboard.FOLDERS.get(request.GET.get("list", "")) or dashboard.FOLDERS["needs-people"]
    filters = urlencode(dashboard.ListFilters.from_query(request.GET).as_query())
    back = reverse("dashboard:conversation-list", args=[membership.account_id, folder.key])
    back = f"{back}?{filters}" if filters else back
    form = BulkForm(request.POST)
    ids = _ids(request)
    if not form.is_valid() or not ids:
        flash.error(request, "Tick the conversations first, then choose what to do.")
        return redirect(back)
    action = _action(request, membership, form)
    if isinstance(action, str):
        flash.error(request, action)
        return redirect(back)
    try:
        result = conversations_bulk_apply(
            account_id=membership.account_id, conversation_ids=ids, action=action, actor=request.user
        )
    except BulkTooLarge:
        flash.error(request, f"At most {BULK_LIMIT} conversations at once.")
        return redirect(back)
    noun = "conversation" if result.changed == 1 else "conversations"
    flash.success(request, f"{DONE[action.kind]} {result.changed} {noun}.")
    return redirect(back)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}conversations/bulk/", conversation_bulk, name="conversation-bulk"),
]
