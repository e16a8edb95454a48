"""Reads of canned responses: the composer's `/` picker and the REST API, always within one account."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.http import Http404

from helpdesk.models import CannedResponse

PICKER_LIMIT = 20


def canned_responses(*, account_id: int) -> QuerySet[CannedResponse]:
    """The account's canned responses by short code."""
    return CannedResponse.objects.filter(account_id=account_id).order_by("short_code")


def canned_matching(*, account_id: int, query: str) -> QuerySet[CannedResponse]:
    """The account's canned responses for what the agent typed after `/` (all of them for nothing typed): short
    codes starting with it first, then short codes and contents containing it."""
    query = query.strip()[:64]
    found = canned_responses(account_id=account_id)
    if query:
        found = found.filter(Q(short_code__icontains=query) | Q(content__icontains=query)).annotate(
            rank=Case(
                When(short_code__istartswith=query, then=Value(0)),
                When(short_code__icontains=query, then=Value(1)),
                default=Value(2),
                output_field=IntegerField(),
            )
        )
        found = found.order_by("rank", "short_code")
    return found


def canned_search(*, account_id: int, query: str, limit: int = PICKER_LIMIT) -> list[CannedResponse]:
    """What the composer's picker offers (one query, at most `limit` rows)."""
    return list(canned_matching(account_id=account_id, query=query)[:limit])


def access_canned_response(*, account_id: int, canned_id: int) -> CannedResponse:
    """The canned response if it belongs to the account; 404 otherwise (never reveal other tenants' rows)."""
    found = canned_responses(account_id=account_id).filter(pk=canned_id).first()
    if found is None:
        raise Http404("No such canned response.")
    return found
