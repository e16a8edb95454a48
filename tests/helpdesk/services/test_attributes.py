"""Custom attributes: a value is stored only for a defined key and only of its kind; a batch is all-or-nothing."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import Contact, Conversation, CustomAttributeDefinition
from helpdesk.services.attributes import (
    MAX_TEXT_CHARS,
    attribute_definition_create,
    attribute_definition_update,
    attribute_value_from_text,
    custom_attributes_update,
)
from tests.factories import AccountFactory, ConversationFactory

pytestmark = pytest.mark.django_db

Kind = CustomAttributeDefinition.Kind


@pytest.fixture
def conversation():
    return ConversationFactory()


@pytest.fixture
def contact_defs(conversation):
    account_id = conversation.account_id
    return {
        "nickname": attribute_definition_create(
            account_id=account_id, applies_to="contact", key="nickname", label="Nickname"
        ),
        "orders": attribute_definition_create(
            account_id=account_id, applies_to="contact", key="orders", label="Orders", kind=Kind.NUMBER
        ),
        "vip": attribute_definition_create(
            account_id=account_id, applies_to="contact", key="vip", label="VIP", kind=Kind.BOOLEAN
        ),
        "birthday": attribute_definition_create(
            account_id=account_id, applies_to="contact", key="birthday", label="Birthday", kind=Kind.DATE
        ),
        "plan": attribute_definition_create(
            account_id=account_id,
            applies_to="contact",
            key="plan",
            label="Plan",
            kind=Kind.LIST,
            choices=["Free", "Pro"],
        ),
    }


def stored(contact: Contact) -> dict:
    return Contact.objects.get(pk=contact.pk).custom_attributes


def test_values_of_every_kind_are_stored(conversation, contact_defs):
    contact = conversation.contact

    result = custom_attributes_update(
        target=contact,
        changes={"nickname": "  Bo\nb ", "orders": 3, "vip": True, "birthday": "1990-02-28", "plan": "pro"},
    )

    expected = {"nickname": "Bo b", "orders": 3, "vip": True, "birthday": "1990-02-28", "plan": "Pro"}
    assert result == expected
    assert stored(contact) == expected


@pytest.mark.parametrize(
    ("key", "value", "expects"),
    [
        ("nickname", 5, "text of at most"),
        ("nickname", "x" * (MAX_TEXT_CHARS + 1), "text of at most 500"),
        ("nickname", "   ", "cannot be empty"),
        ("orders", "3", "a finite number"),
        ("orders", True, "a finite number"),
        ("orders", float("inf"), "a finite number"),
        ("orders", 10**400, "a finite number"),
        ("vip", "yes", "true or false"),
        ("vip", 1, "true or false"),
        ("birthday", "28.02.1990", "a date as YYYY-MM-DD"),
        ("birthday", "1990-02-30", "a date as YYYY-MM-DD"),
        ("plan", "Gold", "one of: Free, Pro"),
    ],
)
def test_wrong_kind_is_refused_naming_key_and_kind(conversation, contact_defs, key, value, expects):
    contact = conversation.contact

    with pytest.raises(ValidationError) as refused:
        custom_attributes_update(target=contact, changes={key: value})

    message = refused.value.message_dict[key][0]
    assert f"'{key}'" in message
    assert expects in message
    assert stored(contact) == {}


def test_batch_is_all_or_nothing_and_every_bad_key_is_named(conversation, contact_defs):
    contact = conversation.contact
    custom_attributes_update(target=contact, changes={"nickname": "Bob"})

    with pytest.raises(ValidationError) as refused:
        custom_attributes_update(
            target=contact, changes={"nickname": "Robert", "orders": "many", "shoe_size": 44, "vip": False}
        )

    assert set(refused.value.message_dict) == {"orders", "shoe_size"}
    assert "not a contact attribute" in refused.value.message_dict["shoe_size"][0]
    assert "defined: birthday, nickname, orders, plan, vip" in refused.value.message_dict["shoe_size"][0]
    assert stored(contact) == {"nickname": "Bob"}


def test_unknown_key_alone_stores_nothing(conversation, contact_defs):
    contact = conversation.contact

    with pytest.raises(ValidationError, match="shoe_size"):
        custom_attributes_update(target=contact, changes={"shoe_size": 44})

    assert stored(contact) == {}


def test_contact_keys_are_not_conversation_keys(conversation, contact_defs):
    with pytest.raises(ValidationError, match="not a conversation attribute"):
        custom_attributes_update(target=conversation, changes={"plan": "Pro"})

    assert Conversation.objects.get(pk=conversation.pk).custom_attributes == {}


def test_another_accounts_definition_does_not_apply(conversation):
    other = AccountFactory()
    attribute_definition_create(account_id=other.id, applies_to="contact", key="plan", label="Plan")

    with pytest.raises(ValidationError, match="not a contact attribute"):
        custom_attributes_update(target=conversation.contact, changes={"plan": "Pro"})


def test_none_removes_a_key_and_merge_keeps_the_others(conversation, contact_defs):
    contact = conversation.contact
    custom_attributes_update(target=contact, changes={"nickname": "Bob", "orders": 2})

    result = custom_attributes_update(target=contact, changes={"nickname": None, "vip": False})

    assert result == {"orders": 2, "vip": False}
    assert stored(contact) == {"orders": 2, "vip": False}


def test_value_of_a_deleted_definition_can_still_be_removed(conversation, contact_defs):
    contact = conversation.contact
    custom_attributes_update(target=contact, changes={"nickname": "Bob"})
    contact_defs["nickname"].delete()

    with pytest.raises(ValidationError):
        custom_attributes_update(target=contact, changes={"nickname": "Robert"})
    custom_attributes_update(target=contact, changes={"nickname": None})

    assert stored(contact) == {}


def test_form_text_is_parsed_for_numbers_and_yes_no(contact_defs):
    assert attribute_value_from_text(contact_defs["orders"], " 12 ") == 12
    assert attribute_value_from_text(contact_defs["orders"], "1.5") == 1.5
    assert attribute_value_from_text(contact_defs["orders"], "many") == "many"  # refused later, by kind
    assert attribute_value_from_text(contact_defs["vip"], "Yes") is True
    assert attribute_value_from_text(contact_defs["vip"], "false") is False
    assert attribute_value_from_text(contact_defs["plan"], "") is None


def test_definition_rules(conversation):
    account_id = conversation.account_id
    create = attribute_definition_create

    with pytest.raises(ValidationError) as no_choices:
        create(account_id=account_id, applies_to="contact", key="tier", label="Tier", kind=Kind.LIST)
    with pytest.raises(ValidationError) as twice:
        create(
            account_id=account_id,
            applies_to="contact",
            key="tier",
            label="Tier",
            kind=Kind.LIST,
            choices=["a", "A"],
        )
    with pytest.raises(ValidationError) as choices_on_text:
        create(account_id=account_id, applies_to="contact", key="tier", label="Tier", choices=["a"])
    with pytest.raises(ValidationError) as bad_key:
        create(account_id=account_id, applies_to="contact", key="Tier-1", label="Tier")
    create(account_id=account_id, applies_to="contact", key="tier", label="Tier")
    with pytest.raises(ValidationError) as duplicate:
        create(account_id=account_id, applies_to="contact", key="tier", label="Again")

    assert "needs its allowed values" in no_choices.value.message_dict["choices"][0]
    assert "listed twice" in twice.value.message_dict["choices"][0]
    assert "Only a list attribute" in choices_on_text.value.message_dict["choices"][0]
    assert "key" in bad_key.value.message_dict
    assert "already defined" in duplicate.value.message_dict["key"][0]
    # The same key on conversations is a different attribute.
    create(account_id=account_id, applies_to="conversation", key="tier", label="Tier")
    assert CustomAttributeDefinition.objects.filter(account_id=account_id, key="tier").count() == 2


def test_definition_update_keeps_the_key_and_drops_choices_when_leaving_list(conversation, contact_defs):
    plan = attribute_definition_update(definition=contact_defs["plan"], kind=Kind.TEXT, label="Plan name")

    assert (plan.kind, plan.choices, plan.label, plan.key) == (Kind.TEXT, [], "Plan name", "plan")
    with pytest.raises(ValidationError) as refused:
        attribute_definition_update(definition=plan, key="tier")
    assert "key" in refused.value.message_dict
