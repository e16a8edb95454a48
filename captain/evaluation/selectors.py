"""Reads of question sets, runs and answers; `access_*` fetch within the account or 404."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from captain.assistants.models import Assistant
from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun, EvalSet


def eval_set_list(*, assistant: Assistant) -> QuerySet[EvalSet]:
    return EvalSet.objects.filter(assistant=assistant, account_id=assistant.account_id).annotate(
        question_total=Count("questions", distinct=True), run_total=Count("runs", distinct=True)
    )


def access_eval_set(*, account_id: int, set_id: int) -> EvalSet:
    found = EvalSet.objects.select_related("assistant").filter(pk=set_id, account_id=account_id).first()
    if found is None:
        raise Http404("No such question set.")
    return found


def access_eval_question(*, eval_set: EvalSet, question_id: int) -> EvalQuestion:
    found = EvalQuestion.objects.filter(pk=question_id, set=eval_set).first()
    if found is None:
        raise Http404("No such question.")
    return found


def access_eval_run(*, account_id: int, run_id: int) -> EvalRun:
    found = (
        EvalRun.objects.select_related("set__assistant").filter(pk=run_id, set__account_id=account_id).first()
    )
    if found is None:
        raise Http404("No such run.")
    return found


def access_eval_answer(*, run: EvalRun, answer_id: int) -> EvalAnswer:
    found = EvalAnswer.objects.filter(pk=answer_id, run=run).first()
    if found is None:
        raise Http404("No such answer.")
    return found


def eval_questions(*, eval_set: EvalSet) -> QuerySet[EvalQuestion]:
    return EvalQuestion.objects.filter(set=eval_set).order_by("position", "id")


def eval_runs(*, eval_set: EvalSet) -> QuerySet[EvalRun]:
    return EvalRun.objects.filter(set=eval_set).order_by("-created", "-id")


def eval_answers(*, run: EvalRun) -> QuerySet[EvalAnswer]:
    return (
        EvalAnswer.objects.filter(run=run)
        .select_related("question", "marked_by")
        .order_by("question__position", "question_id")
    )


@dataclass(frozen=True)
class RunTotals:
    answered: int = 0
    verified: int = 0
    refused: int = 0
    unchecked: int = 0
    errors: int = 0
    right: int = 0
    wrong: int = 0


def eval_run_totals(*, run: EvalRun) -> RunTotals:
    V, M = EvalAnswer.Verdict, EvalAnswer.Mark
    counts = EvalAnswer.objects.filter(run=run).aggregate(
        answered=Count("id"),
        verified=Count("id", filter=Q(verdict=V.VERIFIED)),
        refused=Count("id", filter=Q(verdict=V.REFUSED)),
        unchecked=Count("id", filter=Q(verdict=V.UNCHECKED)),
        errors=Count("id", filter=Q(verdict=V.ERROR)),
        right=Count("id", filter=Q(mark=M.RIGHT)),
        wrong=Count("id", filter=Q(mark=M.WRONG)),
    )
    return RunTotals(**counts)


@dataclass(frozen=True)
class ComparedQuestion:
    """One question of a set, as two runs answered it."""

    question: EvalQuestion
    left: EvalAnswer | None
    right: EvalAnswer | None
    changes: list[str] = field(default_factory=list)
    """What differs: "answer", "verdict", "mark" (empty: the same)."""

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _changes(left: EvalAnswer | None, right: EvalAnswer | None) -> list[str]:
    if left is None or right is None:
        return ["answered"] if (left is None) != (right is None) else []
    changes = []
    if " ".join(left.reply.split()) != " ".join(right.reply.split()):
        changes.append("answer")
    if left.verdict != right.verdict:
        changes.append("verdict")
    if left.mark != right.mark:
        changes.append("mark")
    return changes


def eval_runs_compare(*, left: EvalRun, right: EvalRun) -> list[ComparedQuestion]:
    """Every question either run answered, in the set's order, with the differences. Both runs must be of one
    set (404 otherwise: two sets' questions cannot be paired)."""
    if left.set_id != right.set_id:
        raise Http404("The two runs are of different question sets.")
    by_question: dict[int, list[EvalAnswer | None]] = {}
    for side, run in enumerate((left, right)):
        for answer in eval_answers(run=run):
            by_question.setdefault(answer.question_id, [None, None])[side] = answer
    questions = EvalQuestion.objects.filter(pk__in=by_question).order_by("position", "id")
    return [
        ComparedQuestion(q, by_question[q.pk][0], by_question[q.pk][1], _changes(*by_question[q.pk]))
        for q in questions
    ]


def eval_question_counts(*, eval_set: EvalSet) -> dict[str, int]:
    counts = EvalQuestion.objects.filter(set=eval_set).aggregate(
        total=Count("id"), pending=Count("id", filter=Q(approved=False))
    )
    return {"total": counts["total"], "pending": counts["pending"]}
