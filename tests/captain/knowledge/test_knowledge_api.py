"""Knowledge documents over the REST API: upload and URL import, list, detail, chunks, re-sync, delete; bad input
is a 400 or a failed document with its reason, never a 500; another account's documents answer 404."""

from __future__ import annotations

import ipaddress

import pytest
from django.core.cache import cache as django_cache
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.knowledge import document_process
from helpdesk.models import Membership
from helpdesk.outbound import HostNotResolved, policy
from tests.factories import AssistantFactory, MembershipFactory
from tests.support.json_mutations import keywords_of, mutated_bodies, to_tree
from tests.support.row_state import rolled_back

pytestmark = pytest.mark.django_db

Status = KnowledgeDocument.Status
MARKDOWN = b"# Opening hours\n\nThe shop is open from 9 to 18, Monday to Saturday.\n"


def api_for(membership) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def url(assistant, suffix: str = "") -> str:
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/documents/{suffix}"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def assistant(admin):
    return AssistantFactory(account=admin.account)


def post_file(api: APIClient, assistant, data: bytes, name: str = "hours.md"):
    return api.post(
        url(assistant), {"file": SimpleUploadedFile(name, data, "text/markdown")}, format="multipart"
    )


def test_upload_list_detail_chunks_resync_delete(admin, assistant):
    api = api_for(admin)

    created = post_file(api, assistant, MARKDOWN)
    assert created.status_code == 201, created.data
    assert (created.data["status"], created.data["kind"], created.data["size_bytes"]) == (
        "queued",
        "upload",
        len(MARKDOWN),
    )
    document_id = created.data["id"]
    assert document_process(document_id=document_id) == "ready"

    listed = api.get(url(assistant))
    assert listed.status_code == 200
    [row] = listed.data["results"]
    assert (row["id"], row["status"], row["progress"], row["status_reason"]) == (
        document_id,
        "ready",
        100,
        "",
    )
    assert row["chunk_count"] >= 1 and "upload" not in row

    detail = api.get(url(assistant, f"{document_id}/"))
    assert detail.status_code == 200 and detail.data["title"]

    chunks = api.get(url(assistant, f"{document_id}/chunks/"))
    assert chunks.status_code == 200
    assert chunks.data["count"] == row["chunk_count"]
    assert set(chunks.data["results"][0]) == {"ordinal", "heading", "text", "url"}
    assert "9 to 18" in chunks.data["results"][0]["text"]

    resynced = api.post(url(assistant, f"{document_id}/resync/"))
    assert resynced.status_code == 202 and resynced.data["status"] == "queued"

    assert api.delete(url(assistant, f"{document_id}/")).status_code == 204
    assert not KnowledgeDocument.objects.exists() and not KnowledgeChunk.objects.exists()


def test_url_import_is_queued_with_bounded_limits(admin, assistant):
    response = api_for(admin).post(
        url(assistant),
        {"kind": "crawl", "url": "http://127.0.0.1:9/help/", "max_pages": 20, "max_depth": 1},
        format="json",
    )

    assert response.status_code == 201, response.data
    assert (response.data["kind"], response.data["max_pages"], response.data["max_depth"]) == ("crawl", 20, 1)
    assert response.data["status"] == "queued"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "url", "url": "http://10.0.0.1/"}, "url"),
        ({"kind": "url", "url": "http://169.254.169.254/latest/"}, "url"),
        ({"kind": "url", "url": "javascript:alert(1)"}, "url"),
        ({"kind": "crawl", "url": "http://127.0.0.1:9/", "max_pages": 10**6}, "max_pages"),
        ({"kind": "crawl", "url": "http://127.0.0.1:9/", "max_depth": 99}, "max_depth"),
        ('{"kind": "crawl", "url": "http://127.0.0.1:9/", "max_pages": 1e999}', None),
        ('{"kind": "url", "url": "http://127.0.0.1:9/\\ud800"}', None),
        ({"kind": "ftp", "url": "http://127.0.0.1:9/"}, "kind"),
        ({"url": "http://127.0.0.1:9/"}, "kind"),
        ({}, "kind"),
    ],
)
def test_bad_url_imports_are_400_and_store_nothing(admin, assistant, body, field):
    api = api_for(admin)
    if isinstance(body, str):  # raw JSON the test client would not write: overflow, a lone surrogate
        response = api.post(url(assistant), body, content_type="application/json")
    else:
        response = api.post(url(assistant), body, format="json")

    assert response.status_code == 400, response.data
    if field:
        assert field in response.data
    assert not KnowledgeDocument.objects.exists()


def test_an_empty_upload_is_a_failed_document_with_its_reason(admin, assistant):
    response = post_file(api_for(admin), assistant, b"", "empty.txt")

    assert response.status_code == 201
    assert (response.data["status"], response.data["status_reason"]) == (
        "failed",
        "The file is empty (0 bytes).",
    )


def test_an_oversized_upload_is_counted_not_kept(admin, assistant, settings):
    """Through the real multipart parser and the capped upload handler: the document says how large the file
    was and stores none of it."""
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_MAX_UPLOAD_BYTES": 64 * 1024}
    big = b"a line of text\n" * 300_000  # 4.3 MiB

    response = post_file(api_for(admin), assistant, big, "big.txt")

    assert response.status_code == 201
    assert response.data["status"] == "failed"
    assert "4.3 MiB" in response.data["status_reason"]
    document = KnowledgeDocument.objects.get()
    assert document.upload is None and document.size_bytes == len(big)


def test_agents_read_but_do_not_write(assistant):
    agent = MembershipFactory(account=assistant.account, role=Membership.Role.AGENT)
    api = api_for(agent)

    assert api.get(url(assistant)).status_code == 200
    assert post_file(api, assistant, MARKDOWN).status_code == 403
    assert not KnowledgeDocument.objects.exists()


def test_another_accounts_documents_are_404(admin, assistant):
    mine = api_for(admin)
    created = post_file(mine, assistant, MARKDOWN).data
    intruder = MembershipFactory(role=Membership.Role.ADMIN)
    theirs = AssistantFactory(account=intruder.account)
    api = api_for(intruder)

    # Through the victim's URL (not a member: 404) and through the intruder's own assistant (not its document).
    for base in (url(assistant), url(theirs)):
        assert api.get(f"{base}{created['id']}/").status_code == 404
        assert api.get(f"{base}{created['id']}/chunks/").status_code == 404
        assert api.post(f"{base}{created['id']}/resync/").status_code == 404
        assert api.delete(f"{base}{created['id']}/").status_code == 404
    assert api.get(url(theirs)).data["results"] == []
    assert KnowledgeDocument.objects.filter(pk=created["id"], status=Status.QUEUED).exists()


# ---- fuzz: mutated JSON bodies for the URL import, as tests/helpdesk/api/test_fuzz_rest.py does for the others ----

IMPORT_DOCUMENTS = [
    {
        "kind": "crawl",
        "url": "http://127.0.0.1:9/help/",
        "max_pages": 5,
        "max_depth": 1,
        "sync_interval_hours": 24,
    },
    {"kind": "sitemap", "url": "http://127.0.0.1:9/sitemap.xml"},
]
IMPORT_BODIES = mutated_bodies(
    [to_tree(d) for d in IMPORT_DOCUMENTS], [k for d in IMPORT_DOCUMENTS for k in keywords_of(d)]
)


def _loopback_only(host: str, port: int):
    """No DNS server runs in the tests: 127.0.0.1 is itself, every other name does not resolve."""
    if host in ("127.0.0.1", "localhost"):
        return [ipaddress.ip_address("127.0.0.1")]
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        raise HostNotResolved("the host name does not resolve") from None


@hsettings(
    max_examples=60,
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
def test_mutated_import_bodies_never_answer_5xx(admin, assistant, monkeypatch, data):
    monkeypatch.setattr(policy, "resolve_host", _loopback_only)
    body = data.draw(IMPORT_BODIES, label="body")
    django_cache.clear()  # the per-user throttle is not what is tested
    with rolled_back():
        response = api_for(admin).generic("POST", url(assistant), body, content_type="application/json")

        event(str(response.status_code))
        assert response.status_code in (201, 400), response.content[:300]
        if response.status_code == 400:
            assert response.json()  # says what is wrong
            assert not KnowledgeDocument.objects.exists()
