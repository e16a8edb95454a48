"""On-commit callbacks a test counts, without the dashboard's real-time events (helpdesk.realtime publishes one
after every committed change of a conversation or message; those have their own tests in tests/helpdesk/realtime),
nor the AI configuration cache's version change after a committed save of an assistant's configuration
(captain.answering.services.config_cache, tested in tests/captain/answering/test_config_cache.py)."""

from __future__ import annotations

from collections.abc import Callable

_NOT_COUNTED = ("helpdesk.realtime.publish", "captain.answering.services.config_cache")


def not_realtime(callbacks: list[Callable[[], object]]) -> list[Callable[[], object]]:
    return [cb for cb in callbacks if getattr(cb, "__module__", "") not in _NOT_COUNTED]
