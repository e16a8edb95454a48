"""The entry point of automation rules: `automation_event` says that something happened to a conversation; the
account's rules for that event are evaluated by a Celery task after commit (helpdesk.timers.automation_evaluate,
on the helpdesk queue; the work is in helpdesk.services.automation_rules).

Called where conversations and messages are created and changed (message ingest, replies, the conversation
services) and by the SLA timers for `sla_breached`. Kept small and free of the services it is called from, so
any of them can import it without an import circle.

Bounds (the rule loop): while a rule's actions run (`rule_actions_running`), the changes they make raise no
events: a rule never triggers rules, not even itself (depth 1). The same event for the same conversation and
message is published once per transaction, however many services report it. A rolled-back change publishes
nothing. The per-conversation rate limit is applied where the rules run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from celery import current_app
from django.db import connection, transaction

from helpdesk.models import AutomationEvent, AutomationRule

logger = logging.getLogger(__name__)

EVALUATE_TASK = "helpdesk.timers.automation_evaluate"

_in_rule_actions: ContextVar[bool] = ContextVar("helpdesk_automation_in_rule_actions", default=False)


@contextmanager
def rule_actions_running() -> Iterator[None]:
    """Within this block (a rule's actions), changes raise no automation events."""
    token = _in_rule_actions.set(True)
    try:
        yield
    finally:
        _in_rule_actions.reset(token)


class _Publish:
    """The after-commit callback; its `key` lets a second report of the same event in the transaction see it."""

    def __init__(self, key: tuple[str, int, int | None]) -> None:
        self.key = key

    def __call__(self) -> None:
        event, conversation_id, message_id = self.key
        try:
            current_app.send_task(
                EVALUATE_TASK,
                kwargs={"event": event, "conversation_id": conversation_id, "message_id": message_id},
            )
        except Exception:
            # The change itself is committed; a broker outage costs this event's rules, not the request.
            logger.exception("could not enqueue automation %s for conversation %s", event, conversation_id)


def _already_queued(key: tuple[str, int, int | None]) -> bool:
    # Django keeps the transaction's callbacks here and drops them on rollback: deduplicating against this list
    # (not a set of our own) cannot remember an event whose transaction rolled back.
    return any(getattr(func, "key", None) == key for _sids, func, *_ in connection.run_on_commit)


def automation_event(*, event: str, conversation_id: int, message_id: int | None = None) -> None:
    """`event` (an AutomationEvent) happened to the conversation: evaluate the account's rules after commit."""
    if event not in AutomationEvent.values:
        raise ValueError(f"Unknown automation event {event!r}")
    if _in_rule_actions.get():
        return
    key = (event, conversation_id, message_id)
    if connection.in_atomic_block and _already_queued(key):
        return
    # Only when the account has a rule for it: for most changes one indexed query, no callback, no broker message.
    if AutomationRule.objects.filter(
        account__conversations=conversation_id, event=event, active=True
    ).exists():
        transaction.on_commit(_Publish(key))
