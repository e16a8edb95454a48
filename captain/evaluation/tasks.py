"""Celery task of the evaluation domain."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.eval_run", acks_late=True, reject_on_worker_lost=True)
def eval_run(run_id: int) -> str:
    """Answer a test run's questions (captain.evaluation.services.runs). Redelivered after a lost worker: it skips
    the questions already answered, and nothing it does is billed or sent."""
    from captain.evaluation.services.runs import eval_run_execute

    return eval_run_execute(run_id=run_id)


@shared_task(name="captain.tasks.eval_questions_draft", acks_late=True, reject_on_worker_lost=True)
def eval_questions_draft(set_id: int) -> int:
    """Draft unapproved test questions from the assistant's documents (captain.evaluation.services.drafts)."""
    from captain.evaluation.services.drafts import eval_questions_draft as draft

    return draft(set_id=set_id)
