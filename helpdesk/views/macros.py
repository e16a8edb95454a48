"""Running a macro from the dashboard: the conversation page's Macros box (one conversation) and the list's bulk
bar (the ticked conversations, posted here by the bar's own "Run macro" button). A plain form; the work is
helpdesk.services.macros.macro_run, and the answer says what was done and what failed."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from helpdesk.models import Membership
from helpdesk.selectors import dashboard
from helpdesk.selectors.macros import macro_for
from helpdesk.services.bulk import BULK_LIMIT, BulkTooLarge
from helpdesk.services.macros import MacroResult, macro_run

from .base import ACCOUNT, AuthenticatedHttpRequest, account_view


def _back(request: AuthenticatedHttpRequest, membership: Membership, ids: list[int]) -> str:
    """The conversation page it came from, or the list with its folder and filters."""
    query = urlencode(dashboard.ListFilters.from_query(request.GET).as_query())
    folder = dashboard.FOLDERS.get(request.GET.get("list", "")) or dashboard.FOLDERS["needs-people"]
    if request.POST.get("from") == "conversation" and len(ids) == 1:
        url = reverse("dashboard:conversation-detail", args=[membership.account_id, ids[0]])
        return f"{url}?{request.GET.urlencode()}" if request.GET else url
    url = reverse("dashboard:conversation-list", args=[membership.account_id, folder.key])
    return f"{url}?{query}" if query else url


def _said(name: str, result: MacroResult) -> str:
    done = ngettext(
        "Macro “%(name)s” ran on %(count)d conversation: %(done)d actions done.",
        "Macro “%(name)s” ran on %(count)d conversations: %(done)d actions done.",
        result.conversations,
    ) % {"name": name, "count": result.conversations, "done": result.done}
    if result.failed_count:
        done += " " + _("%(n)d failed: %(which)s") % {
            "n": result.failed_count,
            "which": "; ".join(result.failed),
        }
    return done


@require_POST
@account_view()
def macro_run_view(request: AuthenticatedHttpRequest, membership: Membership) -> HttpResponse:
    ids = [int(v) for v in request.POST.getlist("ids")[: BULK_LIMIT + 1] if v.isdigit()]
    back = _back(request, membership, ids)
    macro_id = request.POST.get("macro", "")
    macro = macro_for(
        account_id=membership.account_id,
        user=request.user,
        macro_id=int(macro_id) if macro_id.isdigit() else 0,
    )
    if macro is None or not ids:
        flash.error(request, _("Choose a macro and the conversations to run it on."))
        return redirect(back)
    try:
        result = macro_run(macro=macro, conversation_ids=ids, actor=request.user)
    except BulkTooLarge:
        flash.error(request, _("At most %(limit)d conversations at once.") % {"limit": BULK_LIMIT})
        return redirect(back)
    (flash.warning if result.failed_count else flash.success)(request, _said(macro.name, result))
    return redirect(back)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}macros/run/", macro_run_view, name="macro-run"),
]
