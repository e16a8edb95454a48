"""Learning from corrections in the dashboard.

- The conversation page's "This should have gone to ..." form posts to `conversation_reroute` (any member of the
  account, like the page's other actions): the last routed customer message becomes a correction and the
  conversation moves to the chosen node (captain.routing.services.routing_corrections.conversation_reroute).
- The review page (administrators, like FAQ review): per assistant, the corrections waiting for review, each
  with the message, where the router sent it, the node it is suggested for (a select to change it), what
  revealed it and its conversation; accept or reject one by one or in bulk. Plain forms posted back with
  CSRF, then a redirect; the writes are captain.routing.services.routing_examples.review_examples.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST

from captain.assistants.selectors import access_assistant
from captain.dashboard.choice import chosen_assistant
from captain.routing.models import RoutingExample
from captain.routing.services.routing_corrections import (
    HUMAN_KEY,
    RerouteRefused,
    assistant_for_conversation,
    conversation_reroute,
    correction_ids,
    learnable_keys,
    node_titles,
    pending_corrections,
)
from captain.routing.services.routing_examples import review_examples
from helpdesk.models import Membership
from helpdesk.selectors import access_conversation
from helpdesk.views.base import account_view, frame_context

PAGE_SIZE = 50
MAX_BULK = 1000


@require_POST
@account_view()
def conversation_reroute_action(
    request: HttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = access_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    back = redirect("dashboard:conversation-detail", membership.account_id, conversation.pk)
    try:
        done = conversation_reroute(
            conversation=conversation,
            key=request.POST.get("key", ""),
            user=request.user,  # type: ignore[arg-type]  # account_view signs people in first
        )
    except RerouteRefused as exc:
        flash.error(request, gettext("Nothing changed: %(reason)s") % {"reason": exc})
        return back
    assistant = assistant_for_conversation(conversation)
    title = node_titles(assistant).get(done.key, done.key) if assistant else done.key
    if done.key == HUMAN_KEY:
        parts = [
            gettext("Handed to the team.")
            if done.moved
            else gettext("People already handle this conversation.")
        ]
    elif done.moved:
        parts = [gettext("The AI continues at %(node)s with the customer's next message.") % {"node": title}]
    else:
        parts = [
            gettext("Noted for %(node)s; the conversation is %(status)s, so it stays as it is.")
            % {"node": title, "status": done.status}
        ]
    if done.correction is not None and done.correction.status == RoutingExample.Status.PENDING:
        parts.append(gettext("The message is proposed as a routing example for review."))
    flash.success(request, " ".join(parts))
    return back


def _page_url(account_id: int, assistant_id: int | None) -> str:
    query = urlencode({"assistant": assistant_id} if assistant_id else {})
    url = reverse("captain-dashboard:routing-corrections", args=[account_id])
    return f"{url}?{query}" if query else url


def _ids(request: HttpRequest) -> list[int]:
    return [int(v) for v in request.POST.getlist("ids") if v.isdigit()][:MAX_BULK]


def _post(request: HttpRequest, membership: Membership) -> HttpResponse:
    wanted = request.POST.get("assistant", "")
    assistant = access_assistant(
        account_id=membership.account_id, assistant_id=int(wanted) if wanted.isdigit() else 0
    )
    back = redirect(_page_url(membership.account_id, assistant.pk))
    op = request.POST.get("op", "")
    if op == "bulk" and request.POST.get("action") in ("accept", "reject"):
        accept = request.POST.get("action") == "accept"
        ids = correction_ids(assistant=assistant, ids=_ids(request))
        if not ids:
            flash.error(request, gettext("Nothing changed: select at least one correction."))
            return back
        changed = review_examples(assistant=assistant, ids=ids, accept=accept)
        done = (
            gettext("%(count)s corrections accepted.")
            if accept
            else gettext("%(count)s corrections rejected.")
        )
        flash.success(request, done % {"count": changed})
        return back
    if op not in ("accept", "reject"):
        flash.error(request, gettext("Nothing changed: unknown action."))
        return back
    entry = request.POST.get("example", "")
    ids = correction_ids(assistant=assistant, ids=[int(entry)] if entry.isdigit() else [])
    if not ids:
        flash.error(request, gettext("Nothing changed: no such correction."))
        return back
    key = request.POST.get("key", "") or None
    if op == "accept" and key is not None and key not in learnable_keys(assistant):
        flash.error(
            request,
            gettext("Nothing changed: %(node)s is not one of the assistant's nodes.") % {"node": repr(key)},
        )
        return back
    accept = op == "accept"
    review_examples(assistant=assistant, ids=ids, accept=accept, key=key)
    if accept:
        title = node_titles(assistant).get(key or "", key) if key else None
        flash.success(
            request,
            gettext("Accepted for %(node)s: the router uses it now.") % {"node": title}
            if title
            else gettext("Accepted: the router uses it now."),
        )
    else:
        flash.success(request, gettext("Rejected: this message will not be proposed for that node again."))
    return back


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def routing_corrections_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    if request.method == "POST":
        return _post(request, membership)
    account_id = membership.account_id
    assistants, assistant = chosen_assistant(request, account_id)
    page, choices, titles = None, [], {}
    if assistant is not None:
        titles = node_titles(assistant)
        choices = [(key, titles[key]) for key in learnable_keys(assistant)]
        page = Paginator(pending_corrections(assistant=assistant), PAGE_SIZE).get_page(
            request.GET.get("page")
        )
        for example in page.object_list:
            example.routed_to_title = titles.get(example.routed_to, example.routed_to)
    context = frame_context(
        request,
        membership,
        assistants=assistants,
        assistant=assistant,
        page=page,
        choices=choices,
    )
    return render(request, "captain/routing_corrections.html", context)
