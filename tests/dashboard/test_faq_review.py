"""The FAQ review page (Django test client): pending drafts first with their source, approve / edit-and-approve /
reject one by one and in bulk, tabs per status, admins only, other tenants' entries out of reach."""

from __future__ import annotations

import pytest

from captain.knowledge.models import FaqEntry
from tests.captain.answering.knowledge_rows import document
from tests.factories import AssistantFactory, ConversationFactory, FaqEntryFactory

pytestmark = pytest.mark.django_db

XSS = "<script>window.__xss=1</script>"


def page(team) -> str:
    return f"/app/accounts/{team.account.pk}/faq/"


@pytest.fixture
def drafts(team):
    assistant = AssistantFactory(account=team.account, name="Helper")
    doc = document(assistant, "Shipping guide", [("Times", "Parcels take 3 days.")])
    conv = ConversationFactory(contact_inbox__inbox=team.inbox, contact_inbox__contact__account=team.account)
    from_doc = FaqEntryFactory(
        assistant=assistant,
        question="How long do parcels take?",
        answer="3 days.",
        status="pending",
        source="document",
        source_document=doc,
    )
    from_conv = FaqEntryFactory(
        assistant=assistant,
        question=f"Gift wrap? {XSS}",
        answer="Yes.",
        status="pending",
        source="conversation",
        source_conversation=conv,
    )
    approved = FaqEntryFactory(assistant=assistant, question="Opening hours?", answer="9 to 5.")
    return assistant, from_doc, from_conv, approved, conv


def post(client, team, assistant, **data):
    return client.post(page(team), {"assistant": assistant.pk, "status": "pending", **data})


def test_pending_drafts_with_their_sources_and_tabs(admin_client, team, drafts):
    assistant, *_, conv = drafts

    html = admin_client.get(page(team)).content.decode()

    assert "How long do parcels take?" in html and "Shipping guide" in html
    assert f"/app/accounts/{team.account.pk}/conversations/{conv.pk}/" in html
    assert "Opening hours?" not in html  # approved: its own tab
    assert XSS not in html and "&lt;script&gt;" in html
    assert '>Pending review <span class="count">2</span>' in html
    approved_tab = admin_client.get(
        page(team), {"assistant": assistant.pk, "status": "approved"}
    ).content.decode()
    assert "Opening hours?" in approved_tab and "How long do parcels take?" not in approved_tab


def test_approve_edit_and_reject_one_by_one(admin_client, team, drafts):
    assistant, from_doc, from_conv, approved, _ = drafts

    first = post(admin_client, team, assistant, op="approve", entry=from_doc.pk)
    post(
        admin_client,
        team,
        assistant,
        op="edit",
        entry=from_conv.pk,
        question="Do you gift wrap?",
        answer="Yes, free.",
    )
    post(admin_client, team, assistant, op="reject", entry=approved.pk)

    assert first.status_code == 302 and "status=pending" in first["Location"]
    rows = {e.pk: (e.status, e.question, e.answer) for e in FaqEntry.objects.all()}
    assert rows == {
        from_doc.pk: ("approved", "How long do parcels take?", "3 days."),
        from_conv.pk: ("approved", "Do you gift wrap?", "Yes, free."),
        approved.pk: ("rejected", "Opening hours?", "9 to 5."),
    }


def test_an_empty_edit_is_refused_with_a_message(admin_client, team, drafts):
    assistant, from_doc, *_ = drafts

    response = post(admin_client, team, assistant, op="edit", entry=from_doc.pk, question="", answer="x")

    assert "Nothing changed" in admin_client.get(response["Location"]).content.decode()
    assert FaqEntry.objects.get(pk=from_doc.pk).status == "pending"


def test_bulk_approve_and_reject(admin_client, team, drafts):
    assistant, from_doc, from_conv, approved, _ = drafts

    response = post(
        admin_client, team, assistant, op="bulk", action="reject", ids=[from_doc.pk, from_conv.pk]
    )
    none_selected = post(admin_client, team, assistant, op="bulk", action="approve")

    assert "2 entries rejected." in admin_client.get(response["Location"]).content.decode()
    assert none_selected.status_code == 302
    assert dict(FaqEntry.objects.values_list("pk", "status")) == {
        from_doc.pk: "rejected",
        from_conv.pk: "rejected",
        approved.pk: "approved",
    }


def test_another_tenants_entries_are_out_of_reach(admin_client, team, other_team, drafts):
    assistant = drafts[0]
    theirs = FaqEntryFactory(assistant=AssistantFactory(account=other_team.account), status="pending")

    assert post(admin_client, team, assistant, op="approve", entry=theirs.pk).status_code == 404
    assert post(admin_client, team, theirs.assistant, op="approve", entry=theirs.pk).status_code == 404
    post(admin_client, team, assistant, op="bulk", action="approve", ids=[theirs.pk])
    assert admin_client.get(f"/app/accounts/{other_team.account.pk}/faq/").status_code == 404
    assert FaqEntry.objects.get(pk=theirs.pk).status == "pending"


def test_agents_get_403_and_the_nav_links_admins_to_it(client, admin_client, team, drafts):
    assert f'href="{page(team)}"' in admin_client.get(page(team)).content.decode()
    client.force_login(team.agent)
    assert client.get(page(team)).status_code == 403
    assert post(client, team, drafts[0], op="approve", entry=drafts[1].pk).status_code == 403
    assert FaqEntry.objects.get(pk=drafts[1].pk).status == "pending"


def test_drafting_buttons_queue_a_ready_document_and_explain_what_cannot_be_drafted(
    admin_client, team, other_team, drafts, django_capture_on_commit_callbacks
):
    assistant, from_doc, *_, conv = drafts
    doc = from_doc.source_document

    with django_capture_on_commit_callbacks(execute=False) as queued:
        queued_doc = post(admin_client, team, assistant, op="draft_document", document=doc.pk)
    assert len(queued) == 1
    assert (
        "Drafting from &#x27;Shipping guide&#x27;"
        in admin_client.get(queued_doc["Location"]).content.decode()
    )

    with django_capture_on_commit_callbacks(execute=False) as queued:
        not_resolved = post(admin_client, team, assistant, op="draft_conversation", conversation=conv.pk)
    assert queued == []
    assert "Only resolved conversations" in admin_client.get(not_resolved["Location"]).content.decode()
    theirs = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="resolved")
    assert (
        post(admin_client, team, assistant, op="draft_conversation", conversation=theirs.pk).status_code
        == 404
    )
