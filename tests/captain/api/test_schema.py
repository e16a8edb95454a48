"""The OpenAPI schema of the REST API is served and valid."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
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
    assert (
        "/api/v1/captain/accounts/{account_id}/assistants/{assistant_id}/documents/{document_id}/resync/"
        in paths
    )


@pytest.mark.django_db
def test_api_docs_page_loads_its_assets_from_this_server_not_a_cdn(client):
    """Swagger UI comes from drf-spectacular-sidecar's static files: the docs work with no internet."""
    page = client.get("/api/docs/")

    assert page.status_code == 200
    html = page.content.decode()
    asset_urls = re.findall(r'(?:src|href)="([^"]+)"', html) + re.findall(
        r'"([^"]*swagger-ui[^"]*\.(?:js|css))"', html
    )
    assert any("swagger-ui-bundle.js" in url for url in asset_urls), html
    external = [url for url in asset_urls if url.startswith(("http:", "https:", "//"))]
    assert external == []
    bundle = next(url for url in asset_urls if "swagger-ui-bundle.js" in url)
    assert finders.find(bundle.removeprefix(settings.STATIC_URL).removeprefix("/static/"))
