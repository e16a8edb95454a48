"""Property-based fuzz of the e-mail inbound webhook, as every other channel's is fuzzed
(tests/helpdesk/webhooks/test_fuzz_channels.py): the raw mails of tests/fixtures/email/ are damaged at the byte
level (cut, spliced, 8-bit junk in headers, broken boundaries, nested parts) and sent correctly signed: the answer
is 200 or 400, never 5xx, and a 200 stored exactly one message with its conversation; the same delivery again is a
no-op. Sent with a wrong signature: 401 and not one row changed. Each example runs in a savepoint rolled back."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpdesk.models import Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import FIXTURES
from tests.support.row_state import database_state, rolled_back

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

FUZZ = hsettings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MAILS = [
    path.read_bytes() for path in sorted([*FIXTURES.glob("*.eml"), *(FIXTURES / "automated").glob("*.eml")])
]
JUNK = [
    b"\x00",
    b"\xff\xfe",
    b"\r\n\r\n",
    b"\r\n--",
    b"=?utf-8?B?////?=",
    b"Content-Type: multipart/mixed; boundary=",
    "Grüße".encode("latin-1"),
    b"\r\nFrom: \xc3\x28\r\n",
    b"<>",
    b"Message-ID: <a@b>\r\n",
]


@st.composite
def damaged_mails(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.sampled_from(MAILS)))
    for _ in range(draw(st.integers(1, 4))):
        operation = draw(st.sampled_from(["insert", "cut", "truncate", "nest"]))
        at = draw(st.integers(0, len(raw)))
        if operation == "insert":
            raw[at:at] = draw(st.one_of(st.sampled_from(JUNK), st.binary(max_size=40)))
        elif operation == "cut":
            del raw[at : at + draw(st.integers(1, 80))]
        elif operation == "truncate":
            del raw[at:]
        else:  # the mail inside a multipart inside a multipart
            raw = bytearray(
                b'From: x@y.example\r\nContent-Type: multipart/mixed; boundary="n"\r\n\r\n--n\r\n'
                b"Content-Type: message/rfc822\r\n\r\n" + bytes(raw) + b"\r\n--n--\r\n"
            )
    return bytes(raw)


@pytest.fixture
def inbox():
    return AssistantInboxFactory(inbox=email_inbox()).inbox


@FUZZ
@given(raw=damaged_mails())
def test_a_damaged_mail_is_stored_or_refused_never_a_server_error(client, inbox, raw):
    with rolled_back():
        fields = signed_fields(raw)
        response = post(client, inbox, fields)
        assert response.status_code in (200, 400), response.content
        if response.status_code == 200:
            # Incoming only: past the contact's AI reply limit (counted in Redis, which no savepoint rolls
            # back) a note says the mail waits for a person.
            (message,) = Message.objects.filter(inbox=inbox, message_type=Message.Type.INCOMING)
            assert message.conversation.contact_inbox.source_id
            again = post(client, inbox, fields)
            assert (again.status_code, again.json()["status"]) == (200, "duplicate")
            assert Message.objects.filter(inbox=inbox, message_type=Message.Type.INCOMING).count() == 1


@FUZZ
@given(raw=damaged_mails())
def test_a_wrongly_signed_mail_changes_nothing(client, inbox, raw):
    with rolled_back():
        before = database_state()
        response = post(client, inbox, signed_fields(raw, key="not-the-key"))
        assert response.status_code == 401
        assert database_state() == before
