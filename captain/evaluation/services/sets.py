"""Writes of question sets and their questions (typed, uploaded, drafted and approved)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from captain.assistants.models import Assistant
from captain.evaluation.models import EvalQuestion, EvalSet
from captain.evaluation.services.imports import MAX_QUESTIONS, ParsedQuestion, parse_typed, parse_upload

MAX_NAME_CHARS = 200


def eval_set_create(*, assistant: Assistant, name: str) -> EvalSet:
    name = name.strip()
    if not name:
        raise ValidationError({"name": ["Give the set a name."]})
    return EvalSet.objects.create(
        account_id=assistant.account_id, assistant=assistant, name=name[:MAX_NAME_CHARS]
    )


def eval_set_rename(*, eval_set: EvalSet, name: str) -> EvalSet:
    name = name.strip()
    if not name:
        raise ValidationError({"name": ["Give the set a name."]})
    eval_set.name = name[:MAX_NAME_CHARS]
    eval_set.save(update_fields=["name"])
    return eval_set


def eval_set_delete(*, eval_set: EvalSet) -> None:
    """Deletes its questions, runs and answers with it."""
    eval_set.delete()


@transaction.atomic
def eval_questions_add(
    *, eval_set: EvalSet, questions: list[ParsedQuestion], origin: str, approved: bool = True
) -> list[EvalQuestion]:
    """Append questions to the set, all or none (the set's row is locked so two imports number apart)."""
    EvalSet.objects.select_for_update().filter(pk=eval_set.pk).first()
    existing = EvalQuestion.objects.filter(set=eval_set)
    if existing.count() + len(questions) > MAX_QUESTIONS:
        raise ValidationError(
            f"The set would hold {existing.count() + len(questions)} questions; at most {MAX_QUESTIONS}."
        )
    start = (existing.aggregate(top=Max("position"))["top"] or 0) + 1
    return EvalQuestion.objects.bulk_create(
        EvalQuestion(
            set=eval_set,
            position=start + i,
            question=q.question,
            expected=q.expected,
            previous=q.previous,
            origin=origin,
            approved=approved,
        )
        for i, q in enumerate(questions)
    )


def eval_questions_type(*, eval_set: EvalSet, text: str) -> list[EvalQuestion]:
    """Questions typed one per line."""
    return eval_questions_add(
        eval_set=eval_set, questions=parse_typed(text), origin=EvalQuestion.Origin.TYPED
    )


def eval_questions_import(*, eval_set: EvalSet, file_name: str, data: bytes) -> list[EvalQuestion]:
    """Questions of an uploaded CSV or JSONL file; nothing is stored when any line is bad."""
    questions = parse_upload(file_name=file_name, data=data)
    return eval_questions_add(eval_set=eval_set, questions=questions, origin=EvalQuestion.Origin.UPLOADED)


def eval_question_approve(*, question: EvalQuestion) -> EvalQuestion:
    question.approved = True
    question.save(update_fields=["approved"])
    return question


def eval_question_delete(*, question: EvalQuestion) -> None:
    """The question and the answers runs gave to it."""
    question.delete()
