"""Snooze wake-up times, in the account's time zone: shared by the conversation page's snooze and bulk snooze."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from helpdesk.models import Membership

SNOOZE_CHOICES: tuple[tuple[str, str], ...] = (
    ("hour", "For 1 hour"),
    ("tomorrow", "Until tomorrow 9:00"),
    ("monday", "Until next Monday 9:00"),
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
