"""Ids beyond a 64-bit primary key: a JSON 404 in a path, a JSON 400 naming the parameter in a query, never a 500.

SQLite cannot bind an integer above 2**63-1 (OverflowError out of the membership lookup, on every account-scoped
route); PostgreSQL answered 404. Both now refuse before any lookup (`helpdesk.ids`)."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter
from rest_framework.test import APIClient

from helpdesk.models import Membership, Team
from tests.factories import AssistantFactory, ConversationFactory, MembershipFactory

pytestmark = pytest.mark.django_db

MAX_ID = 2**63 - 1
"""The largest value of a 64-bit signed primary key (SQLite INTEGER, PostgreSQL bigint)."""
OUT_OF_RANGE = [pytest.param(2**63, id="2**63"), pytest.param(2**64, id="2**64")]

ACCOUNT_ROUTES = [
    "/api/v1/accounts/{account}/conversations/",
    "/api/v1/accounts/{account}/conversations/1/messages/",
    "/api/v1/accounts/{account}/teams/",
    "/api/v1/accounts/{account}/csat-responses/",
    "/api/v1/accounts/{account}/attribute-definitions/",
    "/api/v1/accounts/{account}/canned-responses/",
    "/api/v1/accounts/{account}/notifications/",
    "/api/v1/captain/accounts/{account}/assistants/",
    "/api/v1/captain/accounts/{account}/assistants/1/routing/",
    "/api/v1/captain/accounts/{account}/credits/",
]


def api_for(membership: Membership) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def assert_json_404(response) -> None:
    assert response.status_code == 404, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert set(response.json()) == {"detail"}


@pytest.mark.parametrize("role", [Membership.Role.ADMIN, Membership.Role.AGENT])
@pytest.mark.parametrize("account_id", OUT_OF_RANGE)
@pytest.mark.parametrize("route", ACCOUNT_ROUTES)
def test_an_account_id_beyond_64_bits_is_a_json_404_for_admins_and_agents(route, account_id, role):
    member = MembershipFactory(role=role)

    response = api_for(member).get(route.format(account=account_id))

    assert_json_404(response)


@pytest.mark.postgres
@pytest.mark.parametrize("account_id", OUT_OF_RANGE)
def test_a_write_to_an_account_id_beyond_64_bits_is_a_json_404_and_creates_nothing(account_id):
    admin = MembershipFactory(role=Membership.Role.ADMIN)

    response = api_for(admin).post(
        f"/api/v1/accounts/{account_id}/teams/", {"name": "Billing"}, format="json"
    )

    assert_json_404(response)
    assert not Team.objects.exists()


@pytest.mark.parametrize("object_id", OUT_OF_RANGE)
def test_an_object_id_beyond_64_bits_in_ones_own_account_is_a_json_404(object_id):
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    assistant = AssistantFactory(account=admin.account)
    api = api_for(admin)

    for route in [
        f"/api/v1/accounts/{admin.account_id}/conversations/{object_id}/",
        f"/api/v1/accounts/{admin.account_id}/teams/{object_id}/",
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/{object_id}/",
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.id}/faq/{object_id}/approve/",
    ]:
        assert_json_404(api.get(route) if "approve" not in route else api.post(route, {}, format="json"))


def test_the_largest_64_bit_id_is_an_ordinary_not_found():
    member = MembershipFactory()

    assert_json_404(api_for(member).get(f"/api/v1/accounts/{MAX_ID}/conversations/"))
    assert_json_404(api_for(member).get(f"/api/v1/accounts/{member.account_id}/conversations/{MAX_ID}/"))


def test_an_unknown_api_path_is_a_json_404():
    member = MembershipFactory()

    assert_json_404(api_for(member).get("/api/v1/no-such-thing/"))


@pytest.mark.parametrize(
    ("route", "parameter"),
    [
        ("/api/v1/accounts/{account}/conversations/?inbox={value}", "inbox"),
        ("/api/v1/accounts/{account}/csat-responses/?inbox={value}", "inbox"),
        ("/api/v1/accounts/{account}/csat-responses/?conversation={value}", "conversation"),
    ],
)
@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_an_id_filter_beyond_64_bits_is_a_json_400_naming_the_parameter(route, parameter, value):
    member = MembershipFactory()
    ConversationFactory(contact_inbox__inbox__account=member.account)

    response = api_for(member).get(route.format(account=member.account_id, value=value))

    assert response.status_code == 400, response.content[:300]
    assert list(response.json()) == [parameter]


def _id_routes(patterns, prefix: str = ""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _id_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern.pattern.converters


def test_no_route_takes_an_unbounded_int_from_the_path():
    """Every id in a path (API and dashboard) goes through the bounded `id` converter, never Django's `int`."""
    unbounded = [
        route
        for route, converters in _id_routes(get_resolver().url_patterns)
        if any(type(converter) is IntConverter for converter in converters.values())
    ]

    assert unbounded == []
