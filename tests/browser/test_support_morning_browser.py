"""A support morning in a real browser (Debian's chromium through Playwright), at a phone's width and at a
laptop's: take the next conversation waiting for people, take it over, write a private note and a reply, resolve
three at once from the list, find a customer with the one search box, merge their duplicate, keep a note on them,
then work one whole conversation with the keyboard only. Each step asserts what the agent sees (and that nothing
scrolls sideways); screenshots go to test-output/screenshots/.

Clicks per task in this walk (the mouse ones): take the next conversation 1 (its row), take over 1 (2 on a phone:
the actions sheet), note 2 (Private note, Add note), reply 2, resolve three 4 (three ticks, Apply), find a customer
1 (Search; the text is sent with Enter) + 1 (the result), merge 1, edit a note 2 (Edit or delete, Save note).
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Contact, ContactNote, Conversation, Membership, Message
from tests.factories import (
    AccountFactory,
    ContactFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.fixture
def morning(redis_url):
    """Seven customers waiting for people (oldest first), and Ann Lee twice: her chat and her e-mail contact."""
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Website chat")
    MembershipFactory(account=account, user=UserFactory(username="bob"), role=Membership.Role.AGENT)
    now = timezone.now()
    waiting = []
    for n in range(7):
        conversation = ConversationFactory(
            contact_inbox=ContactInboxFactory(inbox=inbox, contact__name=f"Customer {n}"),
            status=Conversation.Status.OPEN,
            escalation_reason="The customer asked for a person.",
            waiting_since=now - dt.timedelta(minutes=90 - n),
        )
        MessageFactory(conversation=conversation, content=f"Order {1000 + n} has not arrived.")
        waiting.append(conversation)
    ann = ContactFactory(account=account, name="Ann Lee", email="ann@shop.test")
    ann_again = ContactFactory(account=account, name="Ann Lee", email="")
    for contact in (ann, ann_again):
        chat = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox, contact=contact))
        MessageFactory(conversation=chat, content="Can I change the colour of my sofa order?")
    return {"account": account, "waiting": waiting, "ann": ann, "ann_again": ann_again}


def horizontal_overflow(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


def side_action(page, narrow: bool, action: str) -> None:
    """Press a side-panel action: on a phone the panel is a sheet opened from the conversation."""
    if narrow:
        page.click("a.to-actions")
    page.click(f"#side-panel button[data-action='{action}']")


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_support_morning(browser, sign_in, live_server, morning, device):
    page = browser.page
    width, height = WIDTHS[device]
    narrow = width < 900
    page.set_viewport_size({"width": width, "height": height})
    waiting, account_id = morning["waiting"], morning["account"].id
    base = f"{live_server.url}/app/accounts/{account_id}"

    sign_in(
        page,
        live_server.url,
        "bob",
        next_path=f"/app/accounts/{account_id}/lists/needs-people/",
        wait_for="**/lists/needs-people/**",
    )
    expect(page.locator("tr[data-conversation]")).to_have_count(7)
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-1-queue")

    # 1. The next conversation: the one waiting longest is at the top.
    page.locator(f'tr[data-conversation="{waiting[0].id}"] td.customer a').click()
    expect(page.locator(".page-head h1")).to_contain_text("Customer 0")
    expect(page.locator(".msg.customer").last).to_contain_text("Order 1000 has not arrived.")
    page.wait_for_load_state("load")
    side_action(page, narrow, "take_over")
    expect(page.locator("#action-result")).to_contain_text("You took over")
    if narrow:
        page.click("#side-panel .close-actions a")
    assert horizontal_overflow(page) <= 0

    # 2. A private note, then a reply: both appear in the thread.
    page.check("#composer input[name=kind][value=note]")
    page.fill("#composer-text", "Courier says the parcel is in the depot.")
    page.click("#composer button.send")
    expect(page.locator(".flash")).to_contain_text("Private note added")
    expect(page.locator(".msg.note").last).to_contain_text("parcel is in the depot")
    page.check("#composer input[name=kind][value=reply]")
    page.fill("#composer-text", "Your parcel leaves the depot today.")
    page.click("#composer button.send")
    expect(page.locator(".flash")).to_contain_text("Reply queued for delivery")
    expect(page.locator(".msg.human").last).to_contain_text("leaves the depot today")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-2-replied")

    # 3. Three resolved at once from the list.
    page.goto(f"{base}/lists/needs-people/")
    for conversation in waiting[1:4]:
        page.check(f'tr[data-conversation="{conversation.id}"] input[name=ids]')
    expect(page.locator("[data-bulk-count]")).to_have_text("3 ticked")
    page.click("[data-bulk-apply]")
    expect(page.locator(".flash")).to_contain_text("Resolved 3 conversations.")
    expect(page.locator("tr[data-conversation]")).to_have_count(3)  # the taken-over one left too
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-3-bulk-resolved")

    # 4. One search box: the customer, her messages and her conversations.
    page.click("nav.admin-links a:has-text('Search')")
    page.fill("#search-q", "sofa")
    page.press("#search-q", "Enter")
    expect(page.locator("[data-results=messages] li")).to_have_count(2)
    expect(page.locator("[data-results=messages]")).to_contain_text("colour of my sofa")
    page.fill("#search-q", "ann@shop")
    page.press("#search-q", "Enter")
    expect(page.locator("[data-results=contacts] li")).to_have_count(1)
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-4-search")
    page.locator("[data-results=contacts] a").click()
    expect(page.locator(".page-head h1")).to_contain_text("Ann Lee")

    # 5. Her duplicate merged into her: both conversations are hers now.
    ann_again = morning["ann_again"]
    page.locator(f'li[data-duplicate="{ann_again.pk}"] button').click()
    expect(page.locator(".flash li.success")).to_contain_text(f"Merged Ann Lee (#{ann_again.pk})")
    expect(page.locator("li[data-conversation]")).to_have_count(2)

    # 6. A note on the customer, then corrected.
    page.fill("#contact-note", "Prefers a call after 6 pm.")
    page.click(".contact-notes form[data-contact-note] button[type=submit]")
    expect(page.locator(".contact-note-list li")).to_contain_text("Prefers a call after 6 pm.")
    page.click(".note-change summary")
    page.locator(".note-change textarea").fill("Prefers a call after 7 pm.")
    page.click(".note-change button:has-text('Save note')")
    expect(page.locator(".flash li.success")).to_have_text("Note saved.")
    expect(page.locator(".contact-note-list li")).to_contain_text("after 7 pm")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-5-contact")

    # 7. One whole conversation with the keyboard only.
    page.goto(f"{base}/lists/needs-people/")
    page.keyboard.press("j")
    expect(page.locator(f'tr[data-conversation="{waiting[4].id}"] td.customer a')).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 4")
    page.wait_for_load_state("load")
    page.keyboard.press("n")
    expect(page.locator("#composer-text")).to_be_focused()
    page.keyboard.type("Refund approved by the team lead.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".flash")).to_contain_text("Private note added")
    page.keyboard.press("r")
    page.keyboard.type("Your refund is on its way.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".flash")).to_contain_text("Reply queued for delivery")
    page.keyboard.press("a")
    expect(page.locator("#action-result")).to_contain_text("Assigned to")
    page.keyboard.press("e")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 5")  # the queue goes on
    expect(page.locator(".flash")).to_contain_text(f"#{waiting[4].id}: Conversation resolved.")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-6-keyboard")

    # What the morning left in the database.
    statuses = dict(Conversation.objects.filter(pk__in=[c.pk for c in waiting]).values_list("pk", "status"))
    assert [statuses[c.pk] for c in waiting] == ["open"] + ["resolved"] * 4 + ["open"] * 2
    first = waiting[0]
    assert Message.objects.filter(conversation=first, private=True, sender_type="user").count() == 1
    assert Message.objects.filter(conversation=first, private=False, sender_type="user").count() == 1
    assert not Contact.objects.filter(pk=ann_again.pk).exists()
    assert Conversation.objects.filter(contact=morning["ann"]).count() == 2
    assert list(ContactNote.objects.values_list("content", flat=True)) == ["Prefers a call after 7 pm."]
    assert browser.console_errors == []
