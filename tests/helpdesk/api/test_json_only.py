"""The REST API reads JSON only. A form or multipart body (which cannot carry a list or an object, so DRF dropped
those fields and a PATCH or an approve went ahead on what was left) is a JSON 415; a JSON body that is not an
object is a 400; neither changes anything. Only the knowledge document upload and a reply's or note's files
take multipart, explicitly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.parsers import MultiPartParser
from rest_framework.test import APIClient
from rest_framework.views import APIView

from captain.knowledge.api.knowledge import DocumentCollectionApi
from captain.knowledge.models import FaqEntry
from helpdesk.api.conversations import ConversationMessagesApi
from helpdesk.api.parsers import BoundedJSONParser
from helpdesk.models import CustomAttributeDefinition, Membership, Team
from tests.factories import AssistantFactory, FaqEntryFactory, MembershipFactory
from tests.support.row_state import database_state

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"

NOT_JSON = [
    pytest.param(b"[]", FORM, id="form-list"),
    pytest.param(b"name=Sales&label=Renamed&question=Changed%3F", FORM, id="form-fields"),
    pytest.param(b"[]", MULTIPART_CONTENT, id="multipart-list"),
    pytest.param(b"3", MULTIPART_CONTENT, id="multipart-scalar"),
    pytest.param(
        encode_multipart(BOUNDARY, {"name": "Sales", "label": "Renamed", "question": "Changed?"}),
        MULTIPART_CONTENT,
        id="multipart-fields",
    ),
    pytest.param(b'{"name": "Sales"}', "text/plain", id="json-as-text"),
]

NOT_AN_OBJECT = [
    pytest.param(b"[]", id="list"),
    pytest.param(b'[{"name": "Sales"}]', id="list-of-objects"),
    pytest.param(b"3", id="number"),
    pytest.param(b'"Sales"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(b"true", id="boolean"),
]


@dataclass(frozen=True)
class Write:
    method: str
    url: str
    unchanged: Callable[[], Any]
    """What the write would have changed, read back after the request."""


@pytest.fixture
def admin() -> Membership:
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def writes(admin) -> dict[str, Write]:
    """One write per operation the issue named (teams, attribute definitions, FAQ approve), with a row to change."""
    account = admin.account_id
    team = Team.objects.create(account_id=account, name="Support")
    definition = CustomAttributeDefinition.objects.create(
        account_id=account, applies_to="contact", key="plan", label="Plan"
    )
    assistant = AssistantFactory(account=admin.account)
    entry = FaqEntryFactory(assistant=assistant, question="Shipping?", status=FaqEntry.Status.PENDING)
    faq = f"/api/v1/captain/accounts/{account}/assistants/{assistant.id}/faq/{entry.id}/"

    def faq_state() -> tuple[str, str]:
        entry.refresh_from_db()
        return entry.status, entry.question

    return {
        "team-create": Write("POST", f"/api/v1/accounts/{account}/teams/", lambda: Team.objects.count()),
        "team-patch": Write(
            "PATCH",
            f"/api/v1/accounts/{account}/teams/{team.id}/",
            lambda: Team.objects.values_list("name", "description", "auto_assign").get(pk=team.pk),
        ),
        "definition-patch": Write(
            "PATCH",
            f"/api/v1/accounts/{account}/attribute-definitions/{definition.id}/",
            lambda: CustomAttributeDefinition.objects.values_list("label", "kind").get(pk=definition.pk),
        ),
        "faq-approve": Write("POST", f"{faq}approve/", faq_state),
    }


def _send(admin: Membership, write: Write, body: bytes, content_type: str):
    api = APIClient()
    api.force_authenticate(admin.user)
    return api.generic(write.method, write.url, body, content_type=content_type)


@pytest.mark.parametrize("name", ["team-create", "team-patch", "definition-patch", "faq-approve"])
@pytest.mark.parametrize(("body", "content_type"), NOT_JSON)
def test_a_body_that_is_not_json_is_a_json_415_and_changes_nothing(admin, writes, name, body, content_type):
    write = writes[name]
    before, rows = write.unchanged(), database_state()

    response = _send(admin, write, body, content_type)

    assert response.status_code == 415, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert "Unsupported media type" in response.json()["detail"]
    assert (write.unchanged(), database_state()) == (before, rows)


@pytest.mark.parametrize("name", ["team-create", "team-patch", "definition-patch", "faq-approve"])
@pytest.mark.parametrize("body", NOT_AN_OBJECT)
def test_a_json_body_that_is_not_an_object_is_a_400_and_changes_nothing(admin, writes, name, body):
    write = writes[name]
    before, rows = write.unchanged(), database_state()

    response = _send(admin, write, body, "application/json")

    assert response.status_code == 400, response.content[:300]
    assert (write.unchanged(), database_state()) == (before, rows)


def _api_views(patterns, prefix: str = ""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _api_views(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
            view_class = getattr(pattern.callback, "view_class", None)
            if isinstance(view_class, type) and issubclass(view_class, APIView):
                yield route, view_class


def test_every_api_operation_parses_json_only_but_the_uploads():
    parsers = {
        view_class.__name__: [type(parser) for parser in view_class().get_parsers()]
        for _, view_class in _api_views(get_resolver().url_patterns)
    }

    assert len(parsers) > 40  # the walk found the API
    assert parsers.pop(DocumentCollectionApi.__name__) == [BoundedJSONParser, MultiPartParser]
    assert parsers.pop(ConversationMessagesApi.__name__) == [BoundedJSONParser, MultiPartParser]  # files
    assert {name: kinds for name, kinds in parsers.items() if kinds != [BoundedJSONParser]} == {}
