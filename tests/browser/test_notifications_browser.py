"""The notification bell in a real browser (system chromium through Playwright) on the real web server.

End to end: a service call in the test (what a webhook, the AI or a colleague's click does) writes the
notification and publishes it on Redis; the server's event stream carries it to live.js, which re-dispatches it
as `helpdesk:event`; the bell counts it and lists it without a reload. A colleague's notification and another
account's never arrive. The pop-up and sound toggle is then tested with synthetic `helpdesk:event`s (what live.js
dispatches), with the browser's notification permission granted and `window.Notification` recorded.

The pages come from the real web server (tests.support.servers.start_test_web_server): the event stream is an
async view that streams only under ASGI.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import Membership, Notification
from helpdesk.services.conversations import conversation_assign, conversation_escalate
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory, UserFactory
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Records pop-ups instead of relying on the headless desktop to show one; permission is the browser's real one.
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  window.__shown = [];
  function Recorded(title, options) { window.__shown.push({title, body: options && options.body}); }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Recorded;
})();
"""


@pytest.fixture
def setup(redis_url, settings, tmp_path):
    from helpdesk.realtime import publish

    settings.REDIS_URL = redis_url
    publish._client.cache_clear()  # this process publishes to the test's redis-server
    acme_inbox = InboxFactory(account__name="Acme")
    account = acme_inbox.account
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    MembershipFactory(account=account, user=alice, role=Membership.Role.ADMIN)
    MembershipFactory(account=account, user=bob)
    globex_inbox = InboxFactory(account__name="Globex")
    mallory = UserFactory(username="mallory")
    MembershipFactory(account=globex_inbox.account, user=mallory)
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    try:
        yield {
            "server": server,
            "account": account,
            "inbox": acme_inbox,
            "alice": alice,
            "bob": bob,
            "globex_inbox": globex_inbox,
        }
    finally:
        server.stop()
        publish._client.cache_clear()


def test_a_notification_arrives_live_and_is_marked_read(browser, sign_in, setup):
    base = setup["server"].url
    account, alice, bob = setup["account"], setup["alice"], setup["bob"]
    page = browser.page
    sign_in(page, base, "bob")
    page.goto(f"{base}/app/accounts/{account.id}/lists/resolved/")
    expect(page.locator("body")).to_have_attribute("data-live-state", "open")
    bell = page.locator("[data-notif-bell]")
    count = bell.locator("[data-notif-count]")
    expect(count).to_be_hidden()

    # Not for bob: a colleague's assignment, and an escalation in another account.
    for_alice = ConversationFactory(contact_inbox__inbox=setup["inbox"])
    conversation_assign(conversation=for_alice, assignee=alice, by=bob)
    elsewhere = ConversationFactory(contact_inbox__inbox=setup["globex_inbox"])
    conversation_escalate(conversation=elsewhere, reason="Refund", customer_message="")
    # For bob.
    mine = ConversationFactory(contact_inbox__inbox=setup["inbox"], contact_inbox__contact__name="Jane Doe")
    conversation_assign(conversation=mine, assignee=bob, by=alice)

    expect(count).to_have_text("1")
    expect(count).to_be_visible()
    page.click("[data-notif-bell] > summary")
    items = bell.locator(".notif-item")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text(f"alice assigned conversation #{mine.id} with Jane Doe to you.")
    # The link says where it was opened from, so the conversation page can lead back here.
    expect(items.first.locator("a")).to_have_attribute(
        "href",
        f"/app/accounts/{account.id}/conversations/{mine.id}/?from=%2Fapp%2Faccounts%2F{account.id}%2Flists%2Fresolved%2F",
    )
    browser.shot("bell-live-item")

    items.first.locator("button:has-text('Mark read')").click()
    expect(count).to_be_hidden()
    expect(items.first).not_to_have_class("notif-item unread")
    (row,) = Notification.objects.filter(user=bob)
    assert row.read_at is not None
    assert page.url.endswith(f"/app/accounts/{account.id}/lists/resolved/")  # no reload, no navigation
    assert Notification.objects.get(user=alice).read_at is None

    bell.locator("a:has-text('All notifications')").click()
    expect(page.locator("main table.notifications-list tr")).to_have_count(2)  # the header and bob's one
    expect(page.locator("main")).to_contain_text("Jane Doe")
    browser.shot("notifications-page")

    # Opened from the notifications page, the conversation offers the way back to it.
    page.locator("main table.notifications-list a:has-text('Jane Doe')").click()
    page.wait_for_url(f"**/conversations/{mine.id}/**")
    back = page.locator("[data-came-from]")
    expect(back).to_be_visible()
    browser.shot("conversation-from-notification")
    back.click()
    page.wait_for_url(f"{base}/app/accounts/{account.id}/notifications/")
    expect(page.locator("main table.notifications-list tr")).to_have_count(2)
    assert browser.console_errors == []


def test_popup_and_sound_when_enabled_and_untrusted_events_are_ignored(browser, sign_in, setup):
    base = setup["server"].url
    account, bob = setup["account"], setup["bob"]
    page = browser.page
    page.context.grant_permissions(["notifications"], origin=base)
    page.add_init_script(RECORD_NOTIFICATIONS)
    sign_in(page, base, "bob")
    page.goto(f"{base}/app/accounts/{account.id}/lists/resolved/")
    bell = page.locator("[data-notif-bell]")

    def dispatch(**event) -> None:
        page.evaluate(
            "(e) => document.dispatchEvent(new CustomEvent('helpdesk:event', {detail: e}))",
            {"type": "notification", "kind": "mention", **event},
        )

    # Off by default: counted and listed, but silent.
    dispatch(user_id=bob.id, id=9001, text="First", url=f"/app/accounts/{account.id}/conversations/1/")
    expect(bell.locator("[data-notif-count]")).to_have_text("1")
    assert page.evaluate("window.__shown") == []
    assert bell.get_attribute("data-last-sound") is None

    page.click("[data-notif-bell] > summary")
    page.check("[data-notif-alerts]")
    assert page.evaluate("localStorage.getItem('helpdesk.notifications.alerts')") == "on"
    dispatch(user_id=bob.id, id=9002, text="Second <b>not bold</b>", url="https://evil.example/")
    expect(bell.locator("[data-notif-count]")).to_have_text("2")
    assert page.evaluate("window.__shown") == [
        {"title": "Captain Helpdesk", "body": "Second <b>not bold</b>"}
    ]
    assert bell.get_attribute("data-last-sound") is not None
    newest = bell.locator(".notif-item").first
    expect(newest.locator("a")).to_have_text("Second <b>not bold</b>")  # text, never HTML
    expect(newest.locator("a")).to_have_attribute("href", "#")  # never a link off the site
    assert newest.locator("b").count() == 0

    # Someone else's event, a repeat, and another type change nothing.
    dispatch(user_id=bob.id + 1000, id=9003, text="Not mine", url="/")
    dispatch(user_id=bob.id, id=9002, text="Repeat", url="/")
    page.evaluate(
        "document.dispatchEvent(new CustomEvent('helpdesk:event', {detail: {type: 'message', id: 5}}))"
    )
    expect(bell.locator("[data-notif-count]")).to_have_text("2")
    expect(bell.locator(".notif-item")).to_have_count(2)

    # The choice is remembered on this device.
    page.reload()
    page.click("[data-notif-bell] > summary")
    expect(page.locator("[data-notif-alerts]")).to_be_checked()
    browser.shot("bell-alerts-on")
    assert browser.console_errors == []
