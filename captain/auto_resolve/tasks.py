"""Celery task of the judge."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.auto_resolve_judge", acks_late=True)
def auto_resolve_judge(conversation_id: int, quiet_since: str) -> str:
    """Judge one conversation the AI was handling that went quiet (captain.auto_resolve.services.auto_resolve): resolved,
    or handed to people. Queued by helpdesk's auto-resolve sweep, once per quiet period; no credits charged.
    Not rejected on a lost worker: the sweep asks again once the period's claim lapses, instead of a
    conversation that kills its worker coming back at once for ever."""
    from datetime import datetime

    from captain.auto_resolve.services.auto_resolve import judge_quiet_conversation

    return judge_quiet_conversation(
        conversation_id=conversation_id, quiet_since=datetime.fromisoformat(quiet_since)
    )
