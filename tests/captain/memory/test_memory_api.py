"""Memory over the REST API: variables declared by administrators, values of a conversation written as the API
writer (only where the declaration allows it, all-or-nothing), everything scoped to the caller's account."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.memory.models import MemoryValue, MemoryVariable
from captain.memory.services.memory import memory_write
from helpdesk.models import Membership
from tests.factories import AssistantFactory, AssistantInboxFactory, ConversationFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def agent(admin):
    return MembershipFactory(account=admin.account, role=Membership.Role.AGENT)


@pytest.fixture
def assistant(admin):
    return AssistantFactory(account=admin.account)


@pytest.fixture
def conversation(assistant):
    link = AssistantInboxFactory(assistant=assistant)
    return ConversationFactory(contact_inbox__inbox=link.inbox)


@pytest.fixture
def variables(assistant):
    def declare(name, **fields):
        return MemoryVariable.objects.create(
            assistant=assistant, name=name, description=f"The {name}.", **fields
        )

    return {
        "order_number": declare("order_number", scope=MemoryVariable.Scope.CONVERSATION),
        "city": declare("city", default="Berlin"),
        "plan": declare("plan", kind=MemoryVariable.Kind.CHOICE, choices=["free", "pro"]),
        "risk_score": declare("risk_score", kind=MemoryVariable.Kind.NUMBER, writable_by_api=False),
        "shoe_size": declare("shoe_size", kind=MemoryVariable.Kind.NUMBER, writable_by_agents=False),
    }


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def variables_url(assistant, suffix=""):
    return (
        f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/memory-variables/{suffix}"
    )


def memory_url(account_id, conversation_id, suffix=""):
    return f"/api/v1/captain/accounts/{account_id}/conversations/{conversation_id}/memory/{suffix}"


def stored(conversation) -> dict:
    rows = MemoryValue.objects.filter(account_id=conversation.account_id).select_related("variable")
    return {row.variable.name: row.value for row in rows}


# ---- declarations ------------------------------------------------------------------------------------------


def test_admin_declares_a_choice_variable(admin, assistant):
    response = client_of(admin).post(
        variables_url(assistant),
        {
            "name": "plan",
            "description": "The plan.",
            "kind": "choice",
            "choices": ["Free", "Pro"],
            "default": "pro",
        },
        format="json",
    )

    assert response.status_code == 201, response.data
    assert response.data["choices"] == ["Free", "Pro"]
    assert response.data["default"] == "Pro"
    assert MemoryVariable.objects.get(assistant=assistant).name == "plan"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Plan!", "description": "x"}, "name"),
        ({"name": "plan", "description": "x", "kind": "choice"}, "choices"),
        ({"name": "plan", "description": "x", "kind": "number", "default": "lots"}, "default"),
        ({"name": "plan", "description": "x", "choices": ["a"]}, "choices"),
        ({"name": "city", "description": "x"}, "name"),  # already declared
    ],
)
def test_bad_declaration_is_400_naming_the_field(admin, assistant, variables, body, field):
    response = client_of(admin).post(variables_url(assistant), body, format="json")

    assert response.status_code == 400
    assert field in response.data
    assert MemoryVariable.objects.filter(assistant=assistant).count() == len(variables)


def test_admin_changes_and_deletes_a_variable_with_its_values(admin, assistant, conversation, variables):
    api = client_of(admin)
    city = variables["city"]
    memory_write(assistant=assistant, conversation=conversation, name="city", value="Oslo", writer="api")

    changed = api.patch(variables_url(assistant, f"{city.id}/"), {"writable_by_ai": False}, format="json")
    deleted = api.delete(variables_url(assistant, f"{city.id}/"))

    assert changed.status_code == 200, changed.data
    assert changed.data["writable_by_ai"] is False
    assert changed.data["default"] == "Berlin"
    assert deleted.status_code == 204
    assert not MemoryValue.objects.filter(variable_id=city.id).exists()


def test_agent_reads_variables_but_cannot_declare_change_or_delete(agent, assistant, variables):
    api = client_of(agent)
    city = variables["city"]

    listed = api.get(variables_url(assistant))
    created = api.post(variables_url(assistant), {"name": "x", "description": "x"}, format="json")
    changed = api.patch(variables_url(assistant, f"{city.id}/"), {"description": "Hacked"}, format="json")
    deleted = api.delete(variables_url(assistant, f"{city.id}/"))

    assert listed.status_code == 200
    assert [v["name"] for v in listed.data] == list(variables)
    assert (created.status_code, changed.status_code, deleted.status_code) == (403, 403, 403)
    city.refresh_from_db()
    assert city.description == "The city."


# ---- values ------------------------------------------------------------------------------------------------


def test_memory_lists_every_variable_with_its_source(agent, conversation, variables, assistant):
    memory_write(assistant=assistant, conversation=conversation, name="plan", value="pro", writer="ai")

    response = client_of(agent).get(memory_url(agent.account_id, conversation.id))

    assert response.status_code == 200
    assert response.data["assistant"] == assistant.id
    entries = {e["name"]: e for e in response.data["memory"]}
    assert list(entries) == list(variables)
    assert (entries["plan"]["value"], entries["plan"]["source"], entries["plan"]["written_by"]) == (
        "pro",
        "stored",
        "ai",
    )
    assert (entries["city"]["value"], entries["city"]["source"]) == ("Berlin", "default")
    assert (entries["order_number"]["value"], entries["order_number"]["source"]) == (None, "unset")


def test_patch_writes_as_the_api_and_null_clears(agent, conversation, variables):
    api = client_of(agent)
    url = memory_url(agent.account_id, conversation.id)

    first = api.patch(url, {"order_number": "A-1", "plan": "PRO", "shoe_size": "42"}, format="json")
    second = api.put(url, {"plan": None}, format="json")

    assert first.status_code == 200, first.data
    assert stored(conversation) == {"order_number": "A-1", "shoe_size": 42}
    assert second.status_code == 200
    entries = {e["name"]: e for e in second.data["memory"]}
    assert entries["order_number"]["written_by"] == "api"
    assert entries["plan"]["source"] == "unset"
    assert MemoryValue.objects.get(variable=variables["order_number"]).conversation_id == conversation.id


def test_variable_the_api_may_not_write_is_refused_and_nothing_is_stored(agent, conversation, variables):
    response = client_of(agent).patch(
        memory_url(agent.account_id, conversation.id), {"order_number": "A-1", "risk_score": 3}, format="json"
    )

    assert response.status_code == 400
    assert "'risk_score' may not be written by The API" in str(response.data["risk_score"][0])
    assert stored(conversation) == {}


def test_undeclared_name_and_wrong_kind_are_refused_all_or_nothing(agent, conversation, variables):
    response = client_of(agent).patch(
        memory_url(agent.account_id, conversation.id),
        {"city": "Oslo", "plan": "gold", "favourite_color": "red"},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.data) == {"plan", "favourite_color"}
    assert "must be one of: free, pro" in str(response.data["plan"][0])
    assert "not a declared memory variable" in str(response.data["favourite_color"][0])
    assert stored(conversation) == {}


def test_delete_clears_one_name_and_refuses_one_the_api_may_not_write(
    agent, conversation, variables, assistant
):
    memory_write(assistant=assistant, conversation=conversation, name="city", value="Oslo", writer="ai")
    memory_write(assistant=assistant, conversation=conversation, name="risk_score", value=9, writer="ai")
    api = client_of(agent)

    cleared = api.delete(memory_url(agent.account_id, conversation.id, "city/"))
    refused = api.delete(memory_url(agent.account_id, conversation.id, "risk_score/"))

    assert cleared.status_code == 204
    assert refused.status_code == 400
    assert stored(conversation) == {"risk_score": 9}


def test_conversation_without_an_assistant_is_404(agent):
    conversation = ConversationFactory(contact_inbox__inbox__account=agent.account)

    assert client_of(agent).get(memory_url(agent.account_id, conversation.id)).status_code == 404


# ---- tenant isolation --------------------------------------------------------------------------------------


def test_another_accounts_assistant_variables_and_memory_are_404_and_untouched(admin):
    b_admin = MembershipFactory(role=Membership.Role.ADMIN)
    b_assistant = AssistantFactory(account=b_admin.account)
    b_link = AssistantInboxFactory(assistant=b_assistant)
    b_conversation = ConversationFactory(contact_inbox__inbox=b_link.inbox)
    b_city = MemoryVariable.objects.create(assistant=b_assistant, name="city", description="The city.")
    memory_write(assistant=b_assistant, conversation=b_conversation, name="city", value="Oslo", writer="ai")
    api = client_of(admin)
    a, b = admin.account_id, b_admin.account_id
    a_variables = f"/api/v1/captain/accounts/{a}/assistants/{b_assistant.id}/memory-variables/"

    attempts = [
        api.get(a_variables),
        api.post(a_variables, {"name": "x", "description": "x"}, format="json"),
        api.patch(f"{a_variables}{b_city.id}/", {"description": "Mine"}, format="json"),
        api.delete(f"{a_variables}{b_city.id}/"),
        api.get(variables_url(b_assistant)),
        api.get(memory_url(a, b_conversation.id)),
        api.patch(memory_url(a, b_conversation.id), {"city": "Paris"}, format="json"),
        api.delete(memory_url(a, b_conversation.id, "city/")),
        api.get(memory_url(b, b_conversation.id)),
        api.patch(memory_url(b, b_conversation.id), {"city": None}, format="json"),
    ]

    assert [r.status_code for r in attempts] == [404] * len(attempts)
    b_city.refresh_from_db()
    assert b_city.description == "The city."
    assert list(MemoryVariable.objects.filter(assistant=b_assistant).values_list("name", flat=True)) == [
        "city"
    ]
    assert stored(b_conversation) == {"city": "Oslo"}


# ---- admin -------------------------------------------------------------------------------------------------


@pytest.fixture
def staff_client(client, admin):
    admin.user.is_staff = True
    admin.user.save(update_fields=["is_staff"])
    client.force_login(admin.user)
    return client


def variable_form(assistant, **fields) -> dict:
    return {
        "assistant": assistant.id if assistant else "",
        "name": "plan",
        "description": "The plan.",
        "kind": "text",
        "choices": "[]",
        "default": "",
        "scope": "contact",
        "writable_by_ai": "on",
        "writable_by_agents": "on",
        "writable_by_api": "on",
        **fields,
    }


def test_admin_declares_a_variable_with_the_apis_rules(staff_client, assistant):
    url = "/admin/captain/memoryvariable/add/"

    refused = staff_client.post(url, variable_form(assistant, kind="number", default="lots"))
    created = staff_client.post(
        url, variable_form(assistant, kind="choice", choices='["Free", "Pro"]', default="pro")
    )

    assert refused.status_code == 200
    assert "must be a number" in str(refused.context["adminform"].form.errors["default"])
    assert created.status_code == 302
    variable = MemoryVariable.objects.get(assistant=assistant)
    assert (variable.kind, variable.choices, variable.default) == ("choice", ["Free", "Pro"], "Pro")


def test_admin_cannot_declare_on_another_accounts_assistant(staff_client, assistant):
    other = AssistantFactory()

    response = staff_client.post("/admin/captain/memoryvariable/add/", variable_form(other))

    assert response.status_code == 200
    assert "assistant" in response.context["adminform"].form.errors
    assert not MemoryVariable.objects.exists()


def test_assistant_page_lists_its_variables_inline(staff_client, assistant, variables):
    html = staff_client.get(f"/admin/captain/assistant/{assistant.id}/change/").content.decode()

    assert 'name="memory_variables-TOTAL_FORMS"' in html
    assert 'value="order_number"' in html


def test_assistant_add_page_declares_variables_inline(staff_client, admin):
    prefix = "memory_variables-0-"
    data = {
        "account": admin.account_id,
        "name": "Captain",
        "response_guidelines": "[]",
        "guardrails": "[]",
        "handoff_message": "A person will answer.",
        "resolution_message": "Bye.",
        "temperature": "0.2",
        "max_turns": "6",
        "knowledge_mode": "inject",
        "when_unknown": "offer",
        **{
            f"{name}-{n}": "0"
            for name in ("scenarios", "faq_entries", "shortcuts")
            for n in ("TOTAL_FORMS", "INITIAL_FORMS")
        },
        "memory_variables-TOTAL_FORMS": "1",
        "memory_variables-INITIAL_FORMS": "0",
        **{
            f"{prefix}{k}": v
            for k, v in variable_form(None, kind="boolean", default="yes").items()
            if k != "assistant"
        },
    }

    response = staff_client.post("/admin/captain/assistant/add/", data)

    assert response.status_code == 302, response.context and [
        f.errors for f in response.context["inline_admin_formsets"]
    ]
    variable = MemoryVariable.objects.get(assistant__account=admin.account)
    assert (variable.name, variable.kind, variable.default) == ("plan", "boolean", "true")
