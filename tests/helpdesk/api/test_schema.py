"""The OpenAPI schema tells the truth: each rule is checked twice, in the generated schema and by a real request
whose answer is validated against what the schema documents (tests/support/openapi.py)."""

from __future__ import annotations

import pytest
from django.utils import timezone
from openapi_spec_validator import validate as validate_openapi
from rest_framework.test import APIClient

from captain.models import RoutingExample
from helpdesk.models import CannedResponse, Membership, Notification, Team, TeamMember
from tests.factories import AssistantFactory, ConversationFactory, MembershipFactory
from tests.support.openapi import api_schema, assert_documented, component, operation, schema_errors

ACCOUNT = "/api/v1/accounts/{account_id}"
CAPTAIN = "/api/v1/captain/accounts/{account_id}"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def test_the_schema_is_a_valid_openapi_document():
    validate_openapi(api_schema())


# ---- pagination ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [f"{ACCOUNT}/canned-responses/", f"{ACCOUNT}/notifications/"])
def test_paginated_lists_are_documented_as_a_page_with_limit_and_offset(path):
    listed = operation(path, "get")

    body = listed["responses"]["200"]["content"]["application/json"]["schema"]
    assert body["$ref"].startswith("#/components/schemas/Paginated")
    assert {"limit", "offset"} <= {p["name"] for p in listed["parameters"] if p["in"] == "query"}


@pytest.mark.django_db
@pytest.mark.parametrize("query", [{}, {"q": "ship"}, {"q": "ship", "limit": 1}])
def test_canned_responses_list_and_search_answer_the_documented_page(admin, query):
    CannedResponse.objects.create(account=admin.account, short_code="shipping", content="Ships in 2 days.")
    CannedResponse.objects.create(account=admin.account, short_code="refund", content="About shipping costs")

    response = client_of(admin).get(f"/api/v1/accounts/{admin.account_id}/canned-responses/", query)

    assert response.status_code == 200
    assert_documented(response, path=f"{ACCOUNT}/canned-responses/", method="get")
    assert response.json()["count"] == 2


@pytest.mark.django_db
def test_notifications_list_answers_the_documented_page(admin):
    Notification.objects.create(
        account=admin.account,
        user=admin.user,
        kind=Notification.Kind.MENTION,
        conversation=ConversationFactory(account=admin.account),
        text="You were mentioned",
        read_at=timezone.now(),
    )

    response = client_of(admin).get(f"/api/v1/accounts/{admin.account_id}/notifications/")

    assert response.status_code == 200
    assert_documented(response, path=f"{ACCOUNT}/notifications/", method="get")


# ---- enums and nullability as answered ------------------------------------------------------------------------


def _allows(schema: dict, value) -> bool:
    return schema_errors(schema, value) == []


@pytest.mark.parametrize("name", ["RoutingExample", "RoutingCorrection"])
def test_a_routing_examples_signal_is_documented_with_the_blank_a_drafted_example_has(name):
    signal = component(name)["properties"]["signal"]

    assert _allows(signal, "")
    assert _allows(signal, "reroute")
    assert not _allows(signal, "guess")


def test_a_team_members_last_assignment_is_documented_as_nullable():
    last_assigned_at = component("TeamMember")["properties"]["last_assigned_at"]

    assert _allows(last_assigned_at, None)


@pytest.mark.django_db
def test_a_drafted_routing_example_answers_its_documented_shape(admin):
    assistant = AssistantFactory(account=admin.account)
    drafted = RoutingExample.objects.create(
        account_id=admin.account_id,
        assistant=assistant,
        key="refunds",
        text="I want my money back",
        source=RoutingExample.Source.DRAFTED,
        status=RoutingExample.Status.SUGGESTED,
    )
    path = f"{CAPTAIN}/assistants/{{assistant_id}}/routing-examples/{{example_id}}/"

    response = client_of(admin).get(
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.pk}/routing-examples/{drafted.pk}/"
    )

    assert response.status_code == 200 and response.json()["signal"] == ""
    assert_documented(response, path=path, method="get")


@pytest.mark.django_db
def test_a_team_whose_member_was_never_assigned_answers_its_documented_shape(admin):
    team = Team.objects.create(account=admin.account, name="Support")
    TeamMember.objects.create(team=team, user=admin.user)

    response = client_of(admin).get(f"/api/v1/accounts/{admin.account_id}/teams/{team.pk}/")

    assert response.status_code == 200 and response.json()["members"][0]["last_assigned_at"] is None
    assert_documented(response, path=f"{ACCOUNT}/teams/{{team_id}}/", method="get")
