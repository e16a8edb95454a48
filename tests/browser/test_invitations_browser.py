"""An administrator invites a colleague from the People page; the mail's link, opened in a fresh browser (no
session, no cookies), lets them set a name and password and lands them in the account; the same link opened
again shows the "already used" page (410). Then the administrator sees the new member and no pending invitation."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from playwright.sync_api import expect, sync_playwright

from helpdesk.models import Membership
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_PASSWORD = "tide-lantern-orbit-52"


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"invitations--{name}.png"), full_page=True)


def test_an_invited_person_sets_a_password_lands_in_the_account_and_the_link_is_spent(
    sign_in, live_server, settings
):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/setup --dev does)")
    settings.PUBLIC_BASE_URL = live_server.url  # the mail's link points at this test server
    account = AccountFactory(name="Acme")
    InboxFactory(account=account, name="Web chat")
    MembershipFactory(account=account, user=UserFactory(username="alice"), role=Membership.Role.ADMIN)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            admin = chromium.new_context(viewport={"width": 1366, "height": 768}).new_page()
            admin.set_default_timeout(15_000)
            sign_in(admin, live_server.url, "alice")
            admin.goto(f"{live_server.url}/app/accounts/{account.pk}/audit/")
            admin.click("nav.admin-links a:has-text('People')")
            admin.fill("#id_email", "Dana@Example.com")
            admin.select_option("#id_role", "agent")
            admin.click("form[data-invite-form] button[type=submit]")
            expect(admin.locator("ul.flash")).to_contain_text("Invitation sent to dana@example.com")
            expect(admin.locator("table[data-invitations] tbody tr[data-invitation]")).to_have_count(1)
            shot(admin, "01-admin-invited")

            assert [m.to for m in mail.outbox] == [["dana@example.com"]]
            link = re.search(r"https?://\S+/invite/[\w-]+/", mail.outbox[0].body).group(0)
            assert link.startswith(live_server.url)

            # A fresh context: nothing of alice's session, as on Dana's own computer.
            dana = chromium.new_context(viewport={"width": 375, "height": 740}).new_page()
            dana.set_default_timeout(15_000)
            opened = dana.goto(link)
            assert opened.status == 200
            expect(dana.locator("[data-invitation-accept] h1")).to_have_text("Join Acme")
            dana.fill("#id_name", "Dana Scully")
            dana.fill("#id_password1", NEW_PASSWORD)
            dana.fill("#id_password2", NEW_PASSWORD)
            shot(dana, "02-accept-form-phone")
            assert dana.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
            dana.click("button:has-text('Create account and join')")
            dana.wait_for_url(f"**/app/accounts/{account.pk}/**")
            expect(dana.locator(".who")).to_contain_text("dana@example.com · Agent")
            expect(dana.locator("ul.flash")).to_contain_text("Welcome to Acme")
            shot(dana, "03-landed")

            again = dana.goto(link)
            assert again.status == 410
            expect(dana.locator("[data-invitation-gone]")).to_contain_text(
                "This invitation has already been used."
            )
            shot(dana, "04-link-spent")

            admin.reload()
            expect(admin.locator("table[data-people]")).to_contain_text("dana@example.com")
            expect(admin.locator("table[data-invitations]")).to_contain_text("No pending invitations.")
        finally:
            chromium.close()
    assert Membership.objects.filter(account=account, user__email="dana@example.com").count() == 1
