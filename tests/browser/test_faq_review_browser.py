"""The FAQ review page in a real browser: drafts written by the real drafting path (the assistant's model is the
scripted server over HTTP) are approved as written and edited-and-approved from the page."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from captain.knowledge.models import FaqEntry
from captain.knowledge.services.faq_drafts import faq_drafts_from_document
from helpdesk.models import Membership
from tests.captain.answering.knowledge_rows import document
from tests.factories import AssistantFactory, MembershipFactory, UserFactory
from tests.support import fake_llm_server as fake

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"


@pytest.fixture
def drafted(llm_settings):
    assistant = AssistantFactory(name="Captain")
    user = UserFactory(username="alice")
    user.set_password(PASSWORD)
    user.save()
    MembershipFactory(account=assistant.account, user=user, role=Membership.Role.ADMIN)
    doc = document(
        assistant,
        "Shipping guide",
        [("Times", "Parcels within Germany arrive in 2 to 3 business days. Express costs 9.90 euros.")],
    )
    pairs = [
        {"question": "How long does delivery in Germany take?", "answer": "2 to 3 business days."},
        {"question": "express price", "answer": "9.90 euros."},
    ]
    llm_settings.push(fake.text(json.dumps(pairs)))
    assert faq_drafts_from_document(document_id=doc.pk) == 2
    return assistant


def test_an_admin_approves_and_edits_drafts_from_the_review_page(browser, sign_in, live_server, drafted):
    page = browser.page
    account_id = drafted.account_id
    sign_in(page, live_server.url, "alice")
    page.click("nav.admin-links >> text=FAQ review")
    expect(page).to_have_url(f"{live_server.url}/app/accounts/{account_id}/faq/")
    expect(page.locator("#faq-entries tbody tr")).to_have_count(2)
    expect(page.locator("#faq-entries")).to_contain_text("Shipping guide")
    browser.shot("pending")

    first = FaqEntry.objects.get(question="How long does delivery in Germany take?")
    page.click(f"tr[data-entry='{first.pk}'] button[data-action='approve']")
    expect(page.locator(".flash")).to_contain_text("Approved: How long does delivery in Germany take?")
    expect(page.locator("#faq-entries tbody tr")).to_have_count(1)

    second = FaqEntry.objects.get(question="express price")
    row = page.locator(f"tr[data-entry='{second.pk}']")
    row.locator("summary").click()
    row.locator("textarea[name=question]").fill("How much does express delivery cost?")
    row.locator("button[data-action='edit']").click()
    expect(page.locator("#faq-empty")).to_be_visible()
    browser.shot("all-reviewed")

    rows = {e.pk: (e.status, e.question) for e in FaqEntry.objects.all()}
    assert rows == {
        first.pk: ("approved", "How long does delivery in Germany take?"),
        second.pk: ("approved", "How much does express delivery cost?"),
    }
    assert browser.console_errors == []
