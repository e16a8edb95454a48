"""Macros and automation rules are checked on every save: a wrong action or condition is never stored."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import AutomationRule, Macro
from tests.factories import AccountFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_macro_with_checked_actions_is_stored_normalised() -> None:
    macro = Macro.objects.create(
        account=AccountFactory(),
        name="Billing",
        actions=[
            {"kind": "add_label", "value": "Billing"},
            {"kind": "set_priority", "value": "high"},
            {"kind": "assign_team", "value": "7"},
            {"kind": "resolve"},
        ],
    )
    macro.refresh_from_db()
    assert macro.actions == [
        {"kind": "add_label", "value": "billing"},
        {"kind": "set_priority", "value": "high"},
        {"kind": "assign_team", "value": 7},
        {"kind": "resolve", "value": None},
    ]


@pytest.mark.parametrize(
    "actions",
    [
        [],
        [{"kind": "explode"}],
        [{"kind": "add_label", "value": "two words"}],
        [{"kind": "set_priority", "value": "asap"}],
        [{"kind": "snooze", "value": 0}],
        [{"kind": "snooze", "value": "10"}],
        [{"kind": "assign_agent", "value": "bob"}],
        [{"kind": "add_note", "value": "   "}],
        [{"kind": "call_webhook", "value": "https://example.com/hook"}],  # rules only
        [{"kind": "resolve", "extra": 1}],
        [{"kind": "resolve"}] * 21,
    ],
)
def test_a_macro_with_a_wrong_action_is_refused_and_not_stored(actions: list[object]) -> None:
    with pytest.raises(ValidationError) as caught:
        Macro.objects.create(account=AccountFactory(), name="Bad", actions=actions)
    assert "actions" in caught.value.message_dict
    assert not Macro.objects.exists()


def test_a_personal_macro_needs_its_owner() -> None:
    with pytest.raises(ValidationError):
        Macro.objects.create(
            account=AccountFactory(), name="Mine", visibility="personal", actions=[{"kind": "resolve"}]
        )
    Macro.objects.create(
        account=AccountFactory(),
        name="Mine",
        visibility="personal",
        owner=UserFactory(),
        actions=[{"kind": "resolve"}],
    )


@pytest.mark.parametrize(
    "conditions",
    [
        {"weather": "sunny"},
        {"inbox_ids": ["1"]},
        {"labels": "vip"},
        {"contact_attribute": {"key": "plan"}},
        {"ai_outcome": "maybe"},
        {"text_contains": ""},
    ],
)
def test_a_rule_with_a_wrong_condition_is_refused(conditions: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as caught:
        AutomationRule.objects.create(
            account=AccountFactory(),
            name="R",
            event="message_created",
            conditions=conditions,
            actions=[{"kind": "resolve"}],
        )
    assert list(caught.value.message_dict) == ["conditions"]
    assert not AutomationRule.objects.exists()


def test_a_rule_may_e_mail_the_team_and_call_a_webhook() -> None:
    rule = AutomationRule.objects.create(
        account=AccountFactory(),
        name="R",
        event="conversation_created",
        conditions={"labels": ["VIP"], "contact_attribute": {"key": "plan", "value": "gold"}},
        actions=[
            {"kind": "email_team", "value": "A VIP wrote."},
            {"kind": "call_webhook", "value": "https://h.example/x"},
        ],
    )
    rule.refresh_from_db()
    assert rule.conditions["labels"] == ["vip"]
    assert [a["kind"] for a in rule.actions] == ["email_team", "call_webhook"]
