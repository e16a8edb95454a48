"""An inbox's business hours and whether it is away now (the widget's away message, the e-mail follow-up).

Settings (`provider_config` of a widget inbox): `business_hours`, days and times separated by ";", e.g.
`mon-fri 09:00-17:30; sat 10:00-14:00` (a day not named is closed; `00:00-24:00` is the whole day), and
`time_zone`, an IANA name such as `Europe/Berlin` (empty: UTC). No `business_hours`: always open, never away.
"""

from __future__ import annotations

import re
from datetime import datetime
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


def is_away(config: object, at: datetime | None = None) -> bool:
    """Whether an inbox with `config` (its provider_config) is outside its business hours at `at` (now).
    A broken setting counts as open: the validator refuses it on save, and a chat is better than none."""
    if not isinstance(config, dict) or not str(config.get("business_hours") or "").strip():
        return False
    try:
        hours = parse_hours(str(config["business_hours"]))
        local = (at or timezone.now()).astimezone(zone(str(config.get("time_zone") or "")))
    except ValueError:
        return False
    minute = local.hour * 60 + local.minute
    return not any(start <= minute < end for start, end in hours.get(local.weekday(), []))
