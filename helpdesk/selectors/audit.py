"""Reads of the audit log (helpdesk.models.AuditEntry): always one account's entries, newest first."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from helpdesk.models import AuditEntry


def audit_entries(
    *,
    account_id: int,
    model: str = "",
    actor_id: int | None = None,
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[AuditEntry]:
    """The account's entries, filtered by model label ("helpdesk.inbox"), person and days (both included, in
    the server's time zone)."""
    entries = AuditEntry.objects.filter(account_id=account_id).select_related("actor")
    if model:
        entries = entries.filter(model=model)
    if actor_id is not None:
        entries = entries.filter(actor_id=actor_id)
    if since is not None:
        entries = entries.filter(created_at__gte=_day_start(since))
    if until is not None and until < date.max:  # the last day there is has no day after it: no upper bound
        entries = entries.filter(created_at__lt=_day_start(until + timedelta(days=1)))
    return entries.order_by("-created_at", "-pk")


def audit_actors(*, account_id: int) -> list[tuple[int, str]]:
    """(user id, name) of the people with entries in the account's log, for the filter."""
    rows = (
        AuditEntry.objects.filter(account_id=account_id, actor__isnull=False)
        .values_list("actor_id", "actor__username")
        .distinct()
        .order_by("actor__username")
    )
    return [(actor_id, name) for actor_id, name in rows]


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))
