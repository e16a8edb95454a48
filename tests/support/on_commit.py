"""On-commit callbacks a test counts, without the dashboard's real-time events (helpdesk.realtime publishes one
after every committed change of a conversation or message; those have their own tests in tests/helpdesk/realtime)."""

from __future__ import annotations

from collections.abc import Callable


def not_realtime(callbacks: list[Callable[[], object]]) -> list[Callable[[], object]]:
    return [cb for cb in callbacks if getattr(cb, "__module__", "") != "helpdesk.realtime.publish"]
