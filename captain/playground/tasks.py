"""Celery task of the playground."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.playground_turn", acks_late=True, reject_on_worker_lost=True)
def playground_turn(run_id: int) -> str:
    """Answer one playground message (captain.playground.services.playground); the page polls the row for progress."""
    from captain.playground.services.playground import playground_turn_run

    return playground_turn_run(run_id=run_id)
