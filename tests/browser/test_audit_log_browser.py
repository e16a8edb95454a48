"""An administrator renames an inbox and rotates its secret in the Django admin, then reads the change on the
dashboard's Audit log page (reached from the admin links), filters it by what changed, at a phone's and a
laptop's width: who, where from, the before/after of the name, the secret only as "changed"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import Membership, Team
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}
NEW_SECRET = "rotated-secret-value-9f3c"


@pytest.mark.parametrize("device", list(WIDTHS))
def test_an_admin_reads_an_inbox_change_made_in_the_django_admin(browser, sign_in, live_server, device):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Web chat")
    alice = UserFactory(username="alice", is_staff=True)
    alice.save()  # the factory skips the post-generation save: the password hash would be stale
    MembershipFactory(account=account, user=alice, role=Membership.Role.ADMIN)
    Team.objects.create(account=account, name="Returns")  # another entry the filter leaves out
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "alice", wait_for="**/app/**")

    page.goto(f"{live_server.url}/admin/helpdesk/inbox/{inbox.pk}/change/")
    page.fill("#id_name", "Support chat")
    page.fill("#id_new_secret", NEW_SECRET)
    page.click("input[name='_save']")
    page.wait_for_url("**/admin/helpdesk/inbox/")

    page.goto(f"{live_server.url}/app/accounts/{account.pk}/")
    page.click("nav.admin-links a:has-text('Audit log')")
    page.select_option("#id_model", "helpdesk.inbox")
    page.click("form.audit-filters button")
    rows = page.locator("tr[data-audit-entry]")
    expect(rows).to_have_count(2)  # the inbox's creation (by nobody: the test) and alice's change
    change = rows.first
    expect(change).to_contain_text("alice")
    expect(change).to_contain_text("Django admin")
    expect(change).to_contain_text("Web chat → Support chat")
    expect(change.locator("dd span.secret")).to_have_text("Changed")
    assert NEW_SECRET not in page.content()
    assert "Returns" not in page.content()
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    browser.shot(f"{device}-audit-log")
