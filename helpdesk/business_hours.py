"""An inbox's business hours: whether it is open at a moment, when it opens next, and since when it is closed.

Settings (`provider_config` of any inbox, helpdesk.channels.provider_config): `business_hours`, days and times
separated by ";", e.g. `mon-fri 09:00-17:30; sat 10:00-14:00` (a day not named is closed; `00:00-24:00` is the
whole day), and `time_zone`, an IANA name such as `Europe/Berlin` (empty: the account's). No `business_hours`:
always open, never away.

Times are computed on the local calendar of the zone (zoneinfo) and converted back, so a day on which the clocks
change keeps its opening hours in local time. Pure functions with no model: channels (the widget's away message)
and services (out-of-office replies, SLA clocks) use the same ones.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils import timezone

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_RULE = re.compile(r"(?P<first>[a-z]{3})(?:-(?P<last>[a-z]{3}))?\s+(?P<start>\d\d:\d\d)-(?P<end>\d\d:\d\d)")

Hours = dict[int, list[tuple[int, int]]]
"""Weekday (0 = Monday) -> open ranges in minutes after midnight, [start, end)."""


def _minutes(text: str) -> int:
    hours, minutes = int(text[:2]), int(text[3:])
    if minutes > 59 or hours > 24 or (hours == 24 and minutes):
        raise ValueError(f'"{text}" is not a time of day')
    return hours * 60 + minutes


def parse_hours(value: str) -> Hours:
    """`mon-fri 09:00-17:30; sat 10:00-14:00` -> Hours; ValueError with what is wrong."""
    hours: Hours = {}
    for rule in filter(None, (part.strip().lower() for part in value.split(";"))):
        match = _RULE.fullmatch(rule)
        if match is None or match["first"] not in DAYS or (match["last"] or "mon") not in DAYS:
            raise ValueError(f'"{rule[:40]}" is not like "mon-fri 09:00-17:30"')
        start, end = _minutes(match["start"]), _minutes(match["end"])
        if start >= end:
            raise ValueError(f'"{rule[:40]}" ends before it starts')
        first = DAYS.index(match["first"])
        last = DAYS.index(match["last"]) if match["last"] else first
        for day in range(first, last + 1) if first <= last else [*range(first, 7), *range(last + 1)]:
            hours.setdefault(day, []).append((start, end))
    return hours


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name` (empty: UTC); ValueError for an unknown name."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f'"{name[:60]}" is not a time zone such as "Europe/Berlin"') from exc


def hours_problem(value: str) -> str | None:
    """For the provider_config validator: what is wrong with a business_hours value, or None."""
    try:
        parse_hours(value)
    except ValueError as exc:
        return f"has {exc}"
    return None


def zone_problem(value: str) -> str | None:
    try:
        zone(value)
    except ValueError as exc:
        return f"is {exc}"
    return None


def configured(config: object, default_zone: str = "") -> tuple[Hours, ZoneInfo] | None:
    """The hours and zone an inbox's `config` (its provider_config) sets, or None when it sets none (always open).
    A broken setting counts as none: the validator refuses it on save, and an answer is better than none."""
    if not isinstance(config, dict) or not str(config.get("business_hours") or "").strip():
        return None
    try:
        return parse_hours(str(config["business_hours"])), zone(str(config.get("time_zone") or default_zone))
    except ValueError:
        return None


def _open_at(hours: Hours, local: datetime) -> bool:
    minute = local.hour * 60 + local.minute
    return any(start <= minute < end for start, end in hours.get(local.weekday(), []))


def is_away(config: object, at: datetime | None = None, default_zone: str = "") -> bool:
    """Whether an inbox with `config` is outside its business hours at `at` (now)."""
    setting = configured(config, default_zone)
    if setting is None:
        return False
    hours, tz = setting
    return not _open_at(hours, (at or timezone.now()).astimezone(tz))


def _local(day: datetime, minute: int, tz: ZoneInfo) -> datetime:
    """`minute` after local midnight of `day`'s date, as an aware time (24:00 is the next midnight). A wall time
    the clocks skip (spring forward) is taken as zoneinfo reads it: the same offset as before the change."""
    midnight = datetime(day.year, day.month, day.day, tzinfo=tz)
    return (midnight.replace(tzinfo=None) + timedelta(minutes=minute)).replace(tzinfo=tz)


def next_open(hours: Hours, tz: ZoneInfo, at: datetime) -> datetime | None:
    """When the inbox opens next after `at` (`at` itself when open then); None if the hours name no time."""
    local = at.astimezone(tz)
    if _open_at(hours, local):
        return at
    for ahead in range(8):
        day = local + timedelta(days=ahead)
        for start, _end in sorted(hours.get(day.weekday(), [])):
            opening = _local(day, start, tz)
            if opening > at:
                return opening
    return None


def closed_since(hours: Hours, tz: ZoneInfo, at: datetime) -> datetime | None:
    """When the closed period around `at` began (the last closing before it); None when open at `at` or never open."""
    local = at.astimezone(tz)
    if _open_at(hours, local):
        return None
    for back in range(8):
        day = local - timedelta(days=back)
        for _start, end in sorted(hours.get(day.weekday(), []), reverse=True):
            closing = _local(day, end, tz)
            if closing <= at:
                return closing
    return None


def add_open_minutes(hours: Hours, tz: ZoneInfo, start: datetime, minutes: int) -> datetime | None:
    """The moment `minutes` of open time have passed since `start` (an SLA counted in business hours); None if the
    hours name no time. Walks the open ranges day by day, at most a year ahead."""
    left = timedelta(minutes=minutes)
    local = start.astimezone(tz)
    for ahead in range(366):
        day = local + timedelta(days=ahead)
        for open_minute, close_minute in sorted(hours.get(day.weekday(), [])):
            opening, closing = _local(day, open_minute, tz), _local(day, close_minute, tz)
            begin = max(opening, start)
            if closing <= begin:
                continue
            if begin + left <= closing:
                return begin + left
            left -= closing - begin
    return None
