"""Celery tasks of the AI team. They take ids (never message bodies) and call one service each."""

from __future__ import annotations

import logging

from celery import shared_task
from opentelemetry import trace

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")
# Each domain keeps its tasks in its own module; importing them here registers them when Celery autodiscovers
# `captain.tasks`. Their names stay `captain.tasks.<function>` (explicit `name=`), as queued tasks name them.
from captain.actions import tasks as actions_tasks  # noqa: E402, F401
from captain.answering import tasks as answering_tasks  # noqa: E402, F401
from captain.knowledge import tasks as knowledge_tasks  # noqa: E402, F401
from captain.routing import tasks as routing_tasks  # noqa: E402, F401


@shared_task(name="captain.tasks.playground_turn", acks_late=True, reject_on_worker_lost=True)
def playground_turn(run_id: int) -> str:
    """Answer one playground message (captain.services.playground); the page polls the row for progress."""
    from captain.services.playground import playground_turn_run

    return playground_turn_run(run_id=run_id)


@shared_task(name="captain.tasks.auto_resolve_judge", acks_late=True)
def auto_resolve_judge(conversation_id: int, quiet_since: str) -> str:
    """Judge one conversation the AI was handling that went quiet (captain.services.auto_resolve): resolved,
    or handed to people. Queued by helpdesk's auto-resolve sweep, once per quiet period; no credits charged.
    Not rejected on a lost worker: the sweep asks again once the period's claim lapses, instead of a
    conversation that kills its worker coming back at once for ever."""
    from datetime import datetime

    from captain.services.auto_resolve import judge_quiet_conversation

    return judge_quiet_conversation(
        conversation_id=conversation_id, quiet_since=datetime.fromisoformat(quiet_since)
    )


@shared_task(name="captain.tasks.copilot_generate", acks_late=True, reject_on_worker_lost=True)
def copilot_generate(run_id: int) -> str:
    """An agent's copilot request (draft, summary, rewrite): captain.services.copilot. A redelivered task runs
    it again; the charge is once per run."""
    from captain.services.copilot import copilot_run_execute

    return copilot_run_execute(run_id=run_id)
