"""Migration 0015 moves each contact's phone from the reserved `phone` custom attribute into the `phone` column,
keeping the other attributes, and moves it back when migrated backwards."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("helpdesk", "0014_membership_escalation_notifications")]
AFTER = [("helpdesk", "0015_contact_phone")]

pytestmark = pytest.mark.django_db(transaction=True)


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


def test_the_phone_attribute_becomes_the_column_and_back():
    _executor().migrate(BEFORE)
    old = _executor().loader.project_state(BEFORE).apps
    Account, Contact = old.get_model("helpdesk", "Account"), old.get_model("helpdesk", "Contact")
    account = Account.objects.create(name="Acme")
    ann = Contact.objects.create(
        account=account, name="Ann", custom_attributes={"phone": "+1 555 0100", "plan": "pro"}
    )
    bob = Contact.objects.create(account=account, name="Bob", custom_attributes={"plan": "free"})
    odd = Contact.objects.create(account=account, name="Odd", custom_attributes={"phone": ["not", "text"]})
    try:
        _executor().migrate(AFTER)
        new = _executor().loader.project_state(AFTER).apps.get_model("helpdesk", "Contact")
        rows = {c.name: (c.phone, c.custom_attributes) for c in new.objects.filter(account_id=account.id)}
        assert rows == {
            "Ann": ("+1 555 0100", {"plan": "pro"}),
            "Bob": ("", {"plan": "free"}),
            "Odd": ("", {}),  # not a phone number: dropped, never a crash
        }
        _executor().migrate(BEFORE)
        back = _executor().loader.project_state(BEFORE).apps.get_model("helpdesk", "Contact")
        assert back.objects.get(pk=ann.pk).custom_attributes == {"plan": "pro", "phone": "+1 555 0100"}
        assert back.objects.get(pk=bob.pk).custom_attributes == {"plan": "free"}
        assert back.objects.get(pk=odd.pk).custom_attributes == {}
    finally:
        executor = _executor()
        executor.migrate(executor.loader.graph.leaf_nodes())
