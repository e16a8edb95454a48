"""Attaching files to a reply and a note in a real browser (Debian's chromium through Playwright): the chosen files
are listed with a remove button before sending, the sent ones show in the thread as thumbnails and links, and a
file over the channel's limit is refused with the reason shown and nothing sent. At a laptop's and a phone's
width (375 px), under the production CSP (no console error). The website widget shows a reply's file as a link."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Attachment, Delivery, Inbox, Membership, Message
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)
from tests.support.fake_files import JPEG, PNG

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PDF = b"%PDF-1.7\n" + b"1 0 obj <<>> endobj\n" * 40


def _png(width: int, height: int) -> bytes:
    """A real PNG (solid blue) a browser can draw: the thread's thumbnail must load, not only be in the page."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x20\x60\xe0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PHOTO = _png(64, 48)
WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


@pytest.fixture
def desk(redis_url):
    """An agent and a WhatsApp conversation with Dana (WhatsApp takes images up to 5 MB)."""
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="WhatsApp", channel_type=Inbox.ChannelType.WHATSAPP)
    agent = UserFactory(username="bob", first_name="Bob")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    link = ContactInboxFactory(inbox=inbox, contact__name="Dana", source_id="16505551234")
    conversation = ConversationFactory(contact_inbox=link, status="open")
    MessageFactory(conversation=conversation, content="Can you send me the invoice?")
    return {"account": account, "conversation": conversation}


def open_conversation(browser, sign_in, live_server, desk, width: int, height: int):
    page = browser.page
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    page.goto(f"{live_server.url}/app/accounts/{desk['account'].id}/conversations/{desk['conversation'].id}/")
    expect(page.locator("#composer")).to_be_visible()
    return page


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.parametrize("device", list(WIDTHS))
def test_two_files_attached_to_a_reply_are_sent_and_shown_in_the_thread(
    browser, sign_in, live_server, desk, device
):
    page = open_conversation(browser, sign_in, live_server, desk, *WIDTHS[device])
    hint = page.locator("#composer-files-hint")
    expect(hint).to_be_hidden()  # the limits show once files are chosen, not pushing the composer down before
    page.get_by_label("Attach files").set_input_files(
        [
            {"name": "receipt.pdf", "mimeType": "application/pdf", "buffer": PDF},
            {
                "name": "photo-of-the-parcel-with-a-rather-long-name.png",
                "mimeType": "image/png",
                "buffer": PHOTO,
            },
            {"name": "wrong.jpg", "mimeType": "image/jpeg", "buffer": JPEG},
        ]
    )
    chosen = page.locator("#chosen-files li")
    expect(chosen).to_have_count(3)
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("at most 10")
    page.get_by_role("button", name="Remove wrong.jpg").click()
    expect(chosen).to_have_count(2)
    expect(chosen.nth(0)).to_contain_text("receipt.pdf")
    expect(chosen.nth(1)).to_contain_text("photo-of-the-parcel-with-a-rather-long-name.png")
    assert no_sideways_scroll(page)
    browser.shot(f"{device}-chosen")

    page.fill("#composer-text", "Here is the invoice and a photo of the parcel.")
    page.click("button.send")
    expect(page.locator(".flash li.success")).to_contain_text("Reply queued for delivery.")
    sent = page.locator("li.msg.human").last
    expect(sent).to_contain_text("Here is the invoice")
    expect(sent.get_by_role("link", name="receipt.pdf")).to_be_visible()
    thumb = sent.locator("img.thumb")
    expect(thumb).to_be_visible()
    thumb.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete", arg=thumb.element_handle())
    assert thumb.evaluate("img => img.naturalWidth") == 64  # the stored bytes, served back and drawn
    assert no_sideways_scroll(page)
    browser.shot(f"{device}-sent")

    message = Message.objects.get(content__startswith="Here is the invoice")
    assert [(f.file_name, f.status) for f in message.files.order_by("id")] == [
        ("receipt.pdf", Attachment.Status.STORED),
        ("photo-of-the-parcel-with-a-rather-long-name.png", Attachment.Status.STORED),
    ]
    assert Delivery.objects.get(pk=message.pk).status == Delivery.Status.QUEUED
    link = sent.get_by_role("link", name="receipt.pdf").get_attribute("href")
    assert page.request.get(f"{live_server.url}{link}").body() == PDF
    assert browser.console_errors == []


def test_a_file_over_the_channels_limit_is_refused_with_the_reason_shown(browser, sign_in, live_server, desk):
    page = open_conversation(browser, sign_in, live_server, desk, *WIDTHS["phone"])
    big = JPEG + b"\x00" * (5 * 1000 * 1000 + 1 - len(JPEG))
    page.get_by_label("Attach files").set_input_files(
        [
            {"name": "ok.png", "mimeType": "image/png", "buffer": PNG},
            {"name": "big.jpg", "mimeType": "image/jpeg", "buffer": big},
        ]
    )
    expect(page.locator("#chosen-files li")).to_have_count(2)
    page.fill("#composer-text", "Two photos")
    page.click("button.send")
    expect(page.locator(".flash li.error")).to_have_text(
        "“big.jpg” cannot be attached: it is 5.1 MB, and WhatsApp Cloud takes files up to 5 MB."
    )
    # Nothing typed is lost: the page the refusal comes back to has the text in the composer, still a reply.
    expect(page.locator("#composer-text")).to_have_value("Two photos")
    expect(page.get_by_role("radio", name="Reply to the customer")).to_be_checked()
    assert no_sideways_scroll(page)
    browser.shot("refused")
    assert not Message.objects.filter(content="Two photos").exists()
    assert not Attachment.objects.exists()
    assert browser.console_errors == []


def test_a_note_with_a_file_alone_stays_in_the_helpdesk(browser, sign_in, live_server, desk):
    page = open_conversation(browser, sign_in, live_server, desk, *WIDTHS["laptop"])
    page.get_by_role("radio", name="Private note").check()
    page.get_by_label("Attach files").set_input_files(
        [{"name": "scan.pdf", "mimeType": "application/pdf", "buffer": PDF}]
    )
    page.click("button.send")  # no text: the file alone is the note
    expect(page.locator(".flash li.success")).to_contain_text("Private note added.")
    note = page.locator("li.msg.note").last
    expect(note.get_by_role("link", name="scan.pdf")).to_be_visible()
    stored = Message.objects.get(private=True)
    assert stored.files.get().file_name == "scan.pdf"
    assert not Delivery.objects.filter(pk=stored.pk).exists()
    assert browser.console_errors == []


def test_the_website_widget_shows_a_replys_files_as_links_that_open_them(
    browser, live_server, redis_url, settings
):
    settings.PUBLIC_BASE_URL = live_server.url  # the signed links point at the helpdesk serving this test
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="")
    shop = DemoPage(helpdesk=live_server.url, website_token=inbox.webhook_token).start()
    inbox.provider_config = {"allowed_origins": shop.origin}
    inbox.save(update_fields=["provider_config"])
    try:
        page = browser.page
        page.set_viewport_size({"width": 375, "height": 740})
        page.goto(shop.origin + "/")
        page.get_by_role("button", name="Open chat").click()
        page.get_by_label("Your message").fill("Can I have the invoice?")
        page.get_by_label("Your message").press("Enter")
        expect(page.locator("[data-widget-message=visitor]")).to_have_count(1)
        conversation = Message.objects.get(content="Can I have the invoice?").conversation
        message_create_agent_reply(
            conversation=conversation,
            user=UserFactory(),
            content="Here it is",
            files=[SimpleUploadedFile("invoice.pdf", PDF, "application/pdf")],
        )
        page.reload()  # the visitor comes back: the thread is read again
        page.get_by_role("button", name="Open chat").click()
        link = page.locator("[data-widget-message=reply] [data-widget-file]")
        expect(link).to_have_text("invoice.pdf")
        browser.shot("widget-file-link")
        href = link.get_attribute("href")
        assert href.startswith(f"{live_server.url}/files/")
        assert page.request.get(href).body() == PDF  # no login: the signature opens it
        assert browser.console_errors == []
    finally:
        shop.stop()
