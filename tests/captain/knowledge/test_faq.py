"""captain.knowledge.services.faq: entries belong to their assistant's account, whoever writes them."""

from __future__ import annotations

import pytest

from captain.knowledge.api.faq import REVIEW_FIELDS, FaqEntryInputSerializer, FaqEntryOutputSerializer
from captain.knowledge.forms import FaqEntryAdminForm
from captain.knowledge.models import FaqEntry
from captain.knowledge.services.faq import (
    FAQ_ENTRY_FIELDS,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_update,
)
from tests.factories import AssistantFactory, FaqEntryFactory

pytestmark = pytest.mark.django_db


def test_create_takes_the_account_from_the_assistant():
    assistant = AssistantFactory()

    entry = faq_entry_create(assistant=assistant, question="Shipping?", answer="3 days.")

    assert (entry.account_id, entry.assistant_id, entry.enabled) == (assistant.account_id, assistant.id, True)


def test_update_writes_only_the_given_fields():
    entry = FaqEntryFactory(question="Q?", answer="A.")

    faq_entry_update(entry=entry, enabled=False)

    entry.refresh_from_db()
    assert (entry.question, entry.answer, entry.enabled) == ("Q?", "A.", False)


def test_the_account_cannot_be_passed_in():
    with pytest.raises(TypeError, match="account"):
        faq_entry_create(assistant=AssistantFactory(), question="Q", answer="A", account=None)  # type: ignore[call-arg]
    assert not FaqEntry.objects.exists()


def test_delete():
    faq_entry_delete(entry=FaqEntryFactory())

    assert not FaqEntry.objects.exists()


def test_the_api_and_the_admin_edit_the_services_field_list():
    assert list(FaqEntryInputSerializer().fields) == list(FAQ_ENTRY_FIELDS)
    assert FaqEntryOutputSerializer.Meta.fields == ["id", *FAQ_ENTRY_FIELDS, *REVIEW_FIELDS, "created_at"]
    assert FaqEntryAdminForm.Meta.fields == ["assistant", *FAQ_ENTRY_FIELDS]
