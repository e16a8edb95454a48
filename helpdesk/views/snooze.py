"""Snooze wake-up times, in the account's time zone: shared by the conversation page's snooze and bulk snooze."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.utils.translation import gettext_lazy as _

from helpdesk.models import Membership

if TYPE_CHECKING:  # django-stubs-ext is a development requirement
    from django_stubs_ext import StrOrPromise

SNOOZE_CHOICES: tuple[tuple[str, StrOrPromise], ...] = (
    ("hour", _("For 1 hour")),
    ("tomorrow", _("Until tomorrow 9:00")),
    ("monday", _("Until next Monday 9:00")),
)


def account_zone(membership: Membership) -> ZoneInfo:
    return ZoneInfo(membership.account.time_zone or "UTC")


def snooze_until(choice: str, *, now: datetime, zone: ZoneInfo, custom: str = "") -> datetime | None:
    """The wake-up time for a snooze choice, in the account's time zone ("tomorrow 9:00" is the account's
    morning, not the server's); `custom` is a `datetime-local` value. None when the choice is not valid or the
    time is not in the future."""
    local = now.astimezone(zone)
    if choice == "hour":
        return now + timedelta(hours=1)
    if choice == "tomorrow":
        day = (local + timedelta(days=1)).date()
        return datetime(day.year, day.month, day.day, 9, 0, tzinfo=zone)
    if choice == "monday":
        day = (local + timedelta(days=7 - local.weekday())).date()
        return datetime(day.year, day.month, day.day, 9, 0, tzinfo=zone)
    if choice == "custom":
        try:
            parsed = datetime.fromisoformat(custom.strip())
        except ValueError:
            return None
        until = parsed.replace(tzinfo=zone) if parsed.tzinfo is None else parsed
        return until if until > now else None
    return None
