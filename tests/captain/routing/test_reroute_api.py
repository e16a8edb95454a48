"""`POST .../conversations/<cid>/reroute/ {"key"}`: the conversation moves to the node, the last routed customer
message is proposed as a correction; members may do it, other tenants get 404, an unknown key 400 naming the
valid ones."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.routing.models import RoutingDecision, RoutingExample
from helpdesk.models import Conversation, Membership
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def routed():
    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=link.assistant, key="shipping", title="Shipping", description="Parcels")
    ScenarioFactory(assistant=link.assistant, key="old", title="Old", description="Old", enabled=False)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, ai_agent_key="refunds")
    message = MessageFactory(conversation=conversation, content="Where is my parcel?")
    RoutingDecision.objects.create(
        account_id=conversation.account_id,
        assistant=link.assistant,
        conversation=conversation,
        message=message,
        node="assistant",
        phase="after_input",
        mode="semantic",
        target="refunds",
        switched=True,
    )
    agent = MembershipFactory(account=conversation.account, role=Membership.Role.AGENT)
    return link.assistant, conversation, message, agent.user


def post(user, account_id, conversation_id, body):
    api = APIClient()
    api.force_authenticate(user)
    return api.post(
        f"/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/reroute/", body, format="json"
    )


def test_an_agent_reroutes_and_the_message_is_proposed_for_review(routed):
    assistant, conversation, message, agent = routed

    response = post(agent, conversation.account_id, conversation.id, {"key": "shipping"})

    assert response.status_code == 200
    body = response.json()
    example = RoutingExample.objects.get()
    assert {k: body[k] for k in ("conversation", "key", "moved", "status", "node")} == {
        "conversation": conversation.id,
        "key": "shipping",
        "moved": True,
        "status": "pending",
        "node": "shipping",
    }
    assert body["correction"] == {
        "id": example.id,
        "key": "shipping",
        "text": "Where is my parcel?",
        "status": "pending",
        "signal": "reroute",
        "routed_to": "refunds",
        "message": message.id,
        "created_at": body["correction"]["created_at"],
    }
    assert example.assistant == assistant
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "shipping"


def test_rerouting_where_the_router_sent_it_moves_nothing_to_learn(routed):
    _assistant, conversation, _message, agent = routed

    body = post(agent, conversation.account_id, conversation.id, {"key": "refunds"}).json()

    assert body["correction"] is None and body["node"] == "refunds"
    assert not RoutingExample.objects.exists()


def test_rerouting_to_people_hands_over(routed):
    _assistant, conversation, _message, agent = routed

    body = post(agent, conversation.account_id, conversation.id, {"key": "human"}).json()

    assert (body["status"], body["node"], body["moved"], body["correction"]) == ("open", "", True, None)


@pytest.mark.parametrize("key", ["nowhere", "old", ""])
def test_an_unknown_or_disabled_key_is_a_400_naming_the_valid_keys(routed, key):
    _assistant, conversation, _message, agent = routed

    response = post(agent, conversation.account_id, conversation.id, {"key": key})

    assert response.status_code == 400
    if key:
        assert response.json()["valid_keys"] == ["assistant", "refunds", "shipping", "human"]
        assert "Valid keys: assistant, refunds, shipping, human" in response.json()["key"][0]
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "refunds"
    assert not RoutingExample.objects.exists()


def test_a_conversation_no_assistant_answers_is_a_400(routed):
    _assistant, conversation, _message, agent = routed
    elsewhere = ConversationFactory(contact_inbox__inbox__account=conversation.account)

    response = post(agent, conversation.account_id, elsewhere.id, {"key": "refunds"})

    assert response.status_code == 400 and "No AI assistant" in response.json()["key"][0]


def test_another_tenants_conversation_is_a_404(routed):
    _assistant, conversation, _message, _agent = routed
    outsider = MembershipFactory(role=Membership.Role.ADMIN)  # admin of another account

    for account_id in (outsider.account_id, conversation.account_id):
        response = post(outsider.user, account_id, conversation.id, {"key": "shipping"})
        assert response.status_code == 404
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "refunds"
    assert not RoutingExample.objects.exists()


def test_anonymous_callers_are_refused(routed):
    _assistant, conversation, _message, _agent = routed

    response = APIClient().post(
        f"/api/v1/captain/accounts/{conversation.account_id}/conversations/{conversation.id}/reroute/",
        {"key": "shipping"},
        format="json",
    )

    assert response.status_code in (401, 403)
    assert not RoutingExample.objects.exists()


def test_the_endpoint_is_in_the_api_schema():
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    assert "/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/reroute/" in paths
