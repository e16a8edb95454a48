"""The FAQ entry admin: filters by status and source, approve/reject actions through the review service, scoped
to the accounts the staff user administers; entries added there are approved."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.knowledge.models import FaqEntry
from helpdesk.models import Membership
from tests.factories import AssistantFactory, FaqEntryFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

LIST_URL = "/admin/captain/faqentry/"


@pytest.fixture
def staff():
    user = UserFactory(is_staff=True)
    user.save()
    membership = MembershipFactory(user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client, membership.account


def test_actions_approve_and_reject_only_entries_of_the_staffs_accounts(staff):
    client, account = staff
    mine = [FaqEntryFactory(assistant=AssistantFactory(account=account), status="pending") for _ in range(2)]
    theirs = FaqEntryFactory(status="pending")

    response = client.post(
        LIST_URL, {"action": "approve_selected", "_selected_action": [mine[0].pk, theirs.pk]}, follow=True
    )
    client.post(LIST_URL, {"action": "reject_selected", "_selected_action": [mine[1].pk]})

    assert "1 FAQ entries approved." in response.content.decode()
    assert dict(FaqEntry.objects.values_list("pk", "status")) == {
        mine[0].pk: "approved",
        mine[1].pk: "rejected",
        theirs.pk: "pending",
    }
    assert FaqEntry.objects.get(pk=mine[0].pk).reviewed_at is not None


def test_list_filters_by_status_and_source(staff):
    client, account = staff
    assistant = AssistantFactory(account=account)
    FaqEntryFactory(assistant=assistant, question="Drafted one?", status="pending", source="document")
    FaqEntryFactory(assistant=assistant, question="Typed one?")

    pending = client.get(LIST_URL, {"status__exact": "pending"}).content.decode()
    manual = client.get(LIST_URL, {"source__exact": "manual"}).content.decode()

    assert "Drafted one?" in pending and "Typed one?" not in pending
    assert "Typed one?" in manual and "Drafted one?" not in manual


def test_an_entry_added_in_the_admin_is_approved_and_its_status_is_read_only(staff):
    client, account = staff
    assistant = AssistantFactory(account=account)

    client.post(
        "/admin/captain/faqentry/add/",
        {"assistant": assistant.pk, "question": "Q?", "answer": "A.", "enabled": "on", "status": "rejected"},
    )

    entry = FaqEntry.objects.get()
    assert (entry.status, entry.source) == ("approved", "manual")
    page = client.get(f"/admin/captain/faqentry/{entry.pk}/change/").content.decode()
    assert 'name="status"' not in page
