"""A Python client generated from the live schema by openapi-python-client (the generator a Python integrator
would pick from the package index) works against the real web server: it lists conversations, canned responses
and notifications, and creates a scenario and reads it back.

`--fail-on-warning`: a schema construct the generator cannot express (an operation or a model it skips) fails
the test, not only a call. The client is built with `raise_on_unexpected_status`, so an answer whose status the
schema does not document is an error, and every body is parsed into the generated models, so one that does not
match its documented shape (a bare list where a page is documented, a missing or mistyped field) fails too.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.demo_api import DemoApi

PACKAGE = "helpdesk_api_client"


def _generator() -> str:
    found = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    assert found, "openapi-python-client is not installed: scripts/setup --dev installs requirements-dev.txt"
    return found


@pytest.fixture(scope="module")
def generated(demo_api: DemoApi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The client package generated from the server's /api/schema/, importable for this module's tests."""
    where = tmp_path_factory.mktemp("generated-client")
    config = where / "config.yaml"
    # No post hooks: the generator would run `ruff` over the package, which says nothing about the client.
    config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")
    run = subprocess.run(
        [
            _generator(),
            "generate",
            "--url",
            f"{demo_api.schema_url}?format=json",
            "--meta",
            "none",
            "--output-path",
            str(where / PACKAGE),
            "--config",
            str(config),
            "--fail-on-warning",
        ],
        cwd=where,
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def operation(name: str) -> ModuleType:
    """One generated operation module (named after the schema's operationId)."""
    return importlib.import_module(f"{PACKAGE}.api.v1.{name}")


def client_for(generated: ModuleType, api: DemoApi, role: str) -> Any:
    return generated.AuthenticatedClient(
        base_url=api.url, token=api.tokens[role], prefix="Token", raise_on_unexpected_status=True
    )


def test_the_generated_client_lists_conversations_canned_responses_and_notifications(
    generated: ModuleType, demo_api: DemoApi
) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    with client_for(generated, demo_api, "agent") as agent:
        conversations = operation("v1_accounts_conversations_list").sync(demo_api.account_id, client=agent)
        canned = operation("v1_accounts_canned_responses_list").sync(demo_api.account_id, client=agent)
        notifications = operation("v1_accounts_notifications_list").sync(demo_api.account_id, client=agent)

    assert isinstance(conversations, models.PaginatedConversationList), conversations
    assert demo_api.conversation_id in [conversation.id for conversation in conversations.results]
    assert conversations.count == len(conversations.results) == 2  # the two customers of the demo_api fixture
    assert isinstance(canned, models.PaginatedCannedResponseList), canned
    assert "refunds-keep" in {response.short_code for response in canned.results}
    assert isinstance(notifications, models.PaginatedNotificationList), notifications
    # The administrator mentioned the agent in a private note (tests/support/demo_api.py seed_objects).
    assert [note.id for note in notifications.results] == [demo_api.notifications["agent"]]
    assert "admin mentioned you" in notifications.results[0].text


def test_the_generated_client_creates_a_scenario_and_reads_it_back(
    generated: ModuleType, demo_api: DemoApi
) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    new = models.ScenarioInput(
        title="Warranty claims",
        description="The customer reports a defect within the two-year warranty.",
        instruction="Ask for the order number and a photo of the defect, then hand over to a person.",
        tools=["faq_lookup"],
    )
    with client_for(generated, demo_api, "admin") as admin:
        created = operation("v1_captain_accounts_assistants_scenarios_create").sync(
            demo_api.account_id, demo_api.assistant_id, client=admin, body=new
        )
        assert isinstance(created, models.Scenario), created
        read = operation("v1_captain_accounts_assistants_scenarios_retrieve").sync(
            demo_api.account_id, demo_api.assistant_id, created.id, client=admin
        )
        listed = operation("v1_captain_accounts_assistants_scenarios_list").sync(
            demo_api.account_id, demo_api.assistant_id, client=admin
        )

    assert isinstance(read, models.Scenario), read
    assert (read.id, read.title, read.description, read.instruction, read.tools) == (
        created.id,
        new.title,
        new.description,
        new.instruction,
        ["faq_lookup"],
    )
    assert read.key == created.key and read.key  # derived from the title on creation
    assert created.id in [scenario.id for scenario in listed.results]
