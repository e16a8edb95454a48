"""A run answers every approved question through the production team, charges nothing and writes no
conversation; verdicts, marks, the compare view of two runs, and resuming a partial run."""

from __future__ import annotations

import pytest

from captain.answering.models import CreditLedgerEntry, Run
from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun
from captain.evaluation.selectors import eval_run_totals, eval_runs_compare
from captain.evaluation.services import runs as runs_service
from captain.evaluation.services.drafts import eval_questions_draft
from captain.evaluation.services.runs import eval_answer_mark, eval_run_create, eval_run_execute
from captain.evaluation.services.sets import eval_question_approve, eval_questions_type, eval_set_create
from captain.evaluation.services.verdicts import verdict_of
from captain.runtime import RunEvent
from helpdesk.models import Conversation, Message
from tests.factories import AssistantFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def eval_set():
    eval_set = eval_set_create(assistant=AssistantFactory(name="Rental desk"), name="Launch check")
    eval_questions_type(eval_set=eval_set, text="Where can I rent a bike?\nCan I talk to a person?")
    return eval_set


def test_a_run_stores_answers_and_charges_nothing(model, eval_set):
    run = eval_run_create(eval_set=eval_set, label="first")
    assert run.status == "queued" and run.question_count == 2 and run.config_hash

    assert eval_run_execute(run_id=run.pk) == "done"

    run.refresh_from_db()
    assert run.status == "done" and run.answered_count == 2 and run.finished
    price, person = EvalAnswer.objects.filter(run=run).order_by("question__position")
    assert price.reply == "You can rent a city bike at our front desk."
    assert (price.outcome, price.verdict) == ("reply", "verified")
    assert (person.outcome, person.verdict) == ("handoff", "refused")
    assert person.reply == eval_set.assistant.handoff_message
    # The playground's path: no conversation, no message, no run record, no ledger row.
    assert not CreditLedgerEntry.objects.exists()
    assert not Conversation.objects.exists() and not Message.objects.exists() and not Run.objects.exists()
    assert eval_run_totals(run=run).verified == 1 and eval_run_totals(run=run).refused == 1


def test_a_run_resumes_where_a_killed_worker_left_it(model, eval_set):
    run = eval_run_create(eval_set=eval_set)
    first = EvalQuestion.objects.filter(set=eval_set).order_by("position").first()
    runs_service.eval_answer_question(run=run, question=first)
    asked = len(model.requests)

    assert eval_run_execute(run_id=run.pk) == "done"

    assert EvalAnswer.objects.filter(run=run).count() == 2
    assert all("price" not in str(r["messages"][-1]) for r in model.requests[asked:])  # not asked again
    assert eval_run_execute(run_id=run.pk) == "done"  # a redelivered task finds nothing to do


def test_drafted_questions_wait_for_approval(model, eval_set, monkeypatch):
    from captain.evaluation.services import drafts
    from captain.knowledge.models import KnowledgeDocument

    document = KnowledgeDocument.objects.create(
        assistant=eval_set.assistant, account=eval_set.account, kind="file", title="Prices", status="ready"
    )
    monkeypatch.setattr(
        drafts, "_passages", lambda d: "Bikes cost 12 euros per day." if d == document else ""
    )
    assert eval_questions_draft(set_id=eval_set.pk) == 1
    drafted = EvalQuestion.objects.get(origin="drafted")
    assert not drafted.approved and drafted.expected == "12 euros"
    assert eval_run_create(eval_set=eval_set).question_count == 2  # the drafted one is not run
    eval_question_approve(question=drafted)
    assert eval_run_create(eval_set=eval_set).question_count == 3


def test_a_run_steps_aside_while_customers_wait(model, eval_set, monkeypatch):
    queued = []
    monkeypatch.setattr(runs_service, "_customers_waiting", lambda: True)
    monkeypatch.setattr(runs_service, "_continue_later", lambda run: queued.append(run.pk))
    run = eval_run_create(eval_set=eval_set)
    assert eval_run_execute(run_id=run.pk) == "continued"
    assert queued == [run.pk] and not EvalAnswer.objects.exists()
    assert eval_run_execute(run_id=run.pk, step_aside=False) == "done"


def event(action: str, unsupported: list | None = None) -> RunEvent:
    return RunEvent("knowledge", "assistant", name=action, data={"unsupported": unsupported or []})


@pytest.mark.parametrize(
    ("outcome", "events", "verdict"),
    [
        ("reply", [event("answered")], "verified"),
        ("reply", [event("faq_answer")], "verified"),
        ("reply", [event("evidence_answer")], "verified"),
        ("reply", [event("answered", [["42 euros"]])], "verified"),  # the rewrite passed the check
        ("reply", [], "verified"),  # a team without knowledge
        ("reply", [event("off")], "verified"),
        ("reply", [event("unknown")], "refused"),
        ("reply", [event("off_topic")], "refused"),
        ("human_handoff", [event("grounding_handoff", [["42"], ["42"]])], "refused"),
        ("human_handoff", [], "refused"),
        ("reply", [event("clarify")], "unchecked"),
        ("reply", [event("some_new_action")], "unchecked"),
        ("error", [], "error"),
    ],
)
def test_the_verdict_mapping(outcome, events, verdict):
    assert verdict_of(outcome, events).verdict == verdict


def test_marks_and_the_comparison_of_two_runs(model, eval_set):
    user = UserFactory()
    first = eval_run_create(eval_set=eval_set, label="before")
    eval_run_execute(run_id=first.pk)
    price, person = EvalAnswer.objects.filter(run=first).order_by("question__position")
    eval_answer_mark(answer=price, mark="right", user_id=user.pk, note="matches the price list")
    eval_answer_mark(answer=person, mark="wrong", user_id=user.pk)
    price.refresh_from_db()
    assert (price.mark, price.marked_by_id, price.note) == ("right", user.pk, "matches the price list")
    assert (eval_run_totals(run=first).right, eval_run_totals(run=first).wrong) == (1, 1)

    eval_set.assistant.handoff_message = "Someone from the team will answer shortly."
    eval_set.assistant.save()
    second = eval_run_create(eval_set=eval_set, label="after")
    assert second.config_hash != first.config_hash
    eval_run_execute(run_id=second.pk)

    rows = eval_runs_compare(left=first, right=second)
    assert [r.question.question for r in rows] == ["Where can I rent a bike?", "Can I talk to a person?"]
    assert rows[0].changes == ["mark"]  # same answer, marked only in the first run
    assert rows[1].changes == ["answer", "mark"]
    assert rows[1].right.reply == "Someone from the team will answer shortly."


def test_a_bad_mark_is_refused(model, eval_set):
    from django.core.exceptions import ValidationError

    run = eval_run_create(eval_set=eval_set)
    eval_run_execute(run_id=run.pk)
    with pytest.raises(ValidationError):
        eval_answer_mark(answer=EvalAnswer.objects.first(), mark="maybe", user_id=None)
    assert EvalRun.objects.get().status == "done"
