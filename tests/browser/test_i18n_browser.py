"""The dashboard in Simplified Chinese in a real browser (Debian's chromium through Playwright) on a phone's
screen: a browser that asks for Chinese gets the sign-in page, the top bar and the folders in Chinese, with no
English left in the navigation; Chinese words are wider than English ones, and still nothing scrolls sideways on
the inbox or a conversation. The top bar's language menu then switches the person to English for good."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership, PersonSettings
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 740}
# Words the navigation may show in Latin letters: the product's name, the person, the account, the name of
# the English language in the language menu, and "AI" and "FAQ", which Chinese support teams write as they are.
NAMES = {"Captain", "Helpdesk", "wang", "Acme", "English", "AI", "FAQ"}


@pytest.fixture
def queue(redis_url):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="网站客服")
    agent = UserFactory(username="wang", first_name="Wang")
    MembershipFactory(account=account, user=agent, role=Membership.Role.ADMIN)
    conversations = []
    for n in range(3):
        link = ContactInboxFactory(inbox=inbox, contact__name=f"客户{n}", source_id=f"visitor-{n}")
        conversation = ConversationFactory(
            contact_inbox=link, status=Conversation.Status.OPEN, waiting_since=timezone.now()
        )
        MessageFactory(conversation=conversation, content=f"我的订单{n}还没到，请帮我查一下物流。" * 3)
        conversations.append(conversation)
    return {"account": account, "agent": agent, "conversations": conversations}


def horizontal_overflow(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


def english_words_in(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in NAMES]


def navigation_text(page) -> str:
    """What the top bar and the folder list say (links, labels, buttons, options, titles and aria labels),
    hidden labels included; not the markup inside <noscript>, which a browser with scripts reads as text."""
    return page.evaluate(
        """[...document.querySelectorAll('header.topbar, aside.sidebar')].map(el => {
            const copy = el.cloneNode(true);
            copy.querySelectorAll('noscript, script, style').forEach(x => x.remove());
            const attrs = [...copy.querySelectorAll('[title], [aria-label]')]
                .map(x => (x.getAttribute('title') || '') + ' ' + (x.getAttribute('aria-label') || ''));
            return copy.textContent + ' ' + attrs.join(' ');
        }).join(' ')"""
    )


def test_a_chinese_browser_on_a_phone_gets_the_dashboard_in_chinese(browser, sign_in, live_server, queue):
    page = browser.page
    page.set_viewport_size(PHONE)
    page.set_extra_http_headers({"Accept-Language": "zh-CN,zh;q=0.9"})
    base = f"{live_server.url}/app/accounts/{queue['account'].id}"

    page.goto(f"{live_server.url}/auth/login/?next={base}/lists/needs-people/")
    expect(page.locator("h1")).to_have_text("登录")
    sign_in(page, live_server.url, "wang", go=False, wait_for="**/lists/needs-people/", button="登录")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.locator("aside.sidebar")).to_contain_text("待人工处理")
    assert english_words_in(navigation_text(page)) == []
    expect(page.locator("tr[data-conversation]")).to_have_count(3)
    assert horizontal_overflow(page) <= 0
    browser.shot("phone-inbox-zh")

    page.goto(f"{base}/conversations/{queue['conversations'][0].id}/")
    expect(page.locator("#composer")).to_be_visible()
    page.wait_for_timeout(200)  # the page scrolls to the latest messages once loaded
    assert horizontal_overflow(page) <= 0
    assert english_words_in(navigation_text(page)) == []
    browser.shot("phone-conversation-zh")
    assert browser.console_errors == []


def test_the_language_menu_switches_the_person_to_english_on_every_page(browser, sign_in, live_server, queue):
    page = browser.page
    page.set_viewport_size(PHONE)
    page.set_extra_http_headers({"Accept-Language": "zh-CN,zh;q=0.9"})
    base = f"{live_server.url}/app/accounts/{queue['account'].id}"
    sign_in(
        page,
        live_server.url,
        "wang",
        next_path=f"{base}/canned-responses/",
        wait_for="**/canned-responses/",
        button="登录",
    )
    expect(page.locator("h1")).to_have_text("快捷回复")

    page.select_option("#language-select", "en")  # submits on change
    expect(page.locator("h1")).to_have_text("Canned responses")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert PersonSettings.objects.get(user=queue["agent"]).language == "en"
    page.goto(f"{base}/lists/needs-people/")  # the Chinese browser is overruled everywhere
    expect(page.locator("aside.sidebar")).to_contain_text("Needs people")
    assert horizontal_overflow(page) <= 0
    browser.shot("phone-switched-to-english")
    assert browser.console_errors == []
