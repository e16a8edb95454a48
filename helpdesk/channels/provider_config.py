"""Validation of `Inbox.provider_config`: per channel type, only the keys its module documents, each checked.

`api_base_url` goes through the outbound policy (it is where the server POSTs replies with the inbox's token);
the values that end up in a URL path (`phone_number_id`, `api_version`) are restricted to what the provider
issues, so they cannot change the path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError

from helpdesk.business_hours import hours_problem, zone_problem
from helpdesk.outbound import OutboundRefused, check_url

from .widget.identity import normalized_origin, origins_in

MAX_VALUE_LENGTH = 200


def _text(value: str) -> str | None:
    return None


def _base_url(value: str) -> str | None:
    try:
        check_url(value)
    except OutboundRefused as exc:
        return f"is refused by the outbound policy: {exc}"
    if "?" in value or "#" in value:
        return "must not have a query or fragment (paths are appended to it)"
    return None


def _origins(value: str) -> str | None:
    for item in origins_in(value):
        if normalized_origin(item) != item.rstrip("/").lower():
            return f'has "{item[:60]}", which is not an origin such as "https://shop.example"'
    return None


def _pattern(regex: str, description: str) -> Callable[[str], str | None]:
    compiled = re.compile(regex)
    return lambda value: None if compiled.fullmatch(value) else description


# Every inbox may have business hours (helpdesk.business_hours): out-of-office replies and SLA clocks follow them.
HOURS: dict[str, Callable[[str], str | None]] = {
    "business_hours": hours_problem,
    "time_zone": zone_problem,
    "away_message": _text,
}

# The keys each channel module's docstring lists (helpdesk/channels/<channel>.py), and the business hours.
KEYS: dict[str, dict[str, Callable[[str], str | None]]] = {
    "api": {},
    "telegram": {"api_base_url": _base_url},
    "whatsapp": {
        "phone_number_id": _pattern(r"[0-9]{1,32}", "must be the digits of Meta's phone number id"),
        "verify_token": _text,
        # The WhatsApp Business Account id: its message templates are listed under it (template sync).
        "waba_id": _pattern(r"[0-9]{1,32}", "must be the digits of Meta's WhatsApp Business Account id"),
        "api_version": _pattern(r"v[0-9]{1,3}\.[0-9]{1,3}", 'must look like "v21.0"'),
        "api_base_url": _base_url,
    },
    "slack": {
        "bot_user_id": _pattern(r"[A-Z0-9]{1,32}", 'must be a Slack user id such as "U0123ABCD"'),
        "api_base_url": _base_url,
    },
    "widget": {
        "allowed_origins": _origins,
        "prechat_fields": _pattern(
            r"(name|email)( (name|email))?", 'must be "name", "email" or "name email"'
        ),
        "follow_up_inbox": _pattern(r"[0-9]{1,18}", "must be the id of an e-mail inbox of this account"),
    },
    "email": {
        "smtp_host": _pattern(r"[A-Za-z0-9.-]{1,200}", "must be a host name or address"),
        "smtp_port": _pattern(r"[0-9]{1,5}", "must be a port number"),
        "smtp_security": _pattern(r"starttls|ssl|none", 'must be "starttls", "ssl" or "none"'),
        "smtp_username": _text,
        "from_address": _pattern(r"[^@\s]{1,64}@[A-Za-z0-9.-]{1,190}", "must be an e-mail address"),
        "from_name": _text,
        "greeting": _text,
        "sign_off": _text,
        "ai_replies_per_hour": _pattern(r"[0-9]{1,4}", "must be a whole number (0: no limit)"),
        "imap_host": _pattern(r"[A-Za-z0-9.-]{1,200}", "must be a host name or address"),
        "imap_port": _pattern(r"[0-9]{1,5}", "must be a port number"),
        "imap_security": _pattern(r"ssl|starttls|none", 'must be "ssl", "starttls" or "none"'),
        "imap_username": _text,
        "imap_folder": _pattern(r"[^\x00-\x1f\"\\]{1,100}", "must be a folder name"),
    },
}
for _keys in KEYS.values():
    _keys.update(HOURS)


def validate_provider_config(channel_type: str, config: Any) -> None:
    """Raise ValidationError naming the first bad key; empty strings mean "use the default"."""
    if not isinstance(config, dict):
        raise ValidationError("provider_config must be a JSON object.", code="invalid")
    known = KEYS.get(channel_type, {})
    for key, value in config.items():
        shown = key[:50]
        if key not in known:
            allowed = ", ".join(known) or "none"
            raise ValidationError(
                f'provider_config["{shown}"] is not a setting of this channel (known keys: {allowed}).',
                code="unknown_key",
            )
        if not isinstance(value, str):
            raise ValidationError(f'provider_config["{key}"] must be a string.', code="invalid")
        if not value:
            continue
        if len(value) > MAX_VALUE_LENGTH:
            raise ValidationError(
                f'provider_config["{key}"] is longer than {MAX_VALUE_LENGTH} characters.', code="invalid"
            )
        problem = known[key](value)
        if problem is not None:
            raise ValidationError(f'provider_config["{key}"] {problem}.', code="invalid")
