"""The OpenAPI schema tells the truth: each rule is checked twice, in the generated schema and by a real request
whose answer is validated against what the schema documents (tests/support/openapi.py)."""

from __future__ import annotations

import pytest
from django.core.cache import cache as django_cache
from django.utils import timezone
from openapi_spec_validator import validate as validate_openapi
from rest_framework import serializers
from rest_framework.test import APIClient
from rest_framework.throttling import UserRateThrottle

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.routing.models import RoutingExample
from helpdesk.api.exceptions import api_exception_handler
from helpdesk.models import CannedResponse, Membership, Notification, Team, TeamMember
from tests.factories import AssistantFactory, AssistantInboxFactory, ConversationFactory, MembershipFactory
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


# ---- error responses -------------------------------------------------------------------------------------------


def operations():
    for path, item in api_schema()["paths"].items():
        for method, op in item.items():
            if method in {"get", "put", "patch", "post", "delete"}:
                yield path, method, op


def _error_ref(op: dict, code: str) -> str:
    return op["responses"][code]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]


def test_every_operation_documents_401_and_429_with_the_shared_error_body():
    for path, method, op in operations():
        assert _error_ref(op, "401") == "ErrorResponse", (method, path)
        assert _error_ref(op, "429") == "ErrorResponse", (method, path)


def test_every_operation_with_an_id_in_its_path_documents_404():
    for path, method, op in operations():
        if "{" in path:
            assert _error_ref(op, "404") == "ErrorResponse", (method, path)


def test_every_operation_with_a_body_documents_400_and_415():
    for path, method, op in operations():
        if "requestBody" in op:
            assert _error_ref(op, "400") == "ValidationErrorResponse", (method, path)
            assert _error_ref(op, "415") == "ErrorResponse", (method, path)


@pytest.mark.parametrize(
    ("path", "method", "documented", "not_documented"),
    [
        # Any member reads; a non-member is 404, never 403; no filters, nothing to refuse.
        (f"{ACCOUNT}/teams/", "get", {"200", "401", "404", "429"}, {"400", "403", "405", "415"}),
        # Members write (403 only for a failed CSRF check under session authentication); `?q=` is validated (400).
        (f"{ACCOUNT}/canned-responses/", "get", {"400"}, {"403", "415"}),
        (f"{ACCOUNT}/canned-responses/", "post", {"400", "403", "415"}, set()),
        # Administrators only, and the dates are checked.
        (f"{ACCOUNT}/reports/", "get", {"400", "403"}, {"415"}),
        # The schema itself: anyone may read it; an unknown ?format= is 404.
        ("/api/schema/", "get", {"401", "404", "429"}, {"400", "403", "415"}),
    ],
)
def test_operations_document_only_the_errors_they_can_answer(path, method, documented, not_documented):
    codes = set(operation(path, method)["responses"])

    assert documented <= codes
    assert not (not_documented & codes)


@pytest.fixture
def agent(admin):
    return MembershipFactory(account=admin.account, role=Membership.Role.AGENT)


@pytest.fixture
def no_throttle_leftovers():
    django_cache.clear()
    yield
    django_cache.clear()


@pytest.mark.django_db
def test_error_answers_are_the_documented_error_bodies(admin, agent, no_throttle_leftovers):
    stranger = MembershipFactory(role=Membership.Role.ADMIN)
    canned = f"/api/v1/accounts/{admin.account_id}/canned-responses/"
    one = CannedResponse.objects.create(account_id=admin.account_id, short_code="hi", content="Hello")
    answers = {
        401: (APIClient().get(canned), ""),
        # Agents add and change canned responses; deleting one is for administrators.
        403: (client_of(agent).delete(f"{canned}{one.pk}/"), "{canned_id}/"),
        404: (client_of(stranger).get(canned), ""),
        415: (client_of(admin).post(canned, "short_code=hi", content_type="text/plain"), ""),
    }
    for code, (response, tail) in answers.items():
        assert response.status_code == code, response.content
        assert_documented(
            response, path=f"{ACCOUNT}/canned-responses/{tail}", method=response.request["REQUEST_METHOD"]
        )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"short_code": "two words", "content": ""}', "application/json"),  # per field
        ('{"short_code": ', "application/json"),  # not JSON: {"detail": "..."}
        ("[1, 2]", "application/json"),  # not an object: non_field_errors
    ],
)
def test_a_refused_body_answers_the_documented_400(admin, body, content_type, no_throttle_leftovers):
    response = client_of(admin).generic(
        "POST", f"/api/v1/accounts/{admin.account_id}/canned-responses/", body, content_type=content_type
    )

    assert response.status_code == 400
    assert_documented(response, path=f"{ACCOUNT}/canned-responses/", method="post")


@pytest.mark.django_db
def test_a_refused_query_answers_the_documented_400(admin, no_throttle_leftovers):
    response = client_of(admin).get(f"/api/v1/accounts/{admin.account_id}/reports/", {"start": "yesterday"})

    assert response.status_code == 400
    assert_documented(response, path=f"{ACCOUNT}/reports/", method="get")


@pytest.mark.django_db
def test_a_throttled_request_answers_the_documented_429(admin, monkeypatch, no_throttle_leftovers):
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "1/min", "anon": "1/min"})
    api = client_of(admin)
    url = f"/api/v1/accounts/{admin.account_id}/teams/"

    assert api.get(url).status_code == 200
    response = api.get(url)

    assert response.status_code == 429
    assert_documented(response, path=f"{ACCOUNT}/teams/", method="get")


def test_a_validation_error_raised_as_a_list_still_answers_an_object_of_fields():
    response = api_exception_handler(serializers.ValidationError("Not like this."), {})

    assert response is not None and response.data == {"non_field_errors": ["Not like this."]}


@pytest.mark.parametrize(
    ("path", "method"),
    [
        (f"{CAPTAIN}/assistants/{{assistant_id}}/documents/{{document_id}}/faq-drafts/", "post"),
        (f"{CAPTAIN}/assistants/{{assistant_id}}/documents/{{document_id}}/resync/", "post"),
        (f"{CAPTAIN}/assistants/{{assistant_id}}/scenarios/{{scenario_id}}/draft-examples/", "post"),
        (f"{CAPTAIN}/conversations/{{conversation_id}}/faq-drafts/", "post"),
        (f"{CAPTAIN}/conversations/{{conversation_id}}/memory/{{name}}/", "delete"),
        (f"{CAPTAIN}/model-endpoints/{{endpoint_id}}/", "delete"),
    ],
)
def test_operations_without_a_body_that_refuse_their_objects_state_document_400(path, method):
    assert _error_ref(operation(path, method), "400") == "ValidationErrorResponse"


@pytest.mark.django_db
def test_clearing_an_undeclared_memory_name_answers_the_documented_400(admin, no_throttle_leftovers):
    assistant = AssistantFactory(account=admin.account)
    conversation = ConversationFactory(contact_inbox__inbox=AssistantInboxFactory(assistant=assistant).inbox)

    response = client_of(admin).delete(
        f"/api/v1/captain/accounts/{admin.account_id}/conversations/{conversation.pk}/memory/nobody/"
    )

    assert response.status_code == 400
    assert_documented(
        response, path=f"{CAPTAIN}/conversations/{{conversation_id}}/memory/{{name}}/", method="delete"
    )


@pytest.mark.parametrize(("name", "field"), [("KnowledgeDocument", "source_url"), ("KnowledgeChunk", "url")])
def test_a_url_an_upload_has_none_of_is_documented_as_possibly_blank(name, field):
    schema = component(name)["properties"][field]

    assert _allows(schema, "")
    assert _allows(schema, "https://shop.example/returns")
    assert not _allows(schema, "returns")


@pytest.mark.django_db
def test_an_uploaded_document_and_its_chunks_answer_their_documented_shape(admin, no_throttle_leftovers):
    assistant = AssistantFactory(account=admin.account)
    document = KnowledgeDocument.objects.create(
        account=admin.account, assistant=assistant, kind=KnowledgeDocument.Kind.UPLOAD, title="returns.txt"
    )
    KnowledgeChunk.objects.create(
        account=admin.account,
        assistant=assistant,
        document=document,
        ordinal=0,
        text="Returns: 30 days.",
        embedding=b"",
    )
    documents = f"{CAPTAIN}/assistants/{{assistant_id}}/documents/"
    base = f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.pk}/documents/"

    for path, url in [
        (f"{documents}{{document_id}}/", f"{base}{document.pk}/"),
        (f"{documents}{{document_id}}/chunks/", f"{base}{document.pk}/chunks/"),
    ]:
        response = client_of(admin).get(url)
        assert response.status_code == 200
        assert_documented(response, path=path, method="get")
