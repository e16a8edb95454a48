"""Shortcuts where people manage and try them: the inline on the assistant's admin page (the service's errors on
the row) and the playground's shortcut buttons (the form sends `/command value...` as the customer)."""

from __future__ import annotations

import pytest

from captain.actions.models import Shortcut
from captain.actions.services.shortcuts import shortcut_create
from captain.playground.models import PlaygroundRun
from tests.factories import AssistantFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def assistant(team):
    return AssistantFactory(account=team.account)


@pytest.fixture
def staff_client(client, team):
    team.admin.is_staff = True
    team.admin.save()
    client.force_login(team.admin)
    return client


def change_url(assistant) -> str:
    return f"/admin/captain/assistant/{assistant.pk}/change/"


def with_shortcut(data: dict, **row: str) -> dict:
    prefix = "shortcuts"
    data = dict(data)
    data[f"{prefix}-TOTAL_FORMS"] = "1"
    data[f"{prefix}-INITIAL_FORMS"] = "0"
    defaults = {"parameters": "[]", "tool_arguments": "{}", "enabled": "on", "action": "message"}
    data |= {f"{prefix}-0-{k}": v for k, v in {**defaults, **row}.items()}
    return data


def test_admin_inline_adds_a_shortcut_through_the_service(staff_client, assistant):
    data = with_shortcut(
        admin_form_data(staff_client.get(change_url(assistant))),
        command="track",
        description="Track an order",
        parameters='[{"name": "order_id", "description": "Your order number", "required": true}]',
        message_template="Order {order_id} is on its way.",
    )
    response = staff_client.post(change_url(assistant), data)
    assert response.status_code == 302, response.context["inline_admin_formsets"][-1].formset.errors
    shortcut = Shortcut.objects.get(assistant=assistant)
    assert shortcut.command == "track" and shortcut.parameters[0]["name"] == "order_id"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"action": "tool", "tool_name": "set_priority", "tool_arguments": '{"priority": "high"}'},
            "Not a tool this assistant&#x27;s team may use",
        ),
        ({"message_template": "Order {order_id.__class__}"}, "is not a declared parameter"),
        ({"parameters": '[{"name": "Order ID"}]', "message_template": "x"}, "name must be lowercase"),
    ],
)
def test_admin_inline_shows_the_services_errors_on_the_row(staff_client, assistant, row, message):
    data = with_shortcut(
        admin_form_data(staff_client.get(change_url(assistant))),
        **{"command": "track", "description": "Track an order", **row},
    )
    response = staff_client.post(change_url(assistant), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Shortcut.objects.exists()


def test_a_staff_user_of_another_account_cannot_reach_the_page(client, assistant):
    outsider = UserFactory(is_staff=True)
    outsider.save()
    client.force_login(outsider)
    assert client.get(change_url(assistant)).status_code in (302, 403, 404)


# ---- playground ---------------------------------------------------------------------------------------------


def playground_url(team) -> str:
    return f"/app/accounts/{team.account.id}/playground/"


@pytest.fixture
def track(assistant):
    return shortcut_create(
        assistant=assistant,
        command="track",
        description="Track an order",
        parameters=[
            {"name": "order_id", "description": "Your order number", "required": True},
            {"name": "note", "description": "Anything to add", "required": False},
        ],
        action="message",
        message_template="Order {order_id}",
    )


def test_playground_offers_each_enabled_shortcut_with_its_form(admin_client, team, assistant, track):
    shortcut_create(
        assistant=assistant,
        command="hidden",
        description="Off",
        action="message",
        message_template="x",
        enabled=False,
    )
    html = admin_client.get(playground_url(team) + f"?assistant={assistant.id}").content.decode()
    assert '<summary title="Track an order">/track</summary>' in html
    assert 'name="param_order_id" maxlength="500" required' in html
    assert 'name="param_note" maxlength="500">' in html
    assert "/hidden" not in html


def test_submitting_a_shortcut_form_sends_the_command_as_the_customer(
    admin_client, team, assistant, track, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        response = admin_client.post(
            playground_url(team),
            {
                "assistant": assistant.id,
                "start_key": "assistant",
                "shortcut": "track",
                "param_order_id": "12345",
                "param_note": "ring twice",
            },
        )
    assert response.status_code == 302
    assert PlaygroundRun.objects.get().message == '/track 12345 "ring twice"'


def test_an_unknown_shortcut_in_the_form_sends_nothing(admin_client, team, assistant, track):
    response = admin_client.post(
        playground_url(team),
        {"assistant": assistant.id, "start_key": "assistant", "shortcut": "nope", "param_order_id": "1"},
    )
    assert response.status_code == 302
    assert not PlaygroundRun.objects.exists()
