"""Property-based fuzz of the REST API's write endpoints, as an account administrator.

Every body starts from one the endpoint accepts and is mutated by tests/support/json_mutations.py (wrong
types, huge strings, lone surrogates, NUL, depth bombs, duplicate keys, overflowing numbers, truncation...).
Properties: the answer is 200/201 or 400, never 5xx; a 400 added no row to any helpdesk or captain table.
Each example runs in a savepoint rolled back afterwards. Runs on SQLite in the main suite and on PostgreSQL in the
`postgres` stage. Plain regression tests for what the fuzz found are at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from django.core.cache import cache as django_cache
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from helpdesk.models import Membership
from tests.factories import (
    AssistantFactory,
    ConversationFactory,
    FaqEntryFactory,
    InboxFactory,
    MembershipFactory,
    ScenarioFactory,
)
from tests.support.json_mutations import keywords_of, mutated_bodies, to_tree
from tests.support.row_state import database_state, rolled_back

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

EXAMPLES_PER_ENDPOINT = 60


@dataclass(frozen=True)
class Ids:
    """The rows a fuzzed request refers to, created once per test."""

    account: int
    conversation: int
    admin_user: int
    free_inbox: int
    assistant: int
    scenario: int
    faq: int


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    """Under /api/v1/, formatted with the `Ids`."""
    documents: Callable[[Ids], list[dict[str, Any]]]


CONVERSATION = "accounts/{account}/conversations/{conversation}/"
ASSISTANT = "captain/accounts/{account}/assistants/{assistant}/"


def _assistant(ids: Ids) -> list[dict[str, Any]]:
    return [
        {
            "name": "Captain",
            "description": "Answers the shop's customers",
            "product_name": "Acme Shop",
            "instructions": "Answer questions about orders and refunds.",
            "response_guidelines": ["Be brief", "Use the customer's language"],
            "guardrails": ["Never promise a delivery date"],
            "handoff_message": "A teammate will take it from here.",
            "resolution_message": "Glad I could help!",
            "temperature": 0.3,
            "max_turns": 4,
            "inbox_ids": [ids.free_inbox],
        }
    ]


def _scenario(ids: Ids) -> list[dict[str, Any]]:
    return [
        {
            "title": "Exchanges",
            "key": "exchanges",
            "description": "Swapping a product for another size or colour",
            "instruction": "Help the customer exchange a product.",
            "enabled": True,
            "tools": ["faq_lookup"],
        },
        {"title": "Warranty", "description": "Broken products", "instruction": "Collect the order number."},
    ]


def _faq(ids: Ids) -> list[dict[str, Any]]:
    return [{"question": "How long does a refund take?", "answer": "Five business days.", "enabled": True}]


def _routing(ids: Ids) -> list[dict[str, Any]]:
    return [
        {
            "config": {"star": True, "max_hops": 2, "history_rounds": 2, "default_mode": "semantic"},
            "nodes": [{"key": "refunds", "is_global": True, "examples": ["where is my money"]}],
            "edges": [["refunds", "shipping"]],
            "rules": [{"node": "assistant", "match": "contains", "value": "refund", "target": "refunds"}],
        }
    ]


ENDPOINTS = {
    "message": Endpoint(
        "POST",
        CONVERSATION + "messages/",
        lambda ids: [
            {"content": "Your refund is on its way.", "private": False},
            {"content": "Note", "private": True},
        ],
    ),
    "status": Endpoint(
        "POST", CONVERSATION + "status/", lambda ids: [{"status": "open"}, {"status": "pending"}]
    ),
    "label": Endpoint("POST", CONVERSATION + "labels/", lambda ids: [{"label": "refund"}]),
    "priority": Endpoint("POST", CONVERSATION + "priority/", lambda ids: [{"priority": "high"}]),
    "assignee": Endpoint(
        "POST", CONVERSATION + "assignee/", lambda ids: [{"user_id": ids.admin_user}, {"user_id": None}]
    ),
    "assistant-create": Endpoint("POST", "captain/accounts/{account}/assistants/", _assistant),
    "assistant-put": Endpoint("PUT", ASSISTANT, _assistant),
    "assistant-patch": Endpoint(
        "PATCH",
        ASSISTANT,
        lambda ids: [
            {"name": "Captain 2"},
            {"temperature": 1.0, "guardrails": []},
            {"knowledge_mode": "tool", "when_unknown": "handoff", "cite_links": True},
        ],
    ),
    "scenario-create": Endpoint("POST", ASSISTANT + "scenarios/", _scenario),
    "scenario-put": Endpoint(
        "PUT", ASSISTANT + "scenarios/{scenario}/", lambda ids: [{**_scenario(ids)[0], "key": "refunds"}]
    ),
    "scenario-patch": Endpoint(
        "PATCH", ASSISTANT + "scenarios/{scenario}/", lambda ids: [{"title": "Refunds and returns"}]
    ),
    "faq-create": Endpoint("POST", ASSISTANT + "faq/", _faq),
    "faq-put": Endpoint("PUT", ASSISTANT + "faq/{faq}/", _faq),
    "faq-patch": Endpoint("PATCH", ASSISTANT + "faq/{faq}/", lambda ids: [{"enabled": False}]),
    "routing-put": Endpoint("PUT", ASSISTANT + "routing/", _routing),
    "faq-approve": Endpoint(
        "POST", ASSISTANT + "faq/{faq}/approve/", lambda ids: [{"question": "Refunds?", "answer": "5 days."}]
    ),
    "faq-review": Endpoint(
        "POST", ASSISTANT + "faq/review/", lambda ids: [{"ids": [ids.faq], "action": "reject"}]
    ),
}


@cache
def bodies(name: str, ids: Ids) -> st.SearchStrategy[bytes]:
    """Built once per endpoint and rows: building the strategy costs more than a request."""
    documents = ENDPOINTS[name].documents(ids)
    return mutated_bodies([to_tree(d) for d in documents], [k for d in documents for k in keywords_of(d)])


@pytest.fixture
def admin_api(settings) -> tuple[APIClient, Ids]:
    # The factory's password hashed with PBKDF2 took longer than the 40 requests after it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    account = admin.account
    conversation = ConversationFactory(contact_inbox__inbox__account=account)
    assistant = AssistantFactory(account=account)
    refunds = ScenarioFactory(assistant=assistant, key="refunds", title="Refunds")
    ScenarioFactory(assistant=assistant, key="shipping", title="Shipping")
    ids = Ids(
        account=account.id,
        conversation=conversation.id,
        admin_user=admin.user_id,
        free_inbox=InboxFactory(account=account).id,
        assistant=assistant.id,
        scenario=refunds.id,
        faq=FaqEntryFactory(assistant=assistant).id,
    )
    client = APIClient()
    client.force_authenticate(admin.user)
    return client, ids


def send(client: APIClient, name: str, ids: Ids, body: bytes):
    endpoint = ENDPOINTS[name]
    url = "/api/v1/" + endpoint.path.format(**vars(ids))
    return client.generic(endpoint.method, url, body, content_type="application/json")


@pytest.mark.parametrize("name", list(ENDPOINTS))
@hsettings(
    max_examples=EXAMPLES_PER_ENDPOINT,
    deadline=None,
    derandomize=True,  # the same bodies on every run, so CI is repeatable
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_mutated_bodies_never_answer_5xx(admin_api, name, data):
    client, ids = admin_api
    body = data.draw(bodies(name, ids), label="body")
    # The per-user throttle (1,200/min) is not what is tested: without this the fuzz would end in 429s.
    django_cache.clear()
    with rolled_back():
        before = database_state()

        response = send(client, name, ids, body)

        event(str(response.status_code))
        assert response.status_code in (200, 201, 400), response.content[:300]
        answer = response.json()
        if response.status_code == 400:
            assert isinstance(answer, dict) and answer, answer  # says what is wrong
            assert database_state() == before


# ---- what the fuzz found: the minimal examples, as plain regression tests ------------------------------------


def test_an_overflowing_number_is_a_400_not_500(admin_api):
    # Python reads 1e999 as inf; the assignee's primary-key lookup raised OverflowError converting it to an int.
    client, ids = admin_api

    response = send(client, "assignee", ids, b'{"user_id": 1e999}')

    assert response.status_code == 400
    assert "out of range" in response.json()["detail"]


def test_a_body_over_the_upload_limit_is_a_json_400(admin_api, settings):
    # Django refuses it while DRF reads the body, before any parser: the answer was Django's HTML error page.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    client, ids = admin_api

    response = send(client, "message", ids, b'{"content": "' + b"x" * 2000 + b'"}')

    assert response.status_code == 400
    assert response.json() == {"detail": "Request body is larger than 1024 bytes."}


def test_a_lone_surrogate_is_a_400_not_500(admin_api):
    # Valid JSON, not valid Unicode: the choice field's error message echoed it and the response could not be
    # encoded.
    client, ids = admin_api

    response = send(client, "priority", ids, b'{"priority": "\\ud800"}')

    assert response.status_code == 400
    assert "lone surrogate" in response.json()["detail"]
