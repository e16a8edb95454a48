"""The KnowledgeDocument admin: staff see only the accounts they administer, the "Re-sync" action queues the
selected documents (and explains the ones it cannot), delete takes the passages with it."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.knowledge import document_create_upload, document_process
from helpdesk.models import Membership
from tests.factories import AccountFactory, AssistantFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

Status = KnowledgeDocument.Status
LIST_URL = "/admin/captain/knowledgedocument/"


@pytest.fixture
def staff_client():
    account = AccountFactory(name="Alpha Co")
    user = UserFactory(is_staff=True)
    user.save()
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client, account


def ready(assistant, text: bytes = b"# Hours\n\nOpen from 9 to 17.\n") -> KnowledgeDocument:
    document = document_create_upload(assistant=assistant, file_name="hours.md", content_type="", data=text)
    document_process(document_id=document.pk)
    document.refresh_from_db()
    return document


def test_staff_see_only_their_accounts_documents(staff_client):
    client, account = staff_client
    mine = ready(AssistantFactory(account=account))
    theirs = ready(AssistantFactory(), b"# Secret\n\nThe other tenant's price list.\n")

    page = client.get(LIST_URL)

    assert page.status_code == 200
    html = page.content.decode()
    assert str(mine) in html and "Secret" not in html
    assert client.get(f"{LIST_URL}{theirs.pk}/change/").status_code in (302, 403, 404)


def test_resync_action_queues_and_explains_refused_ones(staff_client, settings):
    client, account = staff_client
    assistant = AssistantFactory(account=account)
    document = ready(assistant)
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_MAX_UPLOAD_BYTES": 4}
    refused = document_create_upload(
        assistant=assistant, file_name="big.md", content_type="", data=b"too large"
    )

    response = client.post(
        LIST_URL, {"action": "resync_selected", "_selected_action": [document.pk, refused.pk]}, follow=True
    )

    html = response.content.decode()
    assert "1 document(s) queued for a re-sync." in html
    assert "upload the file again" in html
    document.refresh_from_db()
    assert document.status == Status.QUEUED


def test_delete_removes_the_passages(staff_client):
    client, account = staff_client
    document = ready(AssistantFactory(account=account))
    assert KnowledgeChunk.objects.filter(document=document).exists()

    response = client.post(f"{LIST_URL}{document.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not KnowledgeDocument.objects.exists() and not KnowledgeChunk.objects.exists()
