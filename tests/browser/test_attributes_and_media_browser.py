"""The conversation page in a real browser: an agent edits the contact's attributes and the AI's memory in the side
panel (a bad value is refused with nothing stored), and sees the image the customer sent, served by the
authenticated attachment view."""

from __future__ import annotations

import base64

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from playwright.sync_api import expect

from captain.memory.models import MemoryValue, MemoryVariable
from captain.memory.services.memory import memory_write
from helpdesk.models import Attachment, CustomAttributeDefinition, Membership
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A 1x1 PNG: the smallest image a browser decodes.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def conversation(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    link = AssistantInboxFactory(assistant__name="Captain", inbox__name="Telegram bot")
    account = link.assistant.account
    MembershipFactory(account=account, user=UserFactory(username="alice"), role=Membership.Role.AGENT)
    CustomAttributeDefinition.objects.create(
        account=account, applies_to="contact", key="plan", label="Plan", kind="list", choices=["basic", "pro"]
    )
    CustomAttributeDefinition.objects.create(
        account=account, applies_to="contact", key="seats", label="Seats", kind="number"
    )
    MemoryVariable.objects.create(
        assistant=link.assistant, name="order_number", description="The order number"
    )
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, status="open")
    memory_write(
        assistant=link.assistant, conversation=conversation, name="order_number", value="A-1234", writer="ai"
    )
    message = MessageFactory(
        conversation=conversation, content="", attachments=[{"type": "photo", "file_id": "p1"}]
    )
    name = default_storage.save(f"attachments/{account.pk}/photo.png", ContentFile(PNG))
    Attachment.objects.create(
        account=account,
        message=message,
        kind="image",
        status="stored",
        provider_ref="p1",
        content_type="image/png",
        size=len(PNG),
        file=name,
    )
    return conversation


def test_an_agent_edits_attributes_and_memory_and_sees_the_customers_image(
    browser, sign_in, live_server, conversation
):
    page = browser.page
    sign_in(page, live_server.url, "alice")
    url = f"{live_server.url}/app/accounts/{conversation.account_id}/conversations/{conversation.id}/"
    page.goto(url)

    thumb = page.locator(".attachment-image img.thumb")
    expect(thumb).to_be_visible()
    # The image really loaded through the authenticated view (a broken image has no natural width).
    assert thumb.evaluate("img => img.complete && img.naturalWidth") == 1

    memory = page.locator("#mem-order_number")
    expect(memory).to_have_value("A-1234")
    memory.fill("B-7781")
    page.locator("form[data-target='memory'] button[type=submit]").click()
    expect(page.locator("#mem-order_number")).to_have_value("B-7781")
    assert MemoryValue.objects.get().value == "B-7781"
    assert MemoryValue.objects.get().written_by == "agent"

    contact_form = page.locator("form[data-target='contact']")
    contact_form.locator("select[name='attr_plan']").select_option("pro")
    contact_form.locator("input[name='attr_seats']").fill("twelve")
    contact_form.locator("button[type=submit]").click()
    expect(page.locator("body")).to_contain_text("Nothing saved")
    conversation.contact.refresh_from_db()
    assert (
        conversation.contact.custom_attributes == {}
    )  # all or nothing: the valid plan was not stored either

    contact_form = page.locator("form[data-target='contact']")
    contact_form.locator("select[name='attr_plan']").select_option("pro")
    contact_form.locator("input[name='attr_seats']").fill("12")
    contact_form.locator("button[type=submit]").click()
    expect(page.locator("form[data-target='contact'] select[name='attr_plan']")).to_have_value("pro")
    conversation.contact.refresh_from_db()
    assert conversation.contact.custom_attributes == {"plan": "pro", "seats": 12}
    browser.shot("conversation-attributes-and-image")
