"""helpdesk.business_hours: when an inbox opens next and since when it is closed, on the local calendar of its
time zone (a day the clocks change keeps its local opening hours), across midnight and over closed days."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from helpdesk.business_hours import closed_since, next_open, parse_hours

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = parse_hours("mon-fri 09:00-17:30; sat 10:00-14:00")


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN)


def test_while_open_it_is_open_now_and_has_no_closed_period():
    at = berlin(2026, 11, 27, 12, 0)  # Friday noon
    assert next_open(WEEKDAYS, BERLIN, at) == at
    assert closed_since(WEEKDAYS, BERLIN, at) is None


def test_friday_evening_opens_saturday_morning_and_closed_since_friday_17_30():
    at = berlin(2026, 11, 27, 20, 0)
    assert next_open(WEEKDAYS, BERLIN, at) == berlin(2026, 11, 28, 10, 0)
    assert closed_since(WEEKDAYS, BERLIN, at) == berlin(2026, 11, 27, 17, 30)


def test_a_closed_sunday_opens_on_monday_and_has_been_closed_since_saturday_14_00():
    at = berlin(2026, 11, 29, 11, 0)
    assert next_open(WEEKDAYS, BERLIN, at) == berlin(2026, 11, 30, 9, 0)
    assert closed_since(WEEKDAYS, BERLIN, at) == berlin(2026, 11, 28, 14, 0)


def test_before_opening_on_a_weekday_it_opens_the_same_morning():
    assert next_open(WEEKDAYS, BERLIN, berlin(2026, 11, 30, 7, 15)) == berlin(2026, 11, 30, 9, 0)


@pytest.mark.parametrize(
    ("at", "opens", "utc_offset_hours"),
    [
        # Sunday 29 March 2026: Berlin moves from UTC+1 to UTC+2 at 02:00. Monday's 09:00 is 07:00 UTC.
        (datetime(2026, 3, 29, 10, 0, tzinfo=UTC), datetime(2026, 3, 30, 7, 0, tzinfo=UTC), 2),
        # Sunday 25 October 2026: back to UTC+1. Monday's 09:00 is 08:00 UTC.
        (datetime(2026, 10, 25, 10, 0, tzinfo=UTC), datetime(2026, 10, 26, 8, 0, tzinfo=UTC), 1),
    ],
)
def test_the_day_after_a_clock_change_opens_at_nine_local_time(at, opens, utc_offset_hours):
    opening = next_open(WEEKDAYS, BERLIN, at)
    assert opening == opens
    assert opening.astimezone(BERLIN).hour == 9
    assert opening.astimezone(BERLIN).utcoffset().total_seconds() == utc_offset_hours * 3600


def test_hours_across_midnight_are_two_ranges_and_the_night_is_open():
    night_shift = parse_hours("mon-fri 22:00-24:00; tue-sat 00:00-06:00")
    tuesday_3am = berlin(2026, 12, 1, 3, 0)
    assert next_open(night_shift, BERLIN, tuesday_3am) == tuesday_3am
    tuesday_noon = berlin(2026, 12, 1, 12, 0)
    assert next_open(night_shift, BERLIN, tuesday_noon) == berlin(2026, 12, 1, 22, 0)
    assert closed_since(night_shift, BERLIN, tuesday_noon) == berlin(2026, 12, 1, 6, 0)


def test_hours_with_no_time_never_open():
    assert next_open({}, BERLIN, berlin(2026, 11, 27, 12, 0)) is None
    assert closed_since({}, BERLIN, berlin(2026, 11, 27, 12, 0)) is None
