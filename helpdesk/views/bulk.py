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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import account_member, dashboard
from helpdesk.selectors.teams import account_team
from helpdesk.services.bulk import (
    BATCH_SIZE,
    BULK_LIMIT,
    KINDS,
    BulkAction,
    BulkResult,
    BulkTooLarge,
    conversations_bulk_apply,
)

from .base import ACCOUNT, AuthenticatedHttpRequest, account_view
from .snooze import SNOOZE_CHOICES, account_zone, snooze_until

# Whole sentences per action (not a verb glued to a count) so each language can order its own words.
DONE = {
    "resolve": (
        gettext_lazy("Resolved %(count)d conversation."),
        gettext_lazy("Resolved %(count)d conversations."),
    ),
    "assign": (
        gettext_lazy("Assigned %(count)d conversation."),
        gettext_lazy("Assigned %(count)d conversations."),
    ),
    "label": (
        gettext_lazy("Labelled %(count)d conversation."),
        gettext_lazy("Labelled %(count)d conversations."),
    ),
    "snooze": (
        gettext_lazy("Snoozed %(count)d conversation."),
        gettext_lazy("Snoozed %(count)d conversations."),
    ),
    "priority": (
        gettext_lazy("Changed the priority of %(count)d conversation."),
        gettext_lazy("Changed the priority of %(count)d conversations."),
    ),
    "team": (
        gettext_lazy("Changed the team of %(count)d conversation."),
        gettext_lazy("Changed the team of %(count)d conversations."),
    ),
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
        return BulkAction(kind, assignee=user) if user else _("That person is not a member of this account.")
    if kind == "label":
        label = form.cleaned_data["label"].lower()
        return BulkAction(kind, label=label) if label else _("A label is one word: letters, digits, - and _.")
    if kind == "snooze":
        until = snooze_until(form.cleaned_data["until"], now=timezone.now(), zone=account_zone(membership))
        return BulkAction(kind, snoozed_until=until) if until else _("Choose when they wake up.")
    if kind == "priority":
        priority = form.cleaned_data["priority"]
        return BulkAction(kind, priority=priority) if priority else _("Choose a priority from the list.")
    if kind == "team":
        value = form.cleaned_data["team"]
        if value == "":
            return BulkAction(kind)
        team = account_team(account_id=membership.account_id, team_id=int(value) if value.isdigit() else 0)
        return BulkAction(kind, team=team) if team else _("That team is not one of this account's.")
    return BulkAction(kind)


def _done(kind: str, result: BulkResult) -> str:
    """What happened, said once the whole selection is through: the count, the batches it went in when more
    than one, and the ticked ones no longer there (merged, deleted, another account's)."""
    one, many = DONE[kind]
    parts = [(one if result.changed == 1 else many) % {"count": result.changed}]
    if result.batches > 1:
        parts.append(
            ngettext("Done in %(n)d batch of %(size)d.", "Done in %(n)d batches of %(size)d.", result.batches)
            % {"n": result.batches, "size": BATCH_SIZE}
        )
    if result.not_found:
        parts.append(
            ngettext(
                "%(n)d ticked conversation was no longer there.",
                "%(n)d ticked conversations were no longer there.",
                result.not_found,
            )
            % {"n": result.not_found}
        )
    # Chinese sentences end in a full-width stop and follow each other without a space.
    return "".join(p if i == 0 or parts[i - 1].endswith("。") else f" {p}" for i, p in enumerate(parts))


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
        flash.error(request, _("Tick the conversations first, then choose what to do."))
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
        flash.error(request, _("At most %(limit)d conversations at once.") % {"limit": BULK_LIMIT})
        return redirect(back)
    flash.success(request, _done(action.kind, result))
    return redirect(back)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}conversations/bulk/", conversation_bulk, name="conversation-bulk"),
]
