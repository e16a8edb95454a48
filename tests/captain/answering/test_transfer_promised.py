"""A reply that promised a transfer without calling the tool is visible where people look: as an event on the
agent's span in the runs API, and in the dashboard's debug log, with what the re-ask did about it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.answering.models import ReplyJob
from captain.answering.services.runs import run_for_message
from helpdesk.models import Membership
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import text, tool_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation(redis_url, llm_settings):
    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    return ConversationFactory(contact_inbox__inbox=link.inbox)


def test_a_false_transfer_promise_shows_in_the_runs_api_and_the_debug_log(conversation, llm_settings, client):
    message = MessageFactory(
        conversation=conversation, content="money back", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(
        text("Sure, I'll transfer you to our refunds team."),
        tool_call("handoff_to_refunds", {}),
        text("Refund started."),
    )
    assert run_for_message(message_id=message.id) == "reply"

    admin = MembershipFactory(account=conversation.account, role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(admin.user)
    runs = api.get(
        f"/api/v1/captain/accounts/{conversation.account_id}/conversations/{conversation.id}/runs/"
    ).json()["results"]
    events = [
        (span["attributes"].get("gen_ai.agent.id"), event)
        for span in runs[0]["spans"]
        for event in span["events"]
        if span["name"] == "captain.agent" and event["name"] == "captain.transfer_promised"
    ]
    assert events == [
        (
            "assistant",
            {
                "name": "captain.transfer_promised",
                "attributes": {
                    "gen_ai.agent.id": "assistant",
                    "captain.transfer_promised.result": "handoff on re-ask",
                    "captain.transfer_promised.text": "Sure, I'll transfer you to our refunds team.",
                },
            },
        )
    ]

    client.force_login(admin.user)
    html = client.get(
        f"/app/accounts/{conversation.account_id}/conversations/{conversation.id}/runs/"
    ).content
    assert b"transfer promised" in html and b"handoff on re-ask" in html


def test_no_promise_no_event(conversation, llm_settings):
    message = MessageFactory(conversation=conversation, content="hi", reply_job=ReplyJob.Status.PENDING)
    llm_settings.push(text("Hello! How can I help?"))
    assert run_for_message(message_id=message.id) == "reply"
    from captain.answering.models import SpanRecord

    events = [e["name"] for span in SpanRecord.objects.filter(name="captain.agent") for e in span.events]
    assert events == ["captain.structured_reply"]  # the reply's shape, and no transfer promise
