"""Built-in tools act only within what the team set up."""

from __future__ import annotations

import pytest

from captain.actions.services.tools.builtin import add_label
from captain.runtime import RunContext
from helpdesk.models import Label
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def test_add_label_uses_the_teams_existing_labels_only():
    conversation = ConversationFactory()
    Label.objects.create(account_id=conversation.account_id, name="refund")
    Label.objects.create(account_id=conversation.account_id, name="vip")
    ctx = RunContext(conversation.account_id, conversation.id)

    refused = add_label(ctx, {"label": "urgent-escalate-now"})
    added = add_label(ctx, {"label": "refund"})

    assert "does not exist" in refused and "refund, vip" in refused
    assert added == "Label 'refund' added."
    assert sorted(Label.objects.values_list("name", flat=True)) == ["refund", "vip"]  # nothing invented
    assert list(conversation.labels.values_list("name", flat=True)) == ["refund"]


def test_add_label_does_not_see_another_accounts_labels():
    conversation = ConversationFactory()
    other = ConversationFactory()
    Label.objects.create(account_id=other.account_id, name="theirs")

    result = add_label(RunContext(conversation.account_id, conversation.id), {"label": "theirs"})

    assert "does not exist" in result and "theirs" not in result.split("use:")[1]
    assert not conversation.labels.exists()
