"""Celery task of the copilot."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.copilot_generate", acks_late=True, reject_on_worker_lost=True)
def copilot_generate(run_id: int) -> str:
    """An agent's copilot request (draft, summary, rewrite): captain.copilot.services.copilot. A redelivered task runs
    it again; the charge is once per run."""
    from captain.copilot.services.copilot import copilot_run_execute

    return copilot_run_execute(run_id=run_id)
