"""FAQ review over the REST API: status filter, approve (with edits), reject, bulk, drafting requests, tenancy."""

from __future__ import annotations

import pytest
from django.core.cache import cache as django_cache
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from captain.knowledge.models import FaqEntry
from helpdesk.models import Conversation, Membership, Message
from tests.captain.answering.knowledge_rows import document
from tests.factories import (
    AssistantFactory,
    AssistantInboxFactory,
    ConversationFactory,
    FaqEntryFactory,
    MembershipFactory,
    MessageFactory,
)
from tests.support.json_mutations import keywords_of, mutated_bodies, to_tree
from tests.support.row_state import database_state, rolled_back

pytestmark = pytest.mark.django_db


def api_for(membership):
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def url(assistant, suffix=""):
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/{suffix}"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def assistant(admin):
    return AssistantFactory(account=admin.account)


def draft(assistant, question="How long is shipping?", **kw):
    return FaqEntryFactory(assistant=assistant, question=question, status="pending", **kw)


def test_created_through_the_api_is_approved_and_listed_with_its_review_fields(admin, assistant):
    created = api_for(admin).post(url(assistant, "faq/"), {"question": "Q?", "answer": "A."}, format="json")

    assert created.status_code == 201
    assert (created.data["status"], created.data["source"]) == ("approved", "manual")
    assert created.data["source_document"] is None and created.data["source_conversation"] is None
    assert created.data["reviewed_at"]


def test_list_filters_by_status_and_shows_the_source(admin, assistant):
    doc = document(assistant, "Help centre", [("Shipping", "3 days.")])
    pending = draft(assistant, source="document", source_document=doc)
    FaqEntryFactory(assistant=assistant)  # approved

    response = api_for(admin).get(url(assistant, "faq/?status=pending"))

    assert response.status_code == 200
    assert [(r["id"], r["status"], r["source"], r["source_document"]) for r in response.data["results"]] == [
        (pending.pk, "pending", "document", doc.pk)
    ]
    bad = api_for(admin).get(url(assistant, "faq/?status=maybe"))
    assert bad.status_code == 400
    assert "Unknown status 'maybe'" in str(bad.data["status"])


def test_approve_as_written_with_edits_and_reject(admin, assistant):
    first, second, third = draft(assistant), draft(assistant, "Refund?"), draft(assistant, "Exchange?")
    api = api_for(admin)

    assert (
        api.post(url(assistant, f"faq/{first.pk}/approve/"), {}, format="json").data["status"] == "approved"
    )
    edited = api.post(
        url(assistant, f"faq/{second.pk}/approve/"),
        {"question": "How long do refunds take?", "answer": "5 days."},
        format="json",
    )
    rejected = api.post(url(assistant, f"faq/{third.pk}/reject/"))

    assert (edited.status_code, edited.data["question"], edited.data["status"]) == (
        200,
        "How long do refunds take?",
        "approved",
    )
    assert (rejected.status_code, rejected.data["status"]) == (200, "rejected")
    blank = api.post(url(assistant, f"faq/{third.pk}/approve/"), {"answer": ""}, format="json")
    assert blank.status_code == 400 and "answer" in blank.data
    assert FaqEntry.objects.get(pk=third.pk).status == "rejected"


def test_bulk_review_and_a_bad_action(admin, assistant):
    entries = [draft(assistant, f"Question {i}?") for i in range(3)]
    api = api_for(admin)

    done = api.post(
        url(assistant, "faq/review/"),
        {"ids": [e.pk for e in entries[:2]], "action": "approve"},
        format="json",
    )
    bad = api.post(url(assistant, "faq/review/"), {"ids": [entries[2].pk], "action": "delete"}, format="json")
    no_ids = api.post(url(assistant, "faq/review/"), {"ids": [], "action": "reject"}, format="json")
    junk = api.post(url(assistant, "faq/review/"), {"ids": ["x"], "action": "reject"}, format="json")

    assert (done.status_code, done.data) == (200, {"changed": 2})
    assert bad.status_code == 400 and "Unknown action 'delete'" in str(bad.data["action"])
    assert no_ids.status_code == 400 and junk.status_code == 400
    assert list(FaqEntry.objects.order_by("id").values_list("status", flat=True)) == [
        "approved",
        "approved",
        "pending",
    ]


@pytest.mark.parametrize("big", [2**63, 2**64])
def test_a_bulk_review_with_an_id_beyond_64_bits_is_a_400_and_changes_nothing(admin, assistant, big):
    entry = draft(assistant)

    response = api_for(admin).post(
        url(assistant, "faq/review/"), {"ids": [entry.pk, big], "action": "reject"}, format="json"
    )

    assert response.status_code == 400, response.content[:300]
    assert list(response.json()) == ["ids"]
    assert FaqEntry.objects.get(pk=entry.pk).status == "pending"


def test_another_accounts_entries_are_404_and_untouched_by_bulk(admin, assistant):
    foreign = draft(AssistantFactory())
    sibling_draft = draft(AssistantFactory(account=admin.account))
    api = api_for(admin)

    assert api.post(url(assistant, f"faq/{foreign.pk}/approve/")).status_code == 404
    assert api.post(url(assistant, f"faq/{sibling_draft.pk}/reject/")).status_code == 404
    assert api.post(url(foreign.assistant, f"faq/{foreign.pk}/approve/")).status_code == 404
    bulk = api.post(
        url(assistant, "faq/review/"),
        {"ids": [foreign.pk, sibling_draft.pk], "action": "approve"},
        format="json",
    )
    assert bulk.data == {"changed": 0}
    assert set(FaqEntry.objects.values_list("status", flat=True)) == {"pending"}


def test_agents_cannot_review(admin, assistant):
    entry = draft(assistant)
    agent = api_for(MembershipFactory(account=admin.account, role=Membership.Role.AGENT))

    assert agent.post(url(assistant, f"faq/{entry.pk}/approve/")).status_code == 403
    assert (
        agent.post(
            url(assistant, "faq/review/"), {"ids": [entry.pk], "action": "approve"}, format="json"
        ).status_code
        == 403
    )
    assert FaqEntry.objects.get().status == "pending"


def test_drafting_requests_for_a_document_and_a_conversation(
    admin, assistant, django_capture_on_commit_callbacks
):
    doc = document(assistant, "Help centre", [("Shipping", "3 days.")])
    link = AssistantInboxFactory(assistant=assistant)
    conv = ConversationFactory(
        contact_inbox__inbox=link.inbox,
        contact_inbox__contact__account=admin.account,
        status=Conversation.Status.RESOLVED,
    )
    MessageFactory(conversation=conv, content="How long is shipping?")
    api = api_for(admin)

    not_answered = api.post(
        f"/api/v1/captain/accounts/{admin.account_id}/conversations/{conv.pk}/faq-drafts/"
    )
    MessageFactory(
        conversation=conv,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        content="3 days.",
    )
    with django_capture_on_commit_callbacks(execute=False) as queued:
        by_doc = api.post(url(assistant, f"documents/{doc.pk}/faq-drafts/"))
        by_conv = api.post(f"/api/v1/captain/accounts/{admin.account_id}/conversations/{conv.pk}/faq-drafts/")

    assert (by_doc.status_code, by_conv.status_code) == (202, 202)
    assert len(queued) == 2
    assert not_answered.status_code == 400 and "No person answered" in str(not_answered.data)
    doc.status = "processing"
    doc.save()
    assert api.post(url(assistant, f"documents/{doc.pk}/faq-drafts/")).status_code == 400
    other = document(AssistantFactory(), "Theirs", [("A", "b")])
    assert api.post(url(assistant, f"documents/{other.pk}/faq-drafts/")).status_code == 404
    foreign_conv = ConversationFactory(status=Conversation.Status.RESOLVED)
    assert (
        api.post(
            f"/api/v1/captain/accounts/{admin.account_id}/conversations/{foreign_conv.pk}/faq-drafts/"
        ).status_code
        == 404
    )


# ---- fuzz: the review endpoints' bodies (tests/helpdesk/api/test_fuzz_rest.py's method) --------------------


REVIEW_BODIES = {
    "approve": lambda entry: [{}, {"question": "How long is shipping?", "answer": "3 days."}],
    "review": lambda entry: [
        {"ids": [entry], "action": "approve"},
        {"ids": [entry, 999], "action": "reject"},
    ],
}


@pytest.mark.parametrize("name", list(REVIEW_BODIES))
@hsettings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_mutated_review_bodies_never_answer_5xx(admin, assistant, name, data):
    entry = FaqEntry.objects.filter(assistant=assistant).first() or draft(assistant)
    documents = REVIEW_BODIES[name](entry.pk)
    body = data.draw(
        mutated_bodies([to_tree(d) for d in documents], [k for d in documents for k in keywords_of(d)]),
        label="body",
    )
    path = url(assistant, f"faq/{entry.pk}/approve/" if name == "approve" else "faq/review/")
    django_cache.clear()  # the per-user throttle is not what is tested
    with rolled_back():
        before = database_state()

        response = api_for(admin).generic("POST", path, body, content_type="application/json")

        assert response.status_code in (200, 400), response.content[:300]
        if response.status_code == 400:
            assert response.json()
            assert database_state() == before
