"""The runs of a conversation and their spans (the debug log's data): account admins only."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Membership
from tests.factories import ConversationFactory, MembershipFactory, RunFactory, SpanRecordFactory

pytestmark = pytest.mark.django_db


def runs_url(conversation):
    return f"/api/v1/captain/accounts/{conversation.account_id}/conversations/{conversation.id}/runs/"


@pytest.fixture
def conversation():
    return ConversationFactory()


def api_for(membership):
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def test_admin_sees_runs_with_their_spans(conversation):
    admin = MembershipFactory(account=conversation.account, role=Membership.Role.ADMIN)
    older = RunFactory(conversation=conversation, trace_id="a" * 32)
    newer = RunFactory(
        conversation=conversation,
        outcome="human_handoff",
        detail="asked for a person",
        trace_id="",
        sources=[
            {"number": 1, "kind": "faq", "ref": "faq:3", "title": "Refunds?", "score": 0.7, "cited": False}
        ],
    )
    root = SpanRecordFactory(trace_id="a" * 32, name="captain.run", attributes={"captain.agent": "assistant"})
    child = SpanRecordFactory(trace_id="a" * 32, name="captain.llm", parent_span_id=root.span_id)
    SpanRecordFactory(trace_id="b" * 32)  # another run's trace
    SpanRecordFactory(trace_id="")  # a span without trace must not attach to runs without trace
    RunFactory()  # another conversation

    response = api_for(admin).get(runs_url(conversation))

    assert response.status_code == 200
    runs = response.data["results"]
    assert [r["id"] for r in runs] == [newer.id, older.id]
    assert (runs[0]["outcome"], runs[0]["detail"], runs[0]["spans"]) == (
        "human_handoff",
        "asked for a person",
        [],
    )
    assert runs[0]["sources"][0]["ref"] == "faq:3" and runs[1]["sources"] == []  # what the AI was given
    spans = runs[1]["spans"]
    assert [(s["name"], s["parent_span_id"]) for s in spans] == [
        ("captain.run", ""),
        ("captain.llm", root.span_id),
    ]
    assert spans[0]["attributes"] == {"captain.agent": "assistant"}
    assert spans[1]["span_id"] == child.span_id


def test_agent_gets_403(conversation):
    agent = MembershipFactory(account=conversation.account, role=Membership.Role.AGENT)
    RunFactory(conversation=conversation)

    assert api_for(agent).get(runs_url(conversation)).status_code == 403
