"""The search page: one box over the account's conversations, messages and contacts, with filters on the
conversations (status, inbox, assignee, label). Any text is a valid search: operators and quotes are only
separators (helpdesk.selectors.search), an over-long query is cut, never an error page."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import account_members, dashboard
from helpdesk.selectors.search import MAX_QUERY_CHARS, SearchFilters, search

from .base import ACCOUNT, AuthenticatedHttpRequest, account_view, frame_context


@require_GET
@account_view()
def search_page(request: AuthenticatedHttpRequest, membership: Membership) -> HttpResponse:
    query = request.GET.get("q", "")
    filters = SearchFilters.from_query(request.GET)
    results = search(account_id=membership.account_id, query=query, filters=filters, user=request.user)
    context = frame_context(
        request,
        membership,
        results=results,
        query=results.query,
        cut=len(query.strip()) > MAX_QUERY_CHARS,
        filters=filters,
        statuses=Conversation.Status.choices,
        members=list(account_members(account_id=membership.account_id)),
        **dashboard.filter_options(account_id=membership.account_id, user=request.user),
    )
    return render(request, "dashboard/search.html", context)


urlpatterns: list[URLPattern] = [path(f"{ACCOUNT}search/", search_page, name="search")]
