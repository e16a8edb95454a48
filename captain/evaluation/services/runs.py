"""Running a question set through the production team (the playground's path: no conversation, no charge).

A run is one Celery task on the captain queue, as the FAQ and example drafts are. It answers the approved
questions one after another and stores each answer as it goes, so a killed worker leaves a partial run that the
redelivered task (or a later one) resumes where it stopped. It must not hold the model ahead of customers: before
each question it checks for customer messages waiting for the AI, and if there are any it steps aside and queues
itself again a little later; it also hands over to a fresh task after a time budget, so a long set never makes
one task outlive the worker's time limits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from captain.answering.models import ReplyJob
from captain.assistants.models import TRIAGE_KEY
from captain.conf import captain_setting
from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun, EvalSet
from captain.evaluation.services.snapshot import config_snapshot
from captain.evaluation.services.verdicts import verdict_of
from captain.playground.services.playground import playground_run
from captain.queue import task
from captain.runtime import RunEvent, RunResult
from captain.runtime.team import TeamHooks

logger = logging.getLogger(__name__)

CUSTOMER_WAIT_SECONDS = 120
"""A reply job created this recently and still pending is a customer waiting: the run steps aside. Older pending
jobs are the sweeper's business (a stuck one must not stop every test run for ever)."""
YIELD_SECONDS = 10
"""How long a run that stepped aside waits before it looks again."""


class _Events(TeamHooks):
    """Collects the run events of every agent that answered the turn (the knowledge step's action is there)."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def on_answer(self, node: str, result: RunResult) -> None:
        self.events.extend(result.events)


def eval_run_create(*, eval_set: EvalSet, label: str = "") -> EvalRun:
    """A queued run with the assistant's configuration as it is now (a later edit is the next run's)."""
    questions = EvalQuestion.objects.filter(set=eval_set, approved=True).count()
    if not questions:
        raise ValidationError("The set has no approved questions to run.")
    snapshot = config_snapshot(eval_set.assistant)
    return EvalRun.objects.create(
        set=eval_set, label=label.strip()[:200], question_count=questions, **asdict(snapshot)
    )


def eval_run_start(*, eval_set: EvalSet, label: str = "") -> EvalRun:
    """Create the run and queue its task once the row is committed."""
    run = eval_run_create(eval_set=eval_set, label=label)
    eval_run = task("captain.tasks.eval_run")
    transaction.on_commit(lambda: eval_run.delay(run.pk))
    return run


def _customers_waiting() -> bool:
    since = timezone.now() - timedelta(seconds=CUSTOMER_WAIT_SECONDS)
    return ReplyJob.objects.filter(status=ReplyJob.Status.PENDING, created_at__gte=since).exists()


def _unanswered(run: EvalRun) -> list[EvalQuestion]:
    return list(
        EvalQuestion.objects.filter(set_id=run.set_id, approved=True)
        .exclude(answers__run=run)
        .order_by("position", "id")
    )


def eval_answer_question(*, run: EvalRun, question: EvalQuestion) -> EvalAnswer:
    """Answer one question as the playground would (history from its `previous` turns) and store it."""
    started = time.monotonic()
    events = _Events()
    turn = playground_run(
        assistant=run.set.assistant,
        start_key=TRIAGE_KEY,
        history=[{"role": t["role"], "content": t["content"]} for t in question.previous],
        message=question.question,
        hooks=[events],
    )
    verdict = verdict_of(turn.outcome, events.events)
    answer, created = EvalAnswer.objects.get_or_create(
        run=run,
        question=question,
        defaults={
            "reply": turn.text,
            "outcome": "handoff" if turn.outcome == "human_handoff" else turn.outcome,
            "action": verdict.action,
            "verdict": verdict.verdict,
            "detail": turn.detail[:2000],
            "sources": turn.sources,
            "seconds": round(time.monotonic() - started, 2),
        },
    )
    if created:
        EvalRun.objects.filter(pk=run.pk).update(answered_count=F("answered_count") + 1)
    return answer


def _budget_seconds() -> float:
    """Half the run deadline the task limits are built on: the task hands over long before they strike."""
    return max(30.0, float(captain_setting("RUN_DEADLINE_SECONDS")) / 2)


def eval_run_execute(
    *,
    run_id: int,
    step_aside: bool = True,
    budget_seconds: float | None = None,
    on_answer: Callable[[EvalAnswer], Any] | None = None,
) -> str:
    """The task's body: answer the run's unanswered approved questions. Returns "done", "failed", "missing",
    or "continued" when it queued itself again (customers waiting, or its time budget spent). `step_aside`
    False (the management command) answers everything here and now."""
    run = EvalRun.objects.select_related("set__assistant").filter(pk=run_id).first()
    if run is None:
        return "missing"
    if run.status in (EvalRun.Status.DONE, EvalRun.Status.FAILED):
        return run.status
    EvalRun.objects.filter(pk=run.pk, started__isnull=True).update(started=timezone.now())
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING)
    deadline = time.monotonic() + (budget_seconds if budget_seconds is not None else _budget_seconds())
    try:
        for question in _unanswered(run):
            if step_aside and (_customers_waiting() or time.monotonic() >= deadline):
                _continue_later(run)
                return "continued"
            answer = eval_answer_question(run=run, question=question)
            if on_answer is not None:
                on_answer(answer)
    except Exception as exc:  # the page must say the run failed, not show it running for ever
        logger.exception("evaluation run %s failed", run.pk)
        EvalRun.objects.filter(pk=run.pk).update(
            status=EvalRun.Status.FAILED, detail=type(exc).__name__, finished=timezone.now()
        )
        return "failed"
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.DONE, finished=timezone.now())
    return "done"


def _continue_later(run: EvalRun) -> None:
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.QUEUED)
    task("captain.tasks.eval_run").apply_async((run.pk,), countdown=YIELD_SECONDS)


def eval_run_delete(*, run: EvalRun) -> None:
    run.delete()


def eval_answer_mark(
    *, answer: EvalAnswer, mark: str, user_id: int | None, note: str | None = None
) -> EvalAnswer:
    """The admin's right/wrong (or unmarked again) on one answer."""
    if mark not in EvalAnswer.Mark.values:
        raise ValidationError(
            {"mark": [f"Unknown mark {mark!r}: use one of {', '.join(EvalAnswer.Mark.values)}."]}
        )
    answer.mark = mark
    answer.marked_by_id = user_id if mark != EvalAnswer.Mark.UNMARKED else None
    fields = ["mark", "marked_by"]
    if note is not None:
        answer.note = note.strip()[:2000]
        fields.append("note")
    answer.save(update_fields=fields)
    return answer
