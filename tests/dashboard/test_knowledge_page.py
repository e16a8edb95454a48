"""The knowledge page (Django test client): list, upload, import, re-sync, delete with confirmation, passages,
self-refresh while processing, flash messages for bad input, admins only, other tenants 404."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.knowledge import document_create_upload, document_process
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db

Status = KnowledgeDocument.Status
MARKDOWN = b"# Warranty\n\nEvery bike has a two-year warranty on the frame.\n"


def page_url(account_id: int) -> str:
    return f"/app/accounts/{account_id}/knowledge/"


@pytest.fixture
def assistant(team):
    return AssistantFactory(account=team.account, name="Shop assistant")


def ready_document(assistant, data: bytes = MARKDOWN, name: str = "warranty.md") -> KnowledgeDocument:
    document = document_create_upload(
        assistant=assistant, file_name=name, content_type="text/markdown", data=data
    )
    document_process(document_id=document.pk)
    document.refresh_from_db()
    return document


def test_the_page_lists_documents_with_status_and_is_linked_in_the_nav(admin_client, team, assistant):
    document = ready_document(assistant)
    KnowledgeDocument.objects.create(
        account=team.account,
        assistant=assistant,
        kind="url",
        source_url="https://example.com/",
        status=Status.FAILED,
        status_reason="The page answered 500.",
    )

    page = admin_client.get(page_url(team.account.id))

    assert page.status_code == 200
    html = page.content.decode()
    assert f'href="{page_url(team.account.id)}"' in html  # the nav link
    assert "Shop assistant" in html and str(document) in html
    assert 'data-status="ready"' in html and "The page answered 500." in html
    assert 'http-equiv="refresh"' not in html  # nothing in progress: no reload


def test_upload_through_the_form_queues_and_the_page_refreshes_until_ready(admin_client, team, assistant):
    response = admin_client.post(
        page_url(team.account.id),
        {"assistant": assistant.id, "action": "upload", "file": SimpleUploadedFile("warranty.md", MARKDOWN)},
    )

    assert response.status_code == 302
    document = KnowledgeDocument.objects.get()
    assert (document.status, document.file_name, bytes(document.upload)) == (
        Status.QUEUED,
        "warranty.md",
        MARKDOWN,
    )
    waiting = admin_client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in waiting and "is uploaded and queued" in waiting

    document_process(document_id=document.pk)
    ready = admin_client.get(response["Location"]).content.decode()
    assert 'data-status="ready"' in ready and 'http-equiv="refresh"' not in ready


def test_import_queues_a_url_and_a_refused_url_is_explained(admin_client, team, assistant):
    url = page_url(team.account.id)
    ok = admin_client.post(
        url,
        {
            "assistant": assistant.id,
            "action": "import",
            "kind": "sitemap",
            "url": "http://127.0.0.1:9/sitemap.xml",
            "max_pages": "10",
        },
    )
    refused = admin_client.post(
        url,
        {"assistant": assistant.id, "action": "import", "kind": "url", "url": "http://10.1.2.3/"},
        follow=True,
    )
    too_many = admin_client.post(
        url,
        {
            "assistant": assistant.id,
            "action": "import",
            "kind": "crawl",
            "url": "http://127.0.0.1:9/",
            "max_pages": "99999",
        },
        follow=True,
    )

    assert ok.status_code == 302
    document = KnowledgeDocument.objects.get()
    assert (document.kind, document.max_pages, document.status) == ("sitemap", 10, Status.QUEUED)
    assert "refused by the outbound policy" in refused.content.decode()
    assert "max pages: Must be between 1 and" in too_many.content.decode()
    assert KnowledgeDocument.objects.count() == 1


def test_passages_are_shown(admin_client, team, assistant):
    document = ready_document(assistant)

    html = admin_client.get(f"{page_url(team.account.id)}?assistant={assistant.id}&document={document.id}")

    assert "two-year warranty" in html.content.decode()


def test_delete_asks_for_confirmation_then_removes_the_chunks(admin_client, team, assistant):
    document = ready_document(assistant)
    url = page_url(team.account.id)

    confirm = admin_client.get(
        f"{url}?assistant={assistant.id}&confirm_delete={document.id}"
    ).content.decode()
    assert 'id="confirm-delete"' in confirm and 'value="delete"' in confirm
    assert KnowledgeDocument.objects.filter(pk=document.pk).exists()  # asking deletes nothing

    done = admin_client.post(url, {"assistant": assistant.id, "action": "delete", "document": document.id})
    assert done.status_code == 302
    assert not KnowledgeDocument.objects.exists() and not KnowledgeChunk.objects.exists()


def test_resync_queues_the_document(admin_client, team, assistant):
    document = ready_document(assistant)

    admin_client.post(
        page_url(team.account.id), {"assistant": assistant.id, "action": "resync", "document": document.id}
    )

    document.refresh_from_db()
    assert document.status == Status.QUEUED


def test_posts_need_the_csrf_token(client, team, assistant):
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(team.admin)

    response = csrf_client.post(
        page_url(team.account.id),
        {"assistant": assistant.id, "action": "upload", "file": SimpleUploadedFile("a.md", MARKDOWN)},
    )

    assert response.status_code == 403
    assert not KnowledgeDocument.objects.exists()


def test_agents_get_403(agent_client, team, assistant):
    assert agent_client.get(page_url(team.account.id)).status_code == 403


def test_another_accounts_documents_are_404(client, team, other_team, assistant):
    document = ready_document(assistant)
    client.force_login(other_team.admin)
    theirs = AssistantFactory(account=other_team.account)
    own_url = page_url(other_team.account.id)

    assert client.get(page_url(team.account.id)).status_code == 404
    assert client.get(f"{own_url}?assistant={assistant.id}").status_code == 404
    assert client.get(f"{own_url}?assistant={theirs.id}&document={document.id}").status_code == 404
    assert client.get(f"{own_url}?assistant={theirs.id}&confirm_delete={document.id}").status_code == 404
    for action in ("delete", "resync"):
        response = client.post(own_url, {"assistant": theirs.id, "action": action, "document": document.id})
        assert response.status_code == 404
    assert KnowledgeDocument.objects.filter(pk=document.pk, status=Status.READY).exists()


def test_an_oversized_upload_is_explained_and_not_stored(admin_client, team, assistant, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_MAX_UPLOAD_BYTES": 1024}

    response = admin_client.post(
        page_url(team.account.id),
        {"assistant": assistant.id, "action": "upload", "file": SimpleUploadedFile("big.md", b"x" * 5000)},
        follow=True,
    )

    html = response.content.decode()
    assert "was not accepted: The file is 5000 bytes; files of at most 1024 bytes are accepted." in html
    document = KnowledgeDocument.objects.get()
    assert (document.status, document.upload, document.size_bytes) == (Status.FAILED, None, 5000)
