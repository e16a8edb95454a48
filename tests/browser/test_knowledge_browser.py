"""The knowledge page in a real browser: an admin uploads a Markdown file, sees it queued, and the page (reloading
itself, no script) shows it Ready with its passages once processed, then deletes it after confirming.

The web request queues the task in Redis as in production; the task body then runs in this process with
`knowledge_document_process.apply(...)` (as the dashboard browser test does for replies), so the test is fast and
deterministic while the page's own refresh is what brings the new status to the screen.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.tasks import knowledge_document_process
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"
MARKDOWN = (
    "# Rentals\n\nA city bike rents for 12 euros per day.\n\n"
    "## Deposit\n\nWe hold a deposit of 50 euros, returned when the bike comes back.\n"
)


def test_admin_uploads_markdown_and_sees_it_become_ready(browser, sign_in, live_server, redis_url, tmp_path):
    assistant = AssistantFactory(name="Rental desk")
    admin = UserFactory(username="alice")
    admin.set_password(PASSWORD)
    admin.save()
    MembershipFactory(account=assistant.account, user=admin, role=Membership.Role.ADMIN)
    file = tmp_path / "rentals.md"
    file.write_text(MARKDOWN)
    page = browser.page

    sign_in(page, live_server.url, "alice")
    page.click("nav.admin-links >> text=Knowledge")
    expect(page.locator("h1")).to_have_text("Knowledge")
    page.set_input_files("#upload-form input[type=file]", str(file))
    page.click("#upload-form button[value=upload]")

    row = page.locator("#documents tr[data-document]")
    expect(row).to_have_attribute("data-status", "queued")
    expect(page.locator(".flash")).to_contain_text("queued for processing")
    browser.shot("queued")

    document = KnowledgeDocument.objects.get()
    assert knowledge_document_process.apply((document.pk,)).get() == "ready"

    expect(row).to_have_attribute("data-status", "ready", timeout=10_000)  # the page reloaded itself
    expect(row.locator(".badge")).to_have_text("Ready")
    browser.shot("ready")
    expect(row).to_contain_text("rentals.md")  # the file name under the title its first heading gave it
    row.locator("a", has_text="Rentals").click()
    expect(page.locator("#passages")).to_contain_text("deposit of 50 euros")

    page.click("#documents a.delete")
    expect(page.locator("#confirm-delete")).to_contain_text("Delete Rentals and its")
    browser.shot("confirm-delete")
    page.click("#confirm-delete button[value=delete]")
    expect(page.locator(".flash")).to_contain_text("were deleted")
    assert not KnowledgeDocument.objects.exists() and not KnowledgeChunk.objects.exists()
    assert browser.console_errors == [] and browser.dialogs == []
