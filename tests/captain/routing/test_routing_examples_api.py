"""Proposed routing examples over the REST API: list with filters, edit, accept (optionally to another node),
reject, the redraft request, administrators only, and another tenant's ids answer 404."""

from __future__ import annotations

import json

import pytest
import redis
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from captain.routing.models import RoutingExample
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory, ScenarioFactory

pytestmark = pytest.mark.django_db

Source = RoutingExample.Source
Status = RoutingExample.Status


def api_for(membership):
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def url(assistant, suffix=""):
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/{suffix}"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def assistant(admin):
    return AssistantFactory(account=admin.account)


@pytest.fixture
def refunds(assistant):
    return ScenarioFactory(assistant=assistant, key="refunds", title="Refunds")


def example(assistant, text, *, key="refunds", source=Source.DRAFTED, status=Status.SUGGESTED):
    return RoutingExample.objects.create(
        account_id=assistant.account_id, assistant=assistant, key=key, text=text, source=source, status=status
    )


def test_list_filters_by_node_source_and_status(admin, assistant, refunds):
    ScenarioFactory(assistant=assistant, key="shipping")
    drafted = example(assistant, "I want my money back")
    correction = example(assistant, "money back?", source=Source.CORRECTION, status=Status.PENDING)
    shipping = example(assistant, "Where is my parcel?", key="shipping")
    example(AssistantFactory(account=admin.account), "Another assistant's")
    api = api_for(admin)

    def ids(query):
        response = api.get(url(assistant, "routing-examples/"), query)
        assert response.status_code == 200, response.data
        return [row["id"] for row in response.data["results"]]

    assert ids({}) == [drafted.pk, correction.pk, shipping.pk]
    assert ids({"key": "refunds"}) == [drafted.pk, correction.pk]
    assert ids({"source": "correction"}) == [correction.pk]
    assert ids({"status": "suggested", "key": "shipping"}) == [shipping.pk]
    row = api.get(url(assistant, "routing-examples/"), {"source": "drafted", "key": "refunds"}).data[
        "results"
    ][0]
    assert (row["text"], row["source"], row["status"]) == ("I want my money back", "drafted", "suggested")
    bad = api.get(url(assistant, "routing-examples/"), {"status": "approved"})
    assert bad.status_code == 400 and "status" in bad.data


def test_editing_a_drafted_suggestion_accepts_it_and_a_duplicate_is_a_400(admin, assistant, refunds):
    drafted = example(assistant, "refnd pls")
    example(assistant, "Refund please", status=Status.REJECTED)
    api = api_for(admin)

    edited = api.patch(
        url(assistant, f"routing-examples/{drafted.pk}/"), {"text": " I want a refund "}, format="json"
    )
    duplicate = api.patch(
        url(assistant, f"routing-examples/{drafted.pk}/"), {"text": "Refund please"}, format="json"
    )

    assert edited.status_code == 200
    assert (edited.data["text"], edited.data["status"]) == ("I want a refund", "accepted")
    assert duplicate.status_code == 400 and "text" in duplicate.data
    assert RoutingExample.objects.get(pk=drafted.pk).text == "I want a refund"


def test_accept_and_reject(admin, assistant, refunds):
    drafted = example(assistant, "I want my money back")
    correction = example(assistant, "money back?", source=Source.CORRECTION, status=Status.PENDING)
    api = api_for(admin)

    accepted = api.post(url(assistant, f"routing-examples/{drafted.pk}/accept/"))
    rejected = api.post(url(assistant, f"routing-examples/{correction.pk}/reject/"))

    assert (accepted.status_code, accepted.data["status"]) == (200, "accepted")
    assert (rejected.status_code, rejected.data["status"]) == (200, "rejected")
    assert accepted.data["reviewed_at"] and rejected.data["reviewed_at"]


def test_accepting_for_another_node_moves_the_example_and_an_unknown_node_is_a_400(admin, assistant, refunds):
    ScenarioFactory(assistant=assistant, key="shipping")
    ScenarioFactory(assistant=assistant, key="off", enabled=False)
    correction = example(assistant, "Where is my parcel?", source=Source.CORRECTION, status=Status.PENDING)
    api = api_for(admin)

    unknown = api.post(
        url(assistant, f"routing-examples/{correction.pk}/accept/"), {"key": "nope"}, format="json"
    )
    disabled = api.post(
        url(assistant, f"routing-examples/{correction.pk}/accept/"), {"key": "off"}, format="json"
    )
    moved = api.post(
        url(assistant, f"routing-examples/{correction.pk}/accept/"), {"key": "shipping"}, format="json"
    )

    assert unknown.status_code == 400 and "unknown node" in str(unknown.data["key"])
    assert disabled.status_code == 400 and "disabled" in str(disabled.data["key"])
    assert moved.status_code == 200
    assert (moved.data["key"], moved.data["status"]) == ("shipping", "accepted")


def test_a_redraft_request_queues_a_forced_drafting_after_commit(
    admin, assistant, refunds, redis_url, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api_for(admin).post(url(assistant, f"scenarios/{refunds.pk}/draft-examples/"))

    assert (response.status_code, response.data) == (202, {"queued": True})
    raw = redis.Redis.from_url(redis_url).lrange("captain_background", 0, -1)
    headers = [json.loads(message)["headers"] for message in raw]
    assert [(h["task"], h["argsrepr"]) for h in headers] == [
        ("captain.tasks.draft_routing_examples", f"({refunds.pk}, True)")
    ]


def test_a_redraft_request_is_a_400_when_drafting_is_off(admin, assistant, refunds, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS": False}

    response = api_for(admin).post(url(assistant, f"scenarios/{refunds.pk}/draft-examples/"))

    assert response.status_code == 400 and "turned off" in str(response.data)


def test_agents_of_the_account_may_not_read_or_review(admin, assistant, refunds):
    drafted = example(assistant, "I want my money back")
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    api = api_for(agent)

    assert api.get(url(assistant, "routing-examples/")).status_code == 403
    assert api.post(url(assistant, f"routing-examples/{drafted.pk}/accept/")).status_code == 403
    assert api.post(url(assistant, f"scenarios/{refunds.pk}/draft-examples/")).status_code == 403
    assert RoutingExample.objects.get().status == "suggested"


def test_another_tenants_ids_answer_404_and_change_nothing(admin, assistant, refunds):
    theirs = ScenarioFactory(key="refunds")
    their_example = example(theirs.assistant, "Their example")
    other_assistant_example = example(AssistantFactory(account=admin.account), "My other assistant's")
    api = api_for(admin)

    # Their assistant under my account, and their example or scenario under my assistant.
    their_assistant_in_my_account = (
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/{theirs.assistant_id}/routing-examples/"
    )
    assert api.get(their_assistant_in_my_account).status_code == 404
    for foreign in (their_example, other_assistant_example):
        base = url(assistant, f"routing-examples/{foreign.pk}/")
        assert api.get(base).status_code == 404
        assert api.patch(base, {"text": "hijacked"}, format="json").status_code == 404
        assert api.post(base + "accept/").status_code == 404
        assert api.post(base + "reject/").status_code == 404
    assert api.post(url(assistant, f"scenarios/{theirs.pk}/draft-examples/")).status_code == 404
    # Their account in the URL: not a member.
    assert api.get(url(theirs.assistant, "routing-examples/")).status_code in (403, 404)
    assert set(RoutingExample.objects.values_list("text", "status")) >= {
        ("Their example", "suggested"),
        ("My other assistant's", "suggested"),
    }


def test_the_schema_documents_the_routing_example_endpoints():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    base = "/api/v1/captain/accounts/{account_id}/assistants/{assistant_id}/"

    assert {"get"} <= set(paths[f"{base}routing-examples/"])
    assert {"get", "patch"} <= set(paths[f"{base}routing-examples/{{example_id}}/"])
    assert "post" in paths[f"{base}routing-examples/{{example_id}}/accept/"]
    assert "post" in paths[f"{base}routing-examples/{{example_id}}/reject/"]
    assert "202" in paths[f"{base}scenarios/{{scenario_id}}/draft-examples/"]["post"]["responses"]
    parameters = {p["name"] for p in paths[f"{base}routing-examples/"]["get"]["parameters"]}
    assert {"key", "source", "status"} <= parameters
