"""The availability switch in the top bar and the report page in a real browser (system chromium).

The switch saves with fetch when its select changes: the page is not reloaded (a marker set on `window` survives)
and the choice is stored; the report page renders under the site's Content-Security-Policy without console
errors and its date form shows a clear message for a bad range.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def acme():
    account = AccountFactory(name="Acme")
    admin = UserFactory(username="alice")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    inbox = InboxFactory(account=account, name="Web chat")
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    Conversation.objects.filter(pk=conversation.pk).update(
        first_reply_at=conversation.created_at + timedelta(seconds=90),
        resolved_at=conversation.created_at + timedelta(minutes=5),
        resolved_by=Conversation.ResolvedBy.AI,
        status=Conversation.Status.RESOLVED,
    )
    return account, admin


def test_availability_switch_saves_without_a_reload(browser, sign_in, live_server, acme):
    account, admin = acme
    page = browser.page
    sign_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/app/accounts/{account.id}/lists/needs-people/")
    expect(page.locator("#availability-select")).to_have_value("online")
    # With JavaScript the submit button is hidden: the select saves on change.
    expect(page.locator("[data-availability-submit]")).to_be_hidden()
    page.evaluate("window.__noReload = true")

    page.select_option("#availability-select", "busy")

    expect(page.locator("[data-availability-status]")).to_have_text("You are busy.")
    assert page.evaluate("window.__noReload") is True
    assert Membership.objects.get(account=account, user=admin).availability == "busy"
    browser.shot("availability-busy")
    page.reload()
    expect(page.locator("#availability-select")).to_have_value("busy")
    assert browser.console_errors == []


def test_report_page_renders_and_explains_a_bad_range(browser, sign_in, live_server, acme):
    account, _ = acme
    page = browser.page
    sign_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/app/accounts/{account.id}/lists/needs-people/")
    page.click("nav.admin-links a:has-text('Reports')")
    expect(page.locator("h1")).to_have_text("Reports")
    expect(page.locator('[data-figure="created"]')).to_have_text("1")
    expect(page.locator('[data-figure="first_response_median"]')).to_have_text("1 min")
    expect(page.locator('[data-figure="ai_resolution_rate"]')).to_have_text("100.0 %")
    browser.shot("reports")

    today = timezone.localdate()
    page.fill("#report-start", (today + timedelta(days=3)).isoformat())
    page.fill("#report-end", today.isoformat())
    page.click("button:has-text('Show')")
    expect(page.locator("p.error")).to_contain_text("is after the end date")
    browser.shot("reports-bad-range")
    # The 400 of the bad range is the only console message; nothing blocked by the CSP.
    assert all("Content Security Policy" not in e for e in browser.console_errors)
