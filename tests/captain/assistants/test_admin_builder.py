"""The builder's way through the admin: scenarios, routing rows and FAQ on their own pages (index, filters,
tenant scoping), the assistant page's links and counts, rules typed one per line, the routing picture drawn from
the runtime graph, playground links, handoff teams limited to the assistant's account, copilot runs read only."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from django.test import Client
from django.urls import reverse

from captain.assistants.models import Scenario
from captain.copilot.models import CopilotRun
from captain.routing.admin_graph import routing_picture
from captain.routing.models import RoutingConfig, RoutingEdge, RoutingNode, RoutingRule
from captain.routing.services.routing import routing_graph, star_graph
from helpdesk.models import Membership, Team
from tests.captain.test_admin import change_url, new_assistant_data
from tests.factories import (
    AccountFactory,
    AssistantFactory,
    ConversationFactory,
    FaqEntryFactory,
    MembershipFactory,
    ScenarioFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def account_a():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def account_b():
    return AccountFactory(name="Bravo Co")


@pytest.fixture
def client_a(account_a):
    user = UserFactory(is_staff=True)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    MembershipFactory(account=account_a, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def team_a(account_a):
    assistant = AssistantFactory(account=account_a, name="Alpha helper")
    refunds = ScenarioFactory(assistant=assistant, title="Refunds", key="refunds")
    orders = ScenarioFactory(assistant=assistant, title="Orders", key="orders")
    FaqEntryFactory(assistant=assistant)
    return assistant, refunds, orders


def test_scenarios_routing_and_faq_are_on_the_admin_index(client_a):
    html = client_a.get("/admin/").content.decode()
    for url in [
        "/admin/captain/scenario/",
        "/admin/captain/routingnode/",
        "/admin/captain/routingedge/",
        "/admin/captain/routingrule/",
        "/admin/captain/faqentry/",
        "/admin/captain/copilotrun/",
        "/admin/helpdesk/team/",
        "/admin/helpdesk/cannedresponse/",
    ]:
        assert f'href="{url}"' in html, url


def test_scenario_pages_list_only_the_users_accounts_and_filter_by_assistant(client_a, team_a, account_b):
    assistant, _, _ = team_a
    other = ScenarioFactory(
        assistant=AssistantFactory(account=assistant.account, name="Second"), title="Second team"
    )
    foreign = ScenarioFactory(
        assistant=AssistantFactory(account=account_b, name="Bravo bot"), title="Bravo secret"
    )

    everything = client_a.get("/admin/captain/scenario/").content.decode()
    assert "Refunds" in everything and "Second team" in everything and "Bravo secret" not in everything
    # The assistant filter offers only this user's assistants.
    assert "Alpha helper" in everything and foreign.assistant.name not in everything

    filtered = client_a.get(f"/admin/captain/scenario/?assistant__id__exact={assistant.pk}").content.decode()
    assert "Refunds" in filtered and "Second team" not in filtered
    assert other.pk  # exists, only filtered out

    assert client_a.get(change_url(foreign)).status_code in (302, 404)
    searched = client_a.get("/admin/captain/scenario/?q=orders").content.decode()
    assert ">Orders</a>" in searched and ">Refunds</a>" not in searched


def test_assistant_page_links_to_its_pages_with_counts(client_a, team_a):
    assistant, _, _ = team_a
    RoutingEdge.objects.create(assistant=assistant, source="refunds", target="orders")
    html = client_a.get(change_url(assistant)).content.decode()
    links = dict(re.findall(r'<a href="([^"]+)" data-page="[a-z]+">([^<]+)</a>', html))
    by_label = {label: url.replace("&amp;", "&") for url, label in links.items()}
    assert f"/admin/captain/scenario/?assistant__id__exact={assistant.pk}" == by_label["Scenarios (2)"]
    assert by_label["FAQ (1)"].startswith("/admin/captain/faqentry/?")
    assert "Edges (1)" in by_label and "Knowledge (0)" in by_label and "Routing nodes (0)" in by_label
    # The links lead to pages that answer with those rows.
    page = client_a.get(by_label["Scenarios (2)"]).content.decode()
    assert "Refunds" in page and "Orders" in page


def test_guidelines_and_guardrails_are_one_rule_per_line(client_a, account_a):
    data = new_assistant_data(account_a) | {
        "response_guidelines": "Answer in the customer's language.\r\n\r\n  Keep   it short. \r\n",
        "guardrails": "Promise refunds",
    }
    response = client_a.post("/admin/captain/assistant/add/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    from captain.assistants.models import Assistant

    assistant = Assistant.objects.get(account=account_a)
    assert assistant.response_guidelines == ["Answer in the customer's language.", "Keep it short."]
    assert assistant.guardrails == ["Promise refunds"]
    html = client_a.get(change_url(assistant)).content.decode()
    textarea = re.search(r'<textarea name="response_guidelines"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    assert textarea.strip() == "Answer in the customer&#x27;s language.\nKeep it short."


def test_the_assistant_page_is_folded(client_a, team_a):
    html = client_a.get(change_url(team_a[0])).content.decode()
    # Long settings and every inline open on demand (<details>); the glance section is not folded.
    assert html.count("<details>") >= 8
    assert "The team at a glance" in html


def test_routing_picture_shows_the_runtime_graph(client_a, team_a, account_a):
    assistant, refunds, _ = team_a
    billing = Team.objects.create(account=account_a, name="Billing")
    refunds.handoff_team = billing
    refunds.save()
    RoutingConfig.objects.update_or_create(assistant=assistant, defaults={"default_mode": "semantic"})
    RoutingNode.objects.create(assistant=assistant, key="orders", mode="router", is_global=True)
    RoutingEdge.objects.create(assistant=assistant, source="refunds", target="orders")

    picture = routing_picture(assistant)
    graph = routing_graph(assistant)
    assert graph is not None
    drawn = {(a, b) for a, b, _ in picture.edges} | {(b, a) for a, b, both in picture.edges if both}
    assert drawn == graph.edges
    assert {n.key for n in picture.nodes} == set(graph.nodes)
    for node in picture.nodes:
        assert node.is_global == graph.nodes[node.key].is_global
        if not node.terminal:
            assert node.mode == graph.mode_of(node.key)

    html = client_a.get(change_url(assistant)).content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="routing-graph"' in html
    assert 'data-node="orders" data-kind="scenario" data-mode="router" data-global="1"' in html
    assert (
        'data-node="refunds" data-kind="scenario" data-mode="semantic" data-global="0" data-team="Billing"'
        in html
    )
    assert 'data-edge="refunds-&gt;orders" data-both="0"' in html
    assert 'data-edge="assistant-&gt;refunds" data-both="1"' in html  # the star edges, both ways
    assert 'data-node="human" data-kind="people"' in html
    assert (
        "style=" not in html.split('class="routing-graph"')[1].split("</svg>")[0]
    )  # CSP: no style attributes


def test_without_graph_routing_the_picture_is_the_star_with_handoff_tools(team_a):
    assistant, _, _ = team_a
    RoutingConfig.objects.filter(assistant=assistant).delete()
    picture = routing_picture(assistant)
    assert not picture.routing_on
    assert {n.mode for n in picture.nodes if not n.terminal} == {"tool"}
    drawn = {(a, b) for a, b, _ in picture.edges} | {(b, a) for a, b, both in picture.edges if both}
    assert drawn == star_graph(assistant).edges


def test_a_scenario_title_cannot_inject_markup_into_the_picture(client_a, account_a):
    assistant = AssistantFactory(account=account_a)
    ScenarioFactory(assistant=assistant, title='<script>alert(1)</script>"x', key="evil")
    html = client_a.get(change_url(assistant)).content.decode()
    svg = html.split('class="routing-graph"')[1].split("</svg>")[0]
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_playground_links_open_the_playground_with_the_assistant_and_start_node(client_a, team_a):
    assistant, refunds, _ = team_a
    playground = reverse("captain-dashboard:playground", args=[assistant.account_id])
    html = client_a.get(change_url(assistant)).content.decode()
    assert f'href="{playground}?assistant={assistant.pk}" class="playground-link"' in html

    scenario_page = client_a.get(change_url(refunds)).content.decode()
    link = (
        re.search(r'<a href="([^"]+)" class="playground-link">', scenario_page).group(1).replace("&amp;", "&")
    )
    query = parse_qs(urlparse(link).query)
    assert query == {"assistant": [str(assistant.pk)], "start": ["refunds"]}
    page = client_a.get(link)
    assert page.status_code == 200
    assert page.context["assistant"] == assistant and page.context["start_key"] == "refunds"


def test_handoff_team_choices_are_the_assistants_accounts_teams(client_a, team_a, account_a, account_b):
    _, refunds, _ = team_a
    own = Team.objects.create(account=account_a, name="Billing")
    foreign = Team.objects.create(account=account_b, name="Bravo team")
    page = client_a.get(change_url(refunds))
    choices = list(page.context["adminform"].form.fields["handoff_team"].queryset)
    assert choices == [own]

    from tests.helpdesk.test_admin import admin_form_data

    data = admin_form_data(page) | {"handoff_team": str(foreign.pk)}
    refused = client_a.post(change_url(refunds), data)
    assert refused.status_code == 200
    assert "handoff_team" in refused.context["adminform"].form.errors
    data["handoff_team"] = str(own.pk)
    saved = client_a.post(change_url(refunds), data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    refunds.refresh_from_db()
    assert refunds.handoff_team == own

    node_page = client_a.get("/admin/captain/routingnode/add/")
    assert list(node_page.context["adminform"].form.fields["handoff_team"].queryset) == [own]


def test_a_routing_node_on_its_own_page_saves_examples_by_line_and_checks_its_key(client_a, team_a):
    assistant, _, _ = team_a
    base = {
        "assistant": assistant.pk,
        "timing": "after_input",
        "examples": "Where is my parcel?\nTrack order",
    }
    refused = client_a.post("/admin/captain/routingnode/add/", base | {"key": "no_such_scenario"})
    assert refused.status_code == 200 and "key" in refused.context["adminform"].form.errors
    saved = client_a.post("/admin/captain/routingnode/add/", base | {"key": "orders"})
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    node = RoutingNode.objects.get(assistant=assistant, key="orders")
    assert node.examples == ["Where is my parcel?", "Track order"]

    rule = client_a.post(
        "/admin/captain/routingrule/add/",
        {
            "assistant": assistant.pk,
            "node": "assistant",
            "position": "0",
            "match": "regex",
            "value": "(",
            "target": "orders",
        },
    )
    assert rule.status_code == 200 and "value" in rule.context["adminform"].form.errors
    assert not RoutingRule.objects.exists()


def test_a_scenario_added_on_its_own_page_goes_through_the_service(client_a, team_a, account_b):
    assistant, _, _ = team_a
    data = {
        "assistant": assistant.pk,
        "title": "Returns desk",
        "description": "d",
        "instruction": "i",
        "enabled": "on",
    }
    response = client_a.post("/admin/captain/scenario/add/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Scenario.objects.get(assistant=assistant, title="Returns desk").key == "returns_desk"
    # Another account's assistant is not a choice.
    foreign = AssistantFactory(account=account_b)
    refused = client_a.post("/admin/captain/scenario/add/", data | {"assistant": foreign.pk, "title": "X"})
    assert refused.status_code == 200 and "assistant" in refused.context["adminform"].form.errors


def test_copilot_runs_are_read_only_and_scoped(client_a, account_a, account_b):
    own = CopilotRun.objects.create(
        account=account_a,
        conversation=ConversationFactory(account=account_a),
        user_id=int(client_a.session["_auth_user_id"]),  # a run is listed to the one who asked for it
        kind="draft",
    )
    other = CopilotRun.objects.create(
        account=account_b, conversation=ConversationFactory(account=account_b), kind="draft"
    )
    listing = client_a.get("/admin/captain/copilotrun/")
    assert listing.status_code == 200
    ids = [row.pk for row in listing.context["cl"].result_list]
    assert ids == [own.pk] and other.pk not in ids
    assert client_a.get("/admin/captain/copilotrun/add/").status_code == 403
    page = client_a.get(change_url(own))
    assert (
        page.status_code == 200
        and "Save" not in page.content.decode().split('<div class="submit-row">')[-1][:300]
    )


def test_model_endpoint_lists_are_one_name_per_line(client_a, account_a):
    response = client_a.post(
        "/admin/captain/modelendpoint/add/",
        {
            "account": account_a.pk,
            "name": "own",
            # Allowlisted in tests (the suite's model servers run there); no DNS lookup leaves the machine.
            "base_url": "http://127.0.0.1:9/v1",
            "model_names": "m1\nm2",
            "vision_models": "m2",
            "text_tool_models": "",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    from captain.assistants.models import ModelEndpoint

    endpoint = ModelEndpoint.objects.get(account=account_a)
    assert (
        endpoint.model_names == ["m1", "m2"]
        and endpoint.vision_models == ["m2"]
        and endpoint.text_tool_models == []
    )


def test_routing_rows_of_another_account_are_neither_listed_nor_reachable(client_a, team_a, account_b):
    foreign = AssistantFactory(account=account_b, name="Bravo bot")
    ScenarioFactory(assistant=foreign, key="bravo_only")
    node = RoutingNode.objects.create(assistant=foreign, key="bravo_only")
    edge = RoutingEdge.objects.create(assistant=foreign, source="assistant", target="bravo_only")
    rule = RoutingRule.objects.create(assistant=foreign, node="assistant", value="x", target="bravo_only")
    RoutingNode.objects.create(assistant=team_a[0], key="refunds")
    for model, row in (("routingnode", node), ("routingedge", edge), ("routingrule", rule)):
        listing = client_a.get(f"/admin/captain/{model}/")
        assert row.pk not in [r.pk for r in listing.context["cl"].result_list], model
        assert client_a.get(change_url(row)).status_code in (302, 404), model
    # Adding a row to another account's assistant is refused (the assistant is not a choice).
    refused = client_a.post(
        "/admin/captain/routingedge/add/",
        {"assistant": foreign.pk, "source": "assistant", "target": "bravo_only"},
    )
    assert refused.status_code == 200 and RoutingEdge.objects.filter(assistant=foreign).count() == 1
