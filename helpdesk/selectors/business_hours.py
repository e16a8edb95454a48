"""An inbox's business hours read for a moment: open or not, when it opens next, and the sentence a customer
reads when people are away (helpdesk.business_hours has the parsing and the calendar arithmetic)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _

from helpdesk.business_hours import Hours, closed_since, configured, next_open
from helpdesk.models import Inbox


def inbox_hours(inbox: Inbox) -> tuple[Hours, ZoneInfo] | None:
    """The inbox's weekly hours and their zone (the inbox's `time_zone`, else the account's); None: always open."""
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    if not str(config.get("business_hours") or "").strip():
        return None  # most inboxes: no query for the account's zone
    return configured(config, inbox.account.time_zone)


def inbox_is_open(*, inbox: Inbox, at: datetime | None = None) -> bool:
    setting = inbox_hours(inbox)
    at = at or timezone.now()
    return setting is None or next_open(*setting, at) == at


def inbox_next_open(*, inbox: Inbox, at: datetime | None = None) -> datetime | None:
    """When people are there next: `at` itself while open; None for hours that name no time at all."""
    setting = inbox_hours(inbox)
    at = at or timezone.now()
    return at if setting is None else next_open(*setting, at)


def inbox_closed_since(*, inbox: Inbox, at: datetime | None = None) -> datetime | None:
    """When the closed period around `at` began; None while open (or with no hours)."""
    setting = inbox_hours(inbox)
    return None if setting is None else closed_since(*setting, at or timezone.now())


def away_sentence(*, inbox: Inbox, at: datetime | None = None) -> str:
    """What a customer handed to people outside business hours reads, in the inbox's language: the inbox's away
    message (if it has one) and when someone will reply, in the hours' own time zone. Empty while open."""
    at = at or timezone.now()
    setting = inbox_hours(inbox)
    if setting is None or inbox_is_open(inbox=inbox, at=at):
        return ""
    hours, tz = setting
    opening = next_open(hours, tz, at)
    custom = str((inbox.provider_config or {}).get("away_message") or "").strip()
    with translation.override(inbox.language or settings.LANGUAGE_CODE):
        if opening is None:
            when = _("We are away right now; someone will reply as soon as we are back.")
        else:
            local = opening.astimezone(tz)
            when = _("We are away right now; someone will reply from %(day)s, %(time)s (%(zone)s).") % {
                "day": formats.date_format(local, "l"),
                "time": formats.date_format(local, "DATETIME_FORMAT"),
                "zone": tz.key,
            }
    return f"{custom}\n\n{when}" if custom else when
