"""Celery tasks of the conversation timers (helpdesk/services/auto_resolve.py): snoozes that end, conversations
waiting on the customer, and quiet conversations the AI is handling. Each runs on the beat schedule. Also the
evaluation of automation rules (helpdesk/services/automation_rules.py), queued by `automation_event`: it changes
conversations through the same services.

Not in helpdesk/tasks.py: these change conversations through the services (which import the outbox), and the
delivery tasks must stay below the services (tests/helpdesk/test_import_cycles.py). Registered with the worker
by the `CELERY_IMPORTS` setting (config/settings.py); a project that installs helpdesk as a plugin adds
"helpdesk.timers" to its own.
"""

from __future__ import annotations

from celery import shared_task

from helpdesk.conf import ai_responder
from helpdesk.services.auto_resolve import quiet_ai_judge_due, snoozed_wake_due, waiting_resolve_due
from helpdesk.services.automation import EVALUATE_TASK
from helpdesk.services.automation_rules import automation_evaluate as rules_evaluate
from helpdesk.services.polling import inboxes_poll_all
from helpdesk.services.sla import sla_breaches_mark

__all__ = [
    "auto_resolve_ai_sweep",
    "auto_resolve_waiting_sweep",
    "automation_evaluate",
    "mailboxes_poll",
    "sla_breach_sweep",
    "snoozed_wake_sweep",
]

TIMER_SWEEP_BATCH = 200
"""Conversations one timer sweep changes at most; the next beat tick takes the rest (oldest first)."""


@shared_task(acks_late=True)
def snoozed_wake_sweep() -> int:
    """Open again the snoozed conversations whose wake-up time has come (beat, every minute)."""
    return snoozed_wake_due(limit=TIMER_SWEEP_BATCH)


@shared_task(acks_late=True)
def auto_resolve_waiting_sweep() -> int:
    """Resolve conversations left unanswered by the customer for their account's
    `auto_resolve_waiting_after_hours` (resolved_by=inactivity; beat, every few minutes)."""
    return waiting_resolve_due(limit=TIMER_SWEEP_BATCH)


@shared_task(acks_late=True)
def auto_resolve_ai_sweep() -> int:
    """Ask the AI to judge the conversations it is handling that went quiet for their account's
    `auto_resolve_ai_after_minutes`, each quiet period once (beat, every minute). Without an AI responder that
    can judge, nothing is asked: those conversations stay with the AI until people look."""
    judge = getattr(ai_responder(), "judge_quiet_conversation", None)
    if judge is None:
        return 0
    return quiet_ai_judge_due(judge=judge, limit=TIMER_SWEEP_BATCH)


@shared_task(acks_late=True)
def mailboxes_poll() -> int:
    """Store the new mail of every e-mail inbox with an IMAP mailbox (beat, every minute). Two polls that overlap
    read the same mail at worst, and its Message-ID stores it once (helpdesk.services.polling)."""
    return inboxes_poll_all()


@shared_task(name=EVALUATE_TASK, acks_late=True)
def automation_evaluate(event: str, conversation_id: int, message_id: int | None = None) -> int:
    """Run the account's automation rules for one event on one conversation (`rules_evaluate`); returns how many
    rules ran. Not retried: a rule's actions are not idempotent (a note, an e-mail), and each run is recorded."""
    return len(rules_evaluate(event=event, conversation_id=conversation_id, message_id=message_id))


@shared_task(name="helpdesk.timers.sla_breach_sweep", acks_late=True)
def sla_breach_sweep() -> int:
    """Record the SLA targets missed since the last sweep (beat, every minute): helpdesk.services.sla."""
    return sla_breaches_mark()
