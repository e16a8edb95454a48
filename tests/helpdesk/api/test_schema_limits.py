"""The schema states the patterns and limits the server enforces: what it documents as valid is accepted, what it
documents as invalid is refused (each checked in the schema and by a real request)."""

from __future__ import annotations

import re
import unicodedata

import pytest
import regress
from django.core.cache import cache as django_cache
from django.core.validators import validate_unicode_slug
from rest_framework.test import APIClient

from helpdesk.models import Membership
from helpdesk.selectors.reports import MAX_DAYS
from tests.factories import ConversationFactory, MembershipFactory
from tests.support.openapi import api_schema, assert_documented, component, operation, schema_errors

ACCOUNT = "/api/v1/accounts/{account_id}"
SLUGS = [
    ("CannedResponse", "short_code"),
    ("CannedResponseInput", "short_code"),
    ("CannedResponseUpdate", "short_code"),
    ("ConversationLabelInput", "label"),
]
BLANK = ["", " ", "\t\n", "\u3000", "\x1c"]  # "\x1c": whitespace to Python's str.strip(), not to ECMA's \s


@pytest.fixture
def admin():
    django_cache.clear()  # the per-user throttle is not what is tested
    return MembershipFactory(role=Membership.Role.ADMIN)


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def _valid(schema: dict, value) -> bool:
    return schema_errors(schema, value) == []


@pytest.mark.parametrize(("name", "field"), SLUGS)
def test_a_slugs_documented_pattern_accepts_exactly_the_letters_and_digits_the_model_accepts(name, field):
    """ECMA-262's `\\w` (OpenAPI's dialect) is ASCII only; the model's Unicode slug takes any script."""
    pattern = component(name)["properties"][field]["pattern"]
    documented = regress.Regex(pattern, "u")
    model_rule: re.Pattern[str] = validate_unicode_slug.regex

    differ = [
        hex(cp)
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) != "Cs"  # surrogates: no JSON string holds one
        and (documented.find(chr(cp)) is not None) != bool(model_rule.match(chr(cp)))
    ]

    assert differ == []
    assert _valid(component(name)["properties"][field], "réponse-été_2")


@pytest.mark.django_db
def test_a_short_code_in_any_script_is_accepted_as_documented(admin):
    response = client_of(admin).post(
        f"/api/v1/accounts/{admin.account_id}/canned-responses/",
        {"short_code": "réponse-été", "content": "Bonjour !"},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert_documented(response, path=f"{ACCOUNT}/canned-responses/", method="post")
    assert _valid(component("CannedResponseInput")["properties"]["short_code"], "réponse-été")


@pytest.mark.django_db
@pytest.mark.parametrize("short_code", [" refund", "refund ", "two words", "a!"])
def test_a_short_code_the_pattern_refuses_is_refused(admin, short_code):
    assert not _valid(component("CannedResponseInput")["properties"]["short_code"], short_code)

    response = client_of(admin).post(
        f"/api/v1/accounts/{admin.account_id}/canned-responses/",
        {"short_code": short_code, "content": "Hi"},
        format="json",
    )

    assert response.status_code == 400 and "short_code" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("label", [" vip", "vip ", "v i p"])
def test_a_label_the_pattern_refuses_is_refused(admin, label):
    conversation = ConversationFactory(account=admin.account)
    assert not _valid(component("ConversationLabelInput")["properties"]["label"], label)

    response = client_of(admin).post(
        f"/api/v1/accounts/{admin.account_id}/conversations/{conversation.pk}/labels/",
        {"label": label},
        format="json",
    )

    assert response.status_code == 400 and "label" in response.json()


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("CannedResponseInput", "content"),
        ("TeamInput", "name"),
        ("AttributeDefinitionInput", "label"),
        ("MemoryVariableInput", "description"),
        ("PatchedCannedResponseUpdate", "content"),
    ],
)
def test_a_string_that_may_not_be_blank_is_documented_so(name, field):
    schema = component(name)["properties"][field]

    assert schema["minLength"] == 1
    assert [value for value in BLANK if _valid(schema, value)] == []
    assert _valid(schema, " a ")


def test_a_string_that_may_be_blank_is_documented_so():
    assert _valid(component("TeamInput")["properties"]["description"], "")


@pytest.mark.django_db
@pytest.mark.parametrize("content", BLANK)
def test_a_blank_string_is_refused_as_documented(admin, content):
    response = client_of(admin).post(
        f"/api/v1/accounts/{admin.account_id}/canned-responses/",
        {"short_code": "blank", "content": content},
        format="json",
    )

    assert response.status_code == 400 and "content" in response.json()
    assert_documented(response, path=f"{ACCOUNT}/canned-responses/", method="post")


def test_the_reports_range_limit_is_documented():
    parameters = {p["name"]: p for p in operation(f"{ACCOUNT}/reports/", "get")["parameters"]}

    assert f"{MAX_DAYS} days" in parameters["start"]["description"]
    assert f"{MAX_DAYS} days" in parameters["end"]["description"]


@pytest.mark.django_db
def test_a_report_longer_than_the_documented_range_is_refused(admin):
    response = client_of(admin).get(
        f"/api/v1/accounts/{admin.account_id}/reports/", {"start": "2024-01-01", "end": "2025-01-01"}
    )

    assert response.status_code == 400 and f"{MAX_DAYS} days" in str(response.json())
    assert_documented(response, path=f"{ACCOUNT}/reports/", method="get")


@pytest.mark.parametrize(
    ("path", "method", "limit"),
    [
        ("/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/memory/", "patch", 100),
        ("/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/memory/", "put", 100),
    ],
)
def test_the_number_of_names_per_memory_write_is_documented(path, method, limit):
    body = operation(path, method)["requestBody"]["content"]["application/json"]["schema"]

    assert _valid(body, {f"n{i}": "x" for i in range(limit)})
    assert not _valid(body, {f"n{i}": "x" for i in range(limit + 1)})
    assert _valid(body, {"city": None})


@pytest.mark.parametrize("owner", ["contacts/{contact_id}", "conversations/{conversation_id}"])
def test_the_number_of_keys_per_custom_attributes_write_is_documented(owner):
    body = operation(f"{ACCOUNT}/{owner}/custom-attributes/", "patch")["requestBody"]["content"]
    values = body["application/json"]["schema"]

    assert _valid(values, {"custom_attributes": {f"k{i}": 1 for i in range(100)}})
    assert not _valid(values, {"custom_attributes": {f"k{i}": 1 for i in range(101)}})
    # What is stored has no such limit (each write may add keys).
    stored = component("CustomAttributes")["properties"]["custom_attributes"]
    assert _valid(stored, {f"k{i}": 1 for i in range(101)})


@pytest.mark.parametrize(
    ("name", "field", "valid", "invalid"),
    [
        ("AttributeDefinitionInput", "key", "order_id", ["Order", "1st", " order_id", "order-id"]),
        ("MemoryVariableInput", "name", "city", ["City", "_city", "city ", "c" * 65]),
        ("ShortcutInput", "command", "track", ["Track", "track me", " track", "t" * 33]),
        ("ScenarioInput", "key", "refunds_2", ["Refunds", "refunds-2", "refunds "]),
        ("CustomToolInput", "name", "get_order", ["GetOrder", "get order", "get_order "]),
        ("OwnModelEndpointInput", "name", "ours-1.5", [".ours", "our endpoint", " ours"]),
    ],
)
def test_an_identifier_documents_the_pattern_the_server_checks(name, field, valid, invalid):
    schema = component(name)["properties"][field]

    assert _valid(schema, valid)
    assert [value for value in invalid if _valid(schema, value)] == []


@pytest.mark.django_db
@pytest.mark.parametrize("key", [" plan", "Plan", "plan-id"])
def test_an_identifier_the_pattern_refuses_is_refused(admin, key):
    response = client_of(admin).post(
        f"/api/v1/accounts/{admin.account_id}/attribute-definitions/",
        {"applies_to": "contact", "key": key, "label": "Plan"},
        format="json",
    )

    assert response.status_code == 400 and "key" in response.json()
    assert_documented(response, path=f"{ACCOUNT}/attribute-definitions/", method="post")


def _patterns(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            else:
                yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_no_documented_pattern_uses_an_escape_the_dialects_read_differently():
    """`\\w`, `\\d`, `\\s`, `\\b` are Unicode in Python and ASCII (or another set) in ECMA-262; `\\p{..}` is not
    read by Python's `re`, and Schemathesis turns it into Latin letters only."""
    dialect_dependent = re.compile(r"\\[wWdDsSbB]|\\[pP]\{")

    assert [p[:80] for p in _patterns(api_schema()) if dialect_dependent.search(p)] == []
