"""Business hours of a widget inbox (helpdesk.business_hours): set in the admin with a time zone, refused
with a clear message when malformed; outside them the visitor API says `away` with the away message and asks for
the visitor's e-mail (never of a visitor identified with setUser)."""

from __future__ import annotations

import html
from datetime import UTC, datetime

import pytest

from helpdesk.business_hours import DAYS, is_away, parse_hours
from helpdesk.channels.widget import identifier_hash
from helpdesk.models import Inbox
from tests.factories import AccountFactory
from tests.helpdesk.channels_widget.support import PAGE, SECRET, call, new_visitor, widget_inbox

ALWAYS_OPEN = "mon-sun 00:00-24:00"


def closed_now() -> str:
    """Hours with no minute today or tomorrow, in any time zone: away for the whole test."""
    return f"{DAYS[(datetime.now(UTC).weekday() + 3) % 7]} 00:00-00:01"


BERLIN_HOURS = {"business_hours": "mon-fri 09:00-17:30; sat 10:00-14:00", "time_zone": "Europe/Berlin"}


@pytest.mark.parametrize(
    ("at", "away"),
    [
        (datetime(2026, 11, 27, 7, 59, tzinfo=UTC), True),  # Friday 08:59 in Berlin (UTC+1 in winter)
        (datetime(2026, 11, 27, 8, 0, tzinfo=UTC), False),  # Friday 09:00 in Berlin
        (datetime(2026, 11, 27, 16, 29, tzinfo=UTC), False),  # 17:29
        (datetime(2026, 11, 27, 16, 30, tzinfo=UTC), True),  # 17:30: closed
        (datetime(2026, 11, 28, 9, 30, tzinfo=UTC), False),  # Saturday 10:30
        (datetime(2026, 11, 29, 11, 0, tzinfo=UTC), True),  # Sunday: not named, closed
        (datetime(2026, 7, 3, 7, 30, tzinfo=UTC), False),  # a Friday in summer: 09:30 in Berlin (UTC+2)
    ],
)
def test_away_follows_the_weekly_hours_in_the_inboxs_time_zone(at, away):
    assert is_away(BERLIN_HOURS, at) is away


def test_no_business_hours_is_always_open():
    assert is_away({}, datetime(2026, 11, 29, 3, 0, tzinfo=UTC)) is False
    assert is_away({"time_zone": "Europe/Berlin"}, datetime(2026, 11, 29, 3, 0, tzinfo=UTC)) is False


def test_a_day_range_may_wrap_over_the_week_end_and_24_00_is_the_whole_day():
    hours = parse_hours("fri-mon 00:00-24:00")
    assert sorted(hours) == [0, 4, 5, 6]
    assert hours[6] == [(0, 1440)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("widget_business_hours", "weekdays 9-5", '"weekdays 9-5" is not like'),
        ("widget_business_hours", "mon 17:00-09:00", "ends before it starts"),
        ("widget_business_hours", "mon 09:00-25:00", "is not a time of day"),
        ("widget_time_zone", "Mars/Olympus", "is not a time zone"),
    ],
)
def test_the_admin_refuses_malformed_hours_with_a_clear_message(admin_client, field, value, message):
    response = admin_client.post(
        "/admin/helpdesk/inbox/add/",
        {
            "account": AccountFactory().pk,
            "name": "Website",
            "channel_type": "widget",
            "provider_config": "{}",
            "widget_allowed_origins": "https://shop.example",
            field: value,
        },
    )
    assert response.status_code == 200  # the form again, with the error on the field
    assert message in html.unescape(response.content.decode())
    assert not Inbox.objects.filter(name="Website").exists()


@pytest.mark.django_db
def test_the_admin_saves_hours_time_zone_and_away_message(admin_client):
    response = admin_client.post(
        "/admin/helpdesk/inbox/add/",
        {
            "account": AccountFactory().pk,
            "name": "Website",
            "channel_type": "widget",
            "provider_config": "{}",
            "widget_allowed_origins": "https://shop.example",
            "widget_business_hours": "mon-fri 09:00-17:00",
            "widget_time_zone": "Asia/Shanghai",
            "widget_away_message": "Back at 9.",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    config = Inbox.objects.get(name="Website").provider_config
    assert (config["business_hours"], config["time_zone"], config["away_message"]) == (
        "mon-fri 09:00-17:00",
        "Asia/Shanghai",
        "Back at 9.",
    )


@pytest.mark.django_db
def test_outside_hours_the_session_is_away_with_the_message_and_asks_for_the_e_mail(client):
    inbox = widget_inbox()
    inbox.provider_config.update(
        business_hours=closed_now(), time_zone="Europe/Berlin", away_message="We are back at 9."
    )
    inbox.save()
    away = call(client, "POST", inbox, "session").json()

    inbox.provider_config["business_hours"] = ALWAYS_OPEN
    inbox.save()
    open_ = call(client, "POST", inbox, "session").json()

    assert (away["away"], away["away_message"], away["ask_email"]) == (True, "We are back at 9.", True)
    assert (open_["away"], open_["ask_email"]) == (False, False)


@pytest.mark.django_db
def test_an_identified_visitor_is_not_asked_for_an_e_mail_when_away(client):
    inbox = widget_inbox()
    inbox.provider_config.update(business_hours=closed_now())
    inbox.save()
    token = new_visitor(client, inbox)
    identified = call(
        client,
        "POST",
        inbox,
        "identify",
        token=token,
        body={
            "identifier": "customer-42",
            "identifier_hash": identifier_hash(SECRET, "customer-42"),
            "name": "Ann",
            "email": "ann@example.com",
        },
    ).json()["visitor_token"]

    session = call(client, "POST", inbox, "session", token=identified, origin=PAGE).json()

    assert (session["away"], session["ask_email"]) == (True, False)
