"""Save time: the admin and the API refuse a template that would fail for some customer, naming the path, and
accept every declared variable. Both go through the write services (`captain.assistants.services.builder.template_errors`)."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from captain.assistants.models import Assistant, Scenario
from captain.prompts import PROMPT_VARIABLES
from helpdesk.models import Membership
from tests.captain.test_admin import ADD_URL, new_assistant_data
from tests.factories import AssistantFactory, MembershipFactory
from tests.helpdesk.test_admin import staff_user

pytestmark = pytest.mark.django_db

AVAILABLE = "available: contact.name, assistant.name, assistant.product_name"
ELSE_BRANCH = "{% if contact.name == 'x' %}ok{% else %}{{ contact.missing }}{% endif %}"
METHOD = "{{ contact.name.format }}"
REFUSED = [
    (ELSE_BRANCH, f"unknown variable 'contact.missing'; {AVAILABLE}"),
    (
        METHOD,
        "unknown variable 'contact.name.format': contact.name is a string and has no attribute 'format'",
    ),
]
ACCEPTED = [
    "{{ contact.name | default('there') }}",
    "{% if contact.name %}Hi {{ contact.name }}{% endif %}",
    "{{ contact['name'] }}",
    " ".join(f"{{{{ {variable.path} }}}}" for variable in PROMPT_VARIABLES),
]


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def api(admin):
    client = APIClient()
    client.force_authenticate(admin.user)
    return client


def assistants_url(account_id: int) -> str:
    return f"/api/v1/captain/accounts/{account_id}/assistants/"


def scenarios_url(assistant: Assistant) -> str:
    return f"{assistants_url(assistant.account_id)}{assistant.id}/scenarios/"


@pytest.mark.parametrize(("template", "message"), REFUSED)
def test_api_refuses_assistant_instructions(api, admin, template, message):
    response = api.post(
        assistants_url(admin.account_id), {"name": "A", "instructions": template}, format="json"
    )

    assert response.status_code == 400
    assert message in str(response.data["instructions"])
    assert not Assistant.objects.exists()


@pytest.mark.parametrize(("template", "message"), REFUSED)
def test_api_refuses_scenario_instruction(api, admin, template, message):
    assistant = AssistantFactory(account=admin.account)

    response = api.post(
        scenarios_url(assistant),
        {"title": "Refunds", "description": "Refund questions", "instruction": template},
        format="json",
    )

    assert response.status_code == 400
    assert message in str(response.data["instruction"])
    assert not Scenario.objects.exists()


@pytest.mark.parametrize("template", ACCEPTED)
def test_api_accepts_declared_variables(api, admin, template):
    response = api.post(
        assistants_url(admin.account_id), {"name": "A", "instructions": template}, format="json"
    )
    assert response.status_code == 201, response.data
    assistant = Assistant.objects.get()

    response = api.post(
        scenarios_url(assistant),
        {"title": "Refunds", "description": "Refund questions", "instruction": template},
        format="json",
    )
    assert response.status_code == 201, response.data


@pytest.fixture
def admin_client():
    membership = MembershipFactory(user=staff_user(), role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(membership.user)
    return client, membership.account


@pytest.mark.parametrize(("template", "message"), REFUSED)
def test_admin_refuses_assistant_instructions(admin_client, template, message):
    client, account = admin_client

    response = client.post(ADD_URL, new_assistant_data(account, instructions=template))

    assert response.status_code == 200  # the form again, with the error
    assert message in " ".join(response.context["adminform"].form.errors["instructions"])
    assert not Assistant.objects.exists()


@pytest.mark.parametrize(("template", "message"), REFUSED)
def test_admin_refuses_scenario_instruction(admin_client, template, message):
    client, account = admin_client

    response = client.post(
        ADD_URL, new_assistant_data(account, scenarios=[{"title": "Refunds", "instruction": template}])
    )

    assert response.status_code == 200
    (scenarios,) = [i for i in response.context["inline_admin_formsets"] if i.formset.prefix == "scenarios"]
    assert message in " ".join(scenarios.formset.forms[0].errors["instruction"])
    assert not Assistant.objects.exists()


@pytest.mark.parametrize("template", ACCEPTED)
def test_admin_accepts_declared_variables(admin_client, template):
    client, account = admin_client

    response = client.post(
        ADD_URL,
        new_assistant_data(
            account, instructions=template, scenarios=[{"title": "Refunds", "instruction": template}]
        ),
    )

    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert Scenario.objects.get().instruction == template
