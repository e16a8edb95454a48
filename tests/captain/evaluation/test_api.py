"""The evaluation API: sets, questions (add, import, approve), runs, marks, compare; other accounts get 404."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun
from captain.evaluation.services.imports import ParsedQuestion
from captain.evaluation.services.runs import eval_run_execute
from captain.evaluation.services.sets import eval_questions_add, eval_set_create
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory

pytestmark = pytest.mark.django_db

BASE = "/api/v1/captain/accounts/{account}/"


def api_for(membership):
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def test_a_set_its_questions_a_run_a_mark_and_a_comparison(admin, model, django_capture_on_commit_callbacks):
    assistant = AssistantFactory(account=admin.account)
    api = api_for(admin)
    base = BASE.format(account=admin.account_id)

    created = api.post(f"{base}assistants/{assistant.id}/eval-sets/", {"name": "Launch"}, format="json")
    assert created.status_code == 201
    set_url = f"{base}eval-sets/{created.data['id']}/"
    added = api.post(
        f"{set_url}questions/",
        {"questions": [{"question": "Where can I rent a bike?", "expected": "at the front desk"}]},
        format="json",
    )
    assert added.status_code == 201 and added.data["questions"][0]["origin"] == "typed"
    content = json.dumps({"question": "And for kids?", "previous": [{"role": "user", "content": "Bikes?"}]})
    imported = api.post(f"{set_url}questions/import/", {"format": "jsonl", "content": content}, format="json")
    assert imported.status_code == 201 and imported.data["questions"][0]["previous"][0]["content"] == "Bikes?"
    listed = api.get(f"{set_url}questions/")
    assert [q["question"] for q in listed.data["results"]] == [
        "Where can I rent a bike?",
        "And for kids?",
    ]

    with django_capture_on_commit_callbacks() as callbacks:
        started = api.post(f"{set_url}runs/", {"label": "first"}, format="json")
    assert started.status_code == 202 and started.data["status"] == "queued" and len(callbacks) == 1
    eval_run_execute(run_id=started.data["id"])  # what the queued task does

    run_url = f"{base}eval-runs/{started.data['id']}/"
    run = api.get(run_url).data
    assert run["status"] == "done" and run["totals"]["answered"] == 2 and run["totals"]["verified"] == 2
    answer = run["answers"][0]
    assert (answer["question_text"], answer["verdict"], answer["expected"]) == (
        "Where can I rent a bike?",
        "verified",
        "at the front desk",
    )
    marked = api.post(
        f"{run_url}answers/{answer['id']}/mark/", {"mark": "wrong", "note": "no opening hours"}, format="json"
    )
    assert marked.status_code == 200 and marked.data["mark"] == "wrong"
    assert marked.data["marked_by"] == admin.user_id
    assert (
        api.post(f"{run_url}answers/{answer['id']}/mark/", {"mark": "maybe"}, format="json").status_code
        == 400
    )

    with django_capture_on_commit_callbacks():
        second = api.post(f"{set_url}runs/", {}, format="json").data
    eval_run_execute(run_id=second["id"])
    compared = api.get(f"{run_url}compare/{second['id']}/").data
    assert [q["changes"] for q in compared["questions"]] == [["mark"], []]
    assert compared["left"]["label"] == "first"


def test_a_bad_import_is_a_400_naming_the_line_and_stores_nothing(admin):
    eval_set = eval_set_create(assistant=AssistantFactory(account=admin.account), name="Launch")
    url = f"{BASE.format(account=admin.account_id)}eval-sets/{eval_set.id}/questions/import/"
    response = api_for(admin).post(
        url, {"format": "csv", "content": "question,expected\nfine,x\n,only expected\n"}, format="json"
    )
    assert response.status_code == 400
    assert "Line 3: the question is empty." in json.dumps(response.data)
    assert not EvalQuestion.objects.exists()


def test_drafted_questions_are_approved_and_a_run_needs_questions(admin):
    eval_set = eval_set_create(assistant=AssistantFactory(account=admin.account), name="Launch")
    base = f"{BASE.format(account=admin.account_id)}eval-sets/{eval_set.id}/"
    api = api_for(admin)
    assert api.post(f"{base}runs/", {}, format="json").status_code == 400  # nothing to run yet
    (drafted,) = eval_questions_add(
        eval_set=eval_set, questions=[ParsedQuestion("Drafted?")], origin="drafted", approved=False
    )
    assert api.post(f"{base}runs/", {}, format="json").status_code == 400  # not approved yet
    approved = api.post(f"{base}questions/{drafted.id}/approve/")
    assert approved.status_code == 200 and approved.data["approved"] is True
    assert api.delete(f"{base}questions/{drafted.id}/").status_code == 204


def test_another_accounts_sets_runs_and_answers_are_404(admin, model):
    other = MembershipFactory(role=Membership.Role.ADMIN)
    eval_set = eval_set_create(assistant=AssistantFactory(account=other.account), name="Theirs")
    eval_questions_add(eval_set=eval_set, questions=[ParsedQuestion("Price?")], origin="typed")
    run = EvalRun.objects.create(set=eval_set)
    eval_run_execute(run_id=run.pk)
    answer = EvalAnswer.objects.get()
    api = api_for(admin)
    mine = BASE.format(account=admin.account_id)
    assert api.get(f"{mine}eval-sets/{eval_set.id}/").status_code == 404
    assert api.get(f"{mine}eval-runs/{run.id}/").status_code == 404
    assert (
        api.post(f"{mine}eval-runs/{run.id}/answers/{answer.id}/mark/", {"mark": "right"}).status_code == 404
    )
    assert api.get(f"{mine}eval-runs/{run.id}/compare/{run.id}/").status_code == 404
    theirs = BASE.format(account=other.account_id)
    assert api.get(f"{theirs}eval-runs/{run.id}/").status_code in (403, 404)
    EvalAnswer.objects.get(mark="unmarked")


def test_agents_may_not_use_it(admin):
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    assistant = AssistantFactory(account=admin.account)
    url = f"{BASE.format(account=admin.account_id)}assistants/{assistant.id}/eval-sets/"
    assert api_for(agent).get(url).status_code == 403
