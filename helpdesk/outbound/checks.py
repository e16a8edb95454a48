"""System check: the outbound allowlist parses. Checked at start-up (`manage.py migrate`, `check`, `runserver`), so
a typo in HELPDESK_OUTBOUND_ALLOWED_HOSTS stops scripts/run at once instead of failing the first tenant request
a worker makes with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from .policy import OutboundPolicy


@checks.register(checks.Tags.security)
def check_outbound_allowlist(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    try:
        OutboundPolicy.from_settings()
    except ImproperlyConfigured as exc:
        return [
            checks.Error(
                str(exc),
                hint="Entries are comma-separated: host, host:port, address, network or [IPv6]:port.",
                id="helpdesk.E001",
            )
        ]
    return []
