"""The conversation page's actions: reply or note, take over, hand back, resolve, reopen, snooze, assignee,
priority, labels and team.

They are plain forms that redirect back to the page; sent by htmx (`HX-Request`) they answer the re-rendered side
panel and, out of band, the status line and the result, so one click changes the page without reloading it. An
action that finishes the conversation for this agent (resolve, snooze, hand back) goes on to the next one of the
list it was opened from. Writes go through `helpdesk.services`, so a reply typed here is queued for delivery,
takes over from the AI and is recorded exactly as one sent through the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms
from django.contrib import messages as flash
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import account_member, dashboard_conversation
from helpdesk.selectors.teams import account_team
from helpdesk.selectors.whatsapp_templates import whatsapp_window_closed
from helpdesk.services.conversations import (
    conversation_add_label,
    conversation_assign,
    conversation_remove_label,
    conversation_set_priority,
    conversation_set_status,
    conversation_set_team,
    conversation_take_over,
)
from helpdesk.services.messages import message_create_agent_reply, message_create_note
from helpdesk.services.reply_files import FileRefused

from .base import AuthenticatedHttpRequest, account_view
from .composer import WINDOW_CLOSED, keep_composer_draft, remember_composer_kind
from .conversations import side_context
from .snooze import account_zone, snooze_until
from .workspace import QUEUE_ACTIONS, list_context, next_conversation_id, shown_next

if TYPE_CHECKING:  # django-stubs-ext is a development requirement
    from django_stubs_ext import StrOrPromise

MAX_MESSAGE_CHARS = 10_000


class ReplyForm(forms.Form):
    # Blank only when files are attached (checked in the view, which has the files).
    content = forms.CharField(max_length=MAX_MESSAGE_CHARS, strip=True, required=False)
    kind = forms.ChoiceField(
        choices=[("reply", gettext_lazy("Reply")), ("note", gettext_lazy("Private note"))], initial="reply"
    )


class LabelForm(forms.Form):
    name = forms.SlugField(max_length=64, allow_unicode=True)


class PriorityForm(forms.Form):
    priority = forms.ChoiceField(choices=Conversation.Priority.choices)


STATUS_ACTIONS: dict[str, tuple[str, StrOrPromise]] = {
    # action -> (new status, what the flash message says)
    "take_over": (Conversation.Status.OPEN, gettext_lazy("You took over the conversation from the AI.")),
    "hand_back": (Conversation.Status.PENDING, gettext_lazy("The AI handles the conversation again.")),
    "resolve": (Conversation.Status.RESOLVED, gettext_lazy("Conversation resolved.")),
    "reopen": (Conversation.Status.OPEN, gettext_lazy("Conversation reopened.")),
}


def _back(request: HttpRequest, membership: Membership, conversation: Conversation) -> HttpResponse:
    """Back to the conversation, in the list it was opened from (the form's URL carries the list) and with the
    same "next" conversation (the form's `next`), so a reply does not change where the queue goes on."""
    url = reverse("dashboard:conversation-detail", args=[membership.account_id, conversation.pk])
    params = request.GET.copy()
    shown = request.POST.get("next", "")
    if shown.isdigit():
        params["next"] = shown
    return redirect(f"{url}?{params.urlencode()}" if params else url)


def _done(
    request: AuthenticatedHttpRequest,
    membership: Membership,
    conversation: Conversation,
    text: str,
    *,
    ok: bool = True,
    following: str | None = None,
) -> HttpResponse:
    """The answer to a side-panel action: for htmx, the side panel re-rendered with the status line and the
    result out of band (no reload); without JavaScript, a flash message and the redirect back to the page.
    With `following` (the conversation is done, another one waits in the list) both go on to that one, the
    result shown there as a flash message."""
    if following:
        flash.success(request, f"#{conversation.pk}: {text}")
        if request.headers.get("HX-Request"):
            return HttpResponse(headers={"HX-Redirect": following})
        return redirect(following)
    if not request.headers.get("HX-Request"):
        (flash.success if ok else flash.error)(request, text)
        return _back(request, membership, conversation)
    fresh = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation.pk, user=request.user
    )
    context = list_context(request, fresh)
    panel = {
        **side_context(membership, fresh, request.user),
        "account": membership.account,
        "membership": membership,
        "result": text,
        "result_ok": ok,
        "list_qs": context.query,
        # The "next" the re-rendered panel's actions carry (see workspace.next_conversation_id).
        "next_id": next_conversation_id(
            account_id=membership.account_id,
            user=request.user,
            context=context,
            conversation_id=fresh.pk,
            shown=shown_next(request),
        ),
        "oob": True,
    }
    return HttpResponse(
        render_to_string("dashboard/partials/side_panel_response.html", panel, request=request)
    )


@require_POST
@account_view()
def conversation_reply(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    form = ReplyForm(request.POST)
    files = request.FILES.getlist("files")
    if not form.is_valid() or not (form.cleaned_data["content"] or files):
        # A text too long comes back to be shortened, on the kind it was meant for.
        if request.POST.get("kind") in ("reply", "note"):
            remember_composer_kind(request, conversation.pk, request.POST["kind"])
        keep_composer_draft(request, conversation.pk, request.POST.get("content", ""))
        flash.error(request, _("Write a message first (at most 10,000 characters)."))
        return _back(request, membership, conversation)
    content = form.cleaned_data["content"]
    remember_composer_kind(request, conversation.pk, form.cleaned_data["kind"])
    if form.cleaned_data["kind"] == "reply" and whatsapp_window_closed(conversation=conversation):
        # Meta would refuse it (131047) after the fact: say so now, and keep the text for a note or later.
        keep_composer_draft(request, conversation.pk, request.POST.get("content", ""))
        flash.error(request, str(WINDOW_CLOSED))
        return _back(request, membership, conversation)
    try:
        if form.cleaned_data["kind"] == "note":
            message_create_note(conversation=conversation, content=content, user=request.user, files=files)
            flash.success(request, _("Private note added."))
        else:
            message_create_agent_reply(
                conversation=conversation, user=request.user, content=content, files=files
            )
            flash.success(request, _("Reply queued for delivery."))
    except FileRefused as exc:
        # Nothing was stored: the person learns which file and why, and sends again without it, the typed text
        # still in the composer (the kind is already remembered above).
        keep_composer_draft(request, conversation.pk, request.POST.get("content", ""))
        flash.error(request, str(exc))
    return _back(request, membership, conversation)


@require_POST
@account_view()
def conversation_status(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int, action: str
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    if action == "snooze":
        return conversation_snooze(request, membership, conversation)
    if action not in STATUS_ACTIONS:
        raise Http404("No such action.")
    status, done = STATUS_ACTIONS[action]
    following = _queue_next(request, membership, conversation, action)
    if action == "take_over":
        # Taking over means "I answer this one": it lands in the person's own list, out of "Needs people".
        conversation_take_over(conversation=conversation, user=request.user)
    else:
        conversation_set_status(conversation=conversation, status=status, actor=request.user)
    return _done(request, membership, conversation, str(done), following=following)


def _queue_next(
    request: AuthenticatedHttpRequest, membership: Membership, conversation: Conversation, action: str
) -> str | None:
    """The next conversation of the list the page was opened from, for an action that finishes this one; read
    before the action, while this conversation still has its place in the list."""
    if action not in QUEUE_ACTIONS:
        return None
    context = list_context(request, conversation)
    target = next_conversation_id(
        account_id=membership.account_id,
        user=request.user,
        context=context,
        conversation_id=conversation.pk,
        shown=shown_next(request),
    )
    return context.conversation_url(membership.account_id, target) if target else None


def conversation_snooze(
    request: AuthenticatedHttpRequest, membership: Membership, conversation: Conversation
) -> HttpResponse:
    """`status/snooze/`: put the conversation aside until a wake-up time (`until`: a SNOOZE_CHOICES key, or
    `custom` with `custom_at`); the sweep or the customer's next message wakes it."""
    zone = account_zone(membership)
    until = snooze_until(
        request.POST.get("until", ""), now=timezone.now(), zone=zone, custom=request.POST.get("custom_at", "")
    )
    if until is None:
        return _done(request, membership, conversation, _("Choose a wake-up time in the future."), ok=False)
    following = _queue_next(request, membership, conversation, "snooze")
    with transaction.atomic():
        conversation_set_status(
            conversation=conversation,
            status=Conversation.Status.SNOOZED,
            actor=request.user,
            snoozed_until=until,
        )
    wake = timezone.localtime(until, zone).strftime("%a %d %b, %H:%M")
    return _done(
        request,
        membership,
        conversation,
        _("Snoozed until %(wake)s (%(zone)s).") % {"wake": wake, "zone": zone.key},
        following=following,
    )


@require_POST
@account_view()
def conversation_assignee(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    value = request.POST.get("assignee", "")
    if value == "":
        conversation_assign(conversation=conversation, assignee=None, by=request.user)
        return _done(request, membership, conversation, _("Conversation unassigned."))
    # Only members of this account may be assigned: another tenant's user id is simply not found.
    user = account_member(account_id=membership.account_id, user_id=int(value) if value.isdigit() else 0)
    if user is None:
        return _done(
            request, membership, conversation, _("That person is not a member of this account."), ok=False
        )
    # `by`: assigning yourself notifies nobody; assigning a colleague tells them who did.
    conversation_assign(conversation=conversation, assignee=user, by=request.user)
    return _done(request, membership, conversation, _("Assigned to %(user)s.") % {"user": user})


@require_POST
@account_view()
def conversation_label(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    form = LabelForm(request.POST)
    if form.is_valid() and request.POST.get("action") == "remove":
        name = form.cleaned_data["name"].lower()
        removed = conversation_remove_label(conversation=conversation, name=name, by=request.user)
        text = (
            _("Label “%(name)s” removed.")
            if removed
            else _("The label “%(name)s” was not on the conversation.")
        ) % {"name": name}
        return _done(request, membership, conversation, text)
    if form.is_valid():
        label = conversation_add_label(
            conversation=conversation, name=form.cleaned_data["name"].lower(), by=request.user
        )
        return _done(request, membership, conversation, _("Label “%(name)s” added.") % {"name": label.name})
    return _done(
        request, membership, conversation, _("A label is one word: letters, digits, - and _."), ok=False
    )


@require_POST
@account_view()
def conversation_priority(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    form = PriorityForm(request.POST)
    if not form.is_valid():
        return _done(request, membership, conversation, _("Choose a priority from the list."), ok=False)
    conversation_set_priority(
        conversation=conversation, priority=form.cleaned_data["priority"], by=request.user
    )
    return _done(
        request,
        membership,
        conversation,
        _("Priority set to %(priority)s.") % {"priority": conversation.get_priority_display().lower()},
    )


@require_POST
@account_view()
def conversation_team(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    """`team`: one of the account's teams, or "" for none. Another account's team is simply not found."""
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    value = request.POST.get("team", "")
    if value == "":
        conversation_set_team(conversation=conversation, team=None, by=request.user)
        return _done(request, membership, conversation, _("The conversation has no team now."))
    team = account_team(account_id=membership.account_id, team_id=int(value) if value.isdigit() else 0)
    if team is None:
        return _done(
            request, membership, conversation, _("That team is not one of this account's."), ok=False
        )
    conversation_set_team(conversation=conversation, team=team, by=request.user)
    return _done(request, membership, conversation, _("Team set to %(team)s.") % {"team": team.name})
