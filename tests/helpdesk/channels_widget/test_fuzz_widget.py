"""Property-based fuzz of the widget's visitor API, as every other channel's webhook is fuzzed
(tests/helpdesk/webhooks/test_fuzz_channels.py): bodies start from the widget's own messages and `setUser` calls
and are mutated by tests/support/json_mutations.py.
- From an allowed page with a valid visitor token: the answer is 2xx or 4xx, never 5xx; a message answered
  201 stored exactly one incoming message; the same body again is a no-op (a retry of the page's send).
- A visitor's file form (`files/`), built from the widget's own upload and damaged (odd parts, names, types,
  bytes, a cut body): never 5xx, and a file answered 201 is stored (it was checked before anything was kept).
- From a page the inbox does not allow, or with a forged token: 401/403 and not one row added in any helpdesk or
  captain table.
Each example runs in a savepoint rolled back afterwards.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpdesk.channels.widget import identifier_hash, visitor_token
from helpdesk.models import Attachment, Message
from tests.helpdesk.channels_widget.support import SECRET, call, widget_inbox
from tests.support.fake_files import JPEG, PNG
from tests.support.json_mutations import keywords_of, mutated_bodies, to_tree
from tests.support.row_state import database_state, rolled_back

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

FUZZ = hsettings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
DOCUMENTS = [
    {"id": "m-1", "text": "Where is my parcel?"},
    {
        "identifier": "cust-42",
        "identifier_hash": identifier_hash(SECRET, "cust-42"),
        "name": "Ann",
        "email": "a@b.c",
    },
]
BODIES = mutated_bodies([to_tree(d) for d in DOCUMENTS], [k for d in DOCUMENTS for k in keywords_of(d)])
OPERATIONS = st.sampled_from(["messages", "identify"])


@pytest.fixture
def inbox():
    return widget_inbox()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path)  # the files a fuzzed form stores


@FUZZ
@given(body=BODIES, operation=OPERATIONS)
def test_a_visitors_mutated_request_is_answered_without_a_server_error(client, inbox, body, operation):
    token = visitor_token(inbox_id=inbox.pk, source_id="visitor:fuzz")
    with rolled_back():
        before = Message.objects.count()
        response = call(client, "POST", inbox, operation, token=token, body=body)
        assert response.status_code < 500, response.content
        assert response.json().get("error") or response.status_code in (200, 201)
        if operation == "messages" and response.status_code == 201:
            assert Message.objects.count() == before + 1
            again = call(client, "POST", inbox, operation, token=token, body=body)
            assert (again.status_code, again.json()["status"]) == (200, "duplicate")
            assert Message.objects.count() == before + 1


@FUZZ
@given(
    body=BODIES,
    operation=OPERATIONS,
    refusal=st.sampled_from(["origin", "token", "other-inbox"]),
)
def test_a_refused_request_changes_nothing(client, inbox, body, operation, refusal):
    token = visitor_token(
        inbox_id=inbox.pk + (1 if refusal == "other-inbox" else 0), source_id="visitor:fuzz"
    )
    if refusal == "token":
        token = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    origin = "http://evil.example" if refusal == "origin" else "http://127.0.0.1:8123"
    with rolled_back():
        before = database_state()
        response = call(client, "POST", inbox, operation, token=token, body=body, origin=origin)
        assert response.status_code == (403 if refusal == "origin" else 401)
        assert database_state() == before


def _part(name: str, filename: str | None, content_type: str, data: bytes) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    head = f"Content-Disposition: {disposition}\r\n" + (
        f"Content-Type: {content_type}\r\n" if content_type else ""
    )
    return head.encode("utf-8", "surrogatepass") + b"\r\n" + data


PARTS = st.tuples(
    st.sampled_from(["id", "text", "file", "file", "other", ""]),
    st.one_of(st.none(), st.sampled_from(["photo.png", "", "a\x00b.png", "x" * 300]), st.text(max_size=20)),
    st.one_of(
        st.sampled_from(["image/png", "application/pdf", "", "image/png; charset=x"]), st.text(max_size=30)
    ),
    st.one_of(
        st.sampled_from([b"m-1", PNG, JPEG, b"%PDF-1.7\n", b""]),
        st.builds(lambda seed, tail: seed + tail, st.sampled_from([PNG, JPEG]), st.binary(max_size=64)),
        st.binary(max_size=64),
    ),
)


@st.composite
def multipart_forms(draw) -> bytes:
    """Forms shaped like the widget's file upload, then damaged: odd parts, names and types, a cut body."""
    parts = [_part("id", None, "", b"f-1"), *(_part(*p) for p in draw(st.lists(PARTS, max_size=4)))]
    body = b"".join(b"--fuzz\r\n" + part + b"\r\n" for part in parts) + b"--fuzz--\r\n"
    cut = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=len(body))))
    return body if cut is None else body[:cut]


@FUZZ
@given(body=multipart_forms())
def test_a_visitors_damaged_file_form_is_answered_without_a_server_error(client, inbox, body):
    token = visitor_token(inbox_id=inbox.pk, source_id="visitor:fuzz")
    headers = {"Origin": "http://127.0.0.1:8123", "X-Visitor-Token": token}
    with rolled_back():
        before = Message.objects.count()
        response = client.generic(
            "POST",
            f"/widget/{inbox.webhook_token}/files/",
            data=body,
            content_type="multipart/form-data; boundary=fuzz",
            headers=headers,
        )
        assert response.status_code < 500, response.content
        assert response.json().get("error") or response.status_code in (200, 201)
        if response.status_code == 201:
            # Checked before it was stored: what is kept is a stored file, never a refused one.
            message = Message.objects.get(pk=response.json()["message_id"])
            assert Message.objects.count() == before + 1
            assert [f.status for f in message.files.all()] == [Attachment.Status.STORED]
