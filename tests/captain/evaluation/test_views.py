"""The dashboard pages: admins only, another account's sets and runs are 404, uploads say which line is bad,
marks work as plain form posts."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun
from captain.evaluation.services.imports import ParsedQuestion
from captain.evaluation.services.runs import eval_run_execute
from captain.evaluation.services.sets import eval_questions_add, eval_set_create
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client):
    membership = MembershipFactory(role=Membership.Role.ADMIN)
    client.force_login(membership.user)
    return membership


def page(account_id: int, suffix: str = "") -> str:
    return f"/app/accounts/{account_id}/evaluation/{suffix}"


def a_run(account, model_needed=True):
    eval_set = eval_set_create(assistant=AssistantFactory(account=account), name="Launch")
    eval_questions_add(
        eval_set=eval_set, questions=[ParsedQuestion("Where can I rent a bike?")], origin="typed"
    )
    run = EvalRun.objects.create(set=eval_set)
    eval_run_execute(run_id=run.pk)
    return eval_set, run


def test_the_pages_render_and_a_mark_is_a_form_post(client, admin, model):
    eval_set, run = a_run(admin.account)
    assert "Launch" in client.get(page(admin.account_id)).content.decode()
    assert (
        "Where can I rent a bike?"
        in client.get(page(admin.account_id, f"sets/{eval_set.id}/")).content.decode()
    )
    answer = EvalAnswer.objects.get()
    body = client.get(page(admin.account_id, f"runs/{run.id}/")).content.decode()
    assert 'data-verdict="verified"' in body
    response = client.post(page(admin.account_id, f"runs/{run.id}/"), {"answer": answer.id, "mark": "right"})
    assert response.status_code == 302
    answer.refresh_from_db()
    assert (answer.mark, answer.marked_by_id) == ("right", admin.user_id)
    compared = client.get(page(admin.account_id, f"compare/?left={run.id}&right={run.id}"))
    assert compared.status_code == 200 and "0 of 1 question changed" in compared.content.decode()


def test_a_bad_upload_names_the_line_and_saves_nothing(client, admin):
    eval_set = eval_set_create(assistant=AssistantFactory(account=admin.account), name="Launch")
    upload = SimpleUploadedFile("set.jsonl", b'{"question": "ok"}\n{"question": ""}\n')
    response = client.post(
        page(admin.account_id, f"sets/{eval_set.id}/"), {"action": "upload", "file": upload}, follow=True
    )
    assert "Line 2: the question is empty." in response.content.decode()
    assert not EvalQuestion.objects.exists()


def test_typed_questions_and_a_run_start(client, admin, django_capture_on_commit_callbacks):
    eval_set = eval_set_create(assistant=AssistantFactory(account=admin.account), name="Launch")
    url = page(admin.account_id, f"sets/{eval_set.id}/")
    client.post(url, {"action": "type", "text": "One?\nTwo?"})
    assert list(EvalQuestion.objects.values_list("question", flat=True)) == ["One?", "Two?"]
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(url, {"action": "run", "label": "first"})
    run = EvalRun.objects.get()
    assert (
        response.url.endswith(f"/evaluation/runs/{run.id}/") and run.label == "first" and len(callbacks) == 1
    )


def test_another_accounts_set_and_run_are_404(client, admin, model):
    other = MembershipFactory(role=Membership.Role.ADMIN).account
    eval_set, run = a_run(other)
    mine = admin.account_id
    assert client.get(page(mine, f"sets/{eval_set.id}/")).status_code == 404
    assert client.get(page(mine, f"runs/{run.id}/")).status_code == 404
    answer = EvalAnswer.objects.get()
    assert (
        client.post(page(mine, f"runs/{run.id}/"), {"answer": answer.id, "mark": "wrong"}).status_code == 404
    )
    assert client.get(page(mine, f"compare/?left={run.id}&right={run.id}")).status_code == 404
    assert EvalAnswer.objects.get().mark == "unmarked"


def test_agents_may_not_open_it(client):
    agent = MembershipFactory(role=Membership.Role.AGENT)
    client.force_login(agent.user)
    assert client.get(page(agent.account_id)).status_code == 403


def test_drafted_questions_are_approved_or_deleted_on_the_page(client, admin):
    eval_set = eval_set_create(assistant=AssistantFactory(account=admin.account), name="Launch")
    keep, drop = eval_questions_add(
        eval_set=eval_set,
        questions=[ParsedQuestion("Keep me?"), ParsedQuestion("Drop me?")],
        origin="drafted",
        approved=False,
    )
    url = page(admin.account_id, f"sets/{eval_set.id}/")
    assert "awaiting approval" in client.get(url).content.decode()
    client.post(url, {"action": "approve", "question": keep.id})
    client.post(url, {"action": "delete", "question": drop.id})
    assert list(EvalQuestion.objects.values_list("question", "approved")) == [("Keep me?", True)]
