"""The conversation page's attributes panel: the contact's and the conversation's custom attributes and the AI's
memory, shown and edited by any member of the account; a bad value shows the error and saves nothing."""

from __future__ import annotations

import pytest

from captain.memory.models import MemoryValue, MemoryVariable
from captain.memory.services.memory import memory_write
from helpdesk.models import Contact, Conversation, PersonSettings
from helpdesk.services.attributes import attribute_definition_create, custom_attributes_update
from tests.factories import AssistantFactory, AssistantInboxFactory, ConversationFactory

from .conftest import count_queries

pytestmark = pytest.mark.django_db


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


@pytest.fixture
def conversation(team):
    return ConversationFactory(contact_inbox__inbox=team.inbox, status="open")


@pytest.fixture
def definitions(team):
    account_id = team.account.id
    attribute_definition_create(
        account_id=account_id,
        applies_to="contact",
        key="plan",
        label="Plan",
        kind="list",
        choices=["Free", "Pro"],
    )
    attribute_definition_create(
        account_id=account_id, applies_to="contact", key="vip", label="VIP", kind="boolean"
    )
    attribute_definition_create(
        account_id=account_id, applies_to="contact", key="orders", label="Orders", kind="number"
    )
    attribute_definition_create(
        account_id=account_id, applies_to="conversation", key="order_number", label="Order number"
    )
    attribute_definition_create(
        account_id=account_id, applies_to="conversation", key="due", label="Due", kind="date"
    )


@pytest.fixture
def assistant(team):
    assistant = AssistantFactory(account=team.account, name="Captain")
    AssistantInboxFactory(assistant=assistant, inbox=team.inbox)

    def declare(name, **fields):
        MemoryVariable.objects.create(assistant=assistant, name=name, description=f"The {name}.", **fields)

    declare("city", default="Berlin")
    declare("ticket", scope=MemoryVariable.Scope.CONVERSATION)
    declare("plan_tier", kind=MemoryVariable.Kind.CHOICE, choices=["basic", "gold"])
    declare("risk_score", kind=MemoryVariable.Kind.NUMBER, writable_by_agents=False)
    return assistant


def flashes(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_panel_shows_both_kinds_of_attributes_with_their_values(
    agent_client, team, conversation, definitions
):
    custom_attributes_update(target=conversation.contact, changes={"plan": "Pro", "vip": True})
    custom_attributes_update(target=conversation, changes={"order_number": "A-17"})

    html = agent_client.get(page(team, conversation)).content.decode()

    assert "Customer attributes" in html and "Conversation attributes" in html
    assert '<option value="Pro" selected>Pro</option>' in html
    assert '<option value="true" selected>Yes</option>' in html
    assert 'name="attr_order_number" id="attr-conversation-order_number" value="A-17"' in html
    assert html.count('name="csrfmiddlewaretoken"') >= 3
    assert "AI memory" not in html  # no assistant answers this inbox


def test_agent_edits_contact_attributes_round_trip(agent_client, team, conversation, definitions):
    response = agent_client.post(
        page(team, conversation, "attributes/contact/"),
        {"attr_plan": "Free", "attr_vip": "false", "attr_orders": "3"},
        follow=True,
    )

    assert Contact.objects.get(pk=conversation.contact_id).custom_attributes == {
        "plan": "Free",
        "vip": False,
        "orders": 3,
    }
    assert "Contact attributes saved." in flashes(response)
    html = response.content.decode()
    assert '<option value="Free" selected>Free</option>' in html
    assert 'name="attr_orders" id="attr-contact-orders" value="3"' in html


def test_emptying_a_field_removes_the_value_and_unchanged_fields_are_not_rewritten(
    agent_client, team, conversation, definitions
):
    custom_attributes_update(target=conversation, changes={"order_number": "A-17", "due": "2026-12-01"})
    # A value stored before its definition changed kind stays as it is while nobody edits it.
    Conversation.objects.filter(pk=conversation.pk).update(
        custom_attributes={"order_number": "A-17", "due": "soon"}
    )

    agent_client.post(
        page(team, conversation, "attributes/conversation/"), {"attr_order_number": "", "attr_due": "soon"}
    )

    assert Conversation.objects.get(pk=conversation.pk).custom_attributes == {"due": "soon"}


def test_bad_value_shows_the_error_and_saves_nothing(agent_client, team, conversation, definitions):
    custom_attributes_update(target=conversation, changes={"order_number": "A-17"})

    response = agent_client.post(
        page(team, conversation, "attributes/conversation/"),
        {"attr_order_number": "B-2", "attr_due": "next friday"},
        follow=True,
    )

    assert Conversation.objects.get(pk=conversation.pk).custom_attributes == {"order_number": "A-17"}
    [message] = flashes(response)
    assert message.startswith("Nothing saved:")
    assert "'due' expects a date as YYYY-MM-DD" in message
    assert "next friday" in response.content.decode()  # the error is on the page, escaped


def test_other_account_cannot_post_and_unknown_target_is_404(
    client, team, other_team, conversation, definitions
):
    client.force_login(other_team.admin)
    foreign = client.post(page(team, conversation, "attributes/contact/"), {"attr_plan": "Pro"})
    client.force_login(team.agent)
    unknown = client.post(page(team, conversation, "attributes/inbox/"), {"attr_plan": "Pro"})
    read = client.get(page(team, conversation, "attributes/contact/"))

    assert (foreign.status_code, unknown.status_code, read.status_code) == (404, 404, 405)
    assert Contact.objects.get(pk=conversation.contact_id).custom_attributes == {}


def test_memory_panel_shows_values_and_only_agent_writable_fields(
    agent_client, team, conversation, assistant
):
    memory_write(assistant=assistant, conversation=conversation, name="risk_score", value=7, writer="ai")

    html = agent_client.get(page(team, conversation)).content.decode()

    assert "AI memory" in html
    assert 'name="mem_city" id="mem-city" value="Berlin"' in html  # the default, until something is stored
    assert 'name="mem_ticket"' in html
    assert 'name="mem_risk_score"' not in html
    assert '7 <span class="muted">(not editable by agents)</span>' in html


def test_agent_edits_memory_round_trip_as_the_agent_writer(agent_client, team, conversation, assistant):
    response = agent_client.post(
        page(team, conversation, "memory/"),
        {"mem_city": "Berlin", "mem_ticket": "T-9", "mem_plan_tier": "gold"},
        follow=True,
    )

    rows = {v.variable.name: v for v in MemoryValue.objects.select_related("variable")}
    assert set(rows) == {"ticket", "plan_tier"}  # the unchanged default is not stored
    assert (rows["ticket"].value, rows["ticket"].written_by) == ("T-9", "agent")
    assert rows["ticket"].conversation_id == conversation.id
    assert rows["plan_tier"].contact_id == conversation.contact_id
    assert "Memory saved." in flashes(response)
    assert 'name="mem_ticket" id="mem-ticket" value="T-9"' in response.content.decode()


def test_memory_refusals_show_the_error_and_save_nothing(agent_client, team, conversation, assistant):
    bad_choice = agent_client.post(
        page(team, conversation, "memory/"), {"mem_ticket": "T-9", "mem_plan_tier": "platinum"}, follow=True
    )
    not_for_agents = agent_client.post(
        page(team, conversation, "memory/"), {"mem_ticket": "T-9", "mem_risk_score": "1"}, follow=True
    )

    assert not MemoryValue.objects.exists()
    assert "must be one of: basic, gold" in flashes(bad_choice)[0]
    assert "'risk_score' may not be written by A support agent" in flashes(not_for_agents)[0]


def test_memory_clears_with_an_empty_field(agent_client, team, conversation, assistant):
    memory_write(assistant=assistant, conversation=conversation, name="ticket", value="T-1", writer="ai")

    agent_client.post(page(team, conversation, "memory/"), {"mem_ticket": ""})

    assert not MemoryValue.objects.exists()


def test_memory_of_another_account_is_404(client, team, other_team, conversation, assistant):
    client.force_login(other_team.admin)

    response = client.post(page(team, conversation, "memory/"), {"mem_ticket": "leak"})

    assert response.status_code == 404
    assert not MemoryValue.objects.exists()


# The conversation page's own bound (tests/dashboard/test_conversation.py) plus: definitions (1) and the inbox's
# assistant (1); with an assistant, its variables and their values (2) and its re-route form's reads; +2 for the
# contact panel (channel ids, past conversations) and the page frame's notifications bell and availability; +3
# for the workspace's list beside the conversation; +1 for the side panel's team choice; +1 for its macros.
MAX_PAGE_QUERIES = {False: 22, True: 27}


@pytest.mark.parametrize("with_assistant", [False, True])
def test_panel_queries_do_not_grow_with_attributes_or_memory(
    agent_client, team, conversation, definitions, request, with_assistant
):
    agent_client.get(page(team, conversation))  # warm the session
    if with_assistant:
        assistant = request.getfixturevalue("assistant")
    small, _ = count_queries(lambda: agent_client.get(page(team, conversation)))
    for n in range(8):
        attribute_definition_create(
            account_id=team.account.id, applies_to="contact", key=f"extra_{n}", label="X"
        )
        custom_attributes_update(target=conversation.contact, changes={f"extra_{n}": f"value {n}"})
        if with_assistant:
            MemoryVariable.objects.create(assistant=assistant, name=f"extra_{n}", description="x")
            memory_write(
                assistant=assistant, conversation=conversation, name=f"extra_{n}", value="v", writer="ai"
            )

    large, response = count_queries(lambda: agent_client.get(page(team, conversation)))

    assert response.status_code == 200
    assert "value 7" in response.content.decode()
    assert small == large <= MAX_PAGE_QUERIES[with_assistant]


def test_a_chinese_agent_is_told_about_memory_in_chinese(agent_client, team, conversation, assistant):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    saved = agent_client.post(page(team, conversation, "memory/"), {"mem_ticket": "T-9"}, follow=True)
    unchanged = agent_client.post(page(team, conversation, "memory/"), {"mem_ticket": "T-9"}, follow=True)
    refused = agent_client.post(
        page(team, conversation, "memory/"), {"mem_plan_tier": "platinum"}, follow=True
    )
    assert flashes(saved) == ["记忆已保存。"]
    assert flashes(unchanged) == ["记忆未更改。"]
    assert flashes(refused)[0].startswith("未保存任何内容：")
