"""The OpenAPI schema of the REST API is served and valid."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient


@pytest.mark.django_db
def test_schema_is_served():
    response = APIClient().get("/api/schema/", {"format": "json"})

    assert response.status_code == 200


def test_schema_is_valid_and_covers_the_api():
    schema = SchemaGenerator().get_schema(request=None, public=True)

    validate_schema(schema)
    paths = schema["paths"]
    assert "/api/v1/accounts/{account_id}/conversations/{conversation_id}/messages/" in paths
    assert "/api/v1/captain/accounts/{account_id}/assistants/{assistant_id}/scenarios/{scenario_id}/" in paths
    assert "/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/runs/" in paths
