"""Property-based fuzz of the widget's visitor API, as every other channel's webhook is fuzzed
(tests/helpdesk/webhooks/test_fuzz_channels.py): bodies start from the widget's own messages and `setUser` calls
and are mutated by tests/support/json_mutations.py.
- From an allowed page with a valid visitor token: the answer is 2xx or 4xx, never 5xx; a message answered
  201 stored exactly one incoming message; the same body again is a no-op (a retry of the page's send).
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
from helpdesk.models import Message
from tests.helpdesk.channels_widget.support import SECRET, call, widget_inbox
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
