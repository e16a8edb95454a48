"""An admin of account A reaches nothing of account B on any captain route: 404 (never 403), nothing changed.

Each route is tried two ways: with B's account id in the URL (A's admin is not a member) and with A's account
id but B's object ids (the objects are not in A's querysets).
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.assistants.models import Assistant, AssistantInbox, Scenario
from captain.knowledge.models import FaqEntry
from helpdesk.models import Membership
from tests.factories import (
    AssistantFactory,
    ConversationFactory,
    FaqEntryFactory,
    InboxFactory,
    MembershipFactory,
    RunFactory,
    ScenarioFactory,
)

pytestmark = pytest.mark.django_db

SCENARIO_BODY = {"title": "Leak", "description": "d", "instruction": "i"}
FAQ_BODY = {"question": "q", "answer": "a"}

# (method, path under accounts/<account>/, body); {a} {s} {f} {c} are B's assistant, scenario, FAQ entry and
# conversation ids.
ROUTES = [
    ("get", "assistants/{a}/", None),
    ("put", "assistants/{a}/", {"name": "Leak"}),
    ("patch", "assistants/{a}/", {"name": "Leak"}),
    ("delete", "assistants/{a}/", None),
    ("get", "assistants/{a}/scenarios/", None),
    ("post", "assistants/{a}/scenarios/", SCENARIO_BODY),
    ("get", "assistants/{a}/scenarios/{s}/", None),
    ("put", "assistants/{a}/scenarios/{s}/", SCENARIO_BODY),
    ("patch", "assistants/{a}/scenarios/{s}/", {"title": "Leak"}),
    ("delete", "assistants/{a}/scenarios/{s}/", None),
    ("get", "assistants/{a}/faq/", None),
    ("post", "assistants/{a}/faq/", FAQ_BODY),
    ("get", "assistants/{a}/faq/{f}/", None),
    ("put", "assistants/{a}/faq/{f}/", FAQ_BODY),
    ("patch", "assistants/{a}/faq/{f}/", {"answer": "Leak"}),
    ("delete", "assistants/{a}/faq/{f}/", None),
    ("get", "conversations/{c}/runs/", None),
]
ACCOUNT_ROUTES = [
    ("get", "assistants/", None),
    ("post", "assistants/", {"name": "Leak"}),
    ("get", "credits/", None),
]


@pytest.fixture
def a_admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def b():
    assistant = AssistantFactory(name="B assistant")
    MembershipFactory(account=assistant.account, role=Membership.Role.ADMIN)
    conversation = ConversationFactory(contact_inbox__inbox__account=assistant.account)
    RunFactory(conversation=conversation)
    return {
        "account": assistant.account,
        "a": assistant.id,
        "s": ScenarioFactory(assistant=assistant, title="B scenario").id,
        "f": FaqEntryFactory(assistant=assistant, answer="B answer").id,
        "c": conversation.id,
    }


def _call(user, method, path, body):
    api = APIClient()
    api.force_authenticate(user)
    return getattr(api, method)(f"/api/v1/captain/accounts/{path}", body, format="json")


def _assert_b_untouched(b):
    assert Assistant.objects.get(pk=b["a"]).name == "B assistant"
    assert list(Scenario.objects.values_list("title", flat=True)) == ["B scenario"]
    assert list(FaqEntry.objects.values_list("answer", flat=True)) == ["B answer"]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES + ACCOUNT_ROUTES)
def test_other_accounts_url_answers_404(a_admin, b, method, path, body):
    response = _call(a_admin.user, method, f"{b['account'].id}/" + path.format(**b), body)

    assert response.status_code == 404
    _assert_b_untouched(b)
    assert Assistant.objects.count() == 1


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_other_accounts_objects_under_own_account_answer_404(a_admin, b, method, path, body):
    response = _call(a_admin.user, method, f"{a_admin.account_id}/" + path.format(**b), body)

    assert response.status_code == 404
    _assert_b_untouched(b)


def test_scenario_of_other_account_under_own_assistant_answers_404(a_admin, b):
    own = AssistantFactory(account=a_admin.account)

    response = _call(
        a_admin.user, "get", f"{a_admin.account_id}/assistants/{own.id}/scenarios/{b['s']}/", None
    )

    assert response.status_code == 404


def test_other_accounts_inbox_is_not_linkable_on_update(a_admin, b):
    own = AssistantFactory(account=a_admin.account)
    foreign_inbox = InboxFactory(account=b["account"])

    response = _call(
        a_admin.user, "patch", f"{a_admin.account_id}/assistants/{own.id}/", {"inbox_ids": [foreign_inbox.id]}
    )

    assert response.status_code == 400
    assert not AssistantInbox.objects.exists()
