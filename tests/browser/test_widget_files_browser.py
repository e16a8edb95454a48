"""The website widget in chromium, on the demo's shop page (another loopback origin, its own strict CSP), with the
helpdesk served by pytest-django's live server: the visitor sends a photo from the attach button (the browser's
own file chooser), sees it named in the thread, and the team has it stored; a PDF is refused with the reason
shown and nothing stored. At a phone's width (375 px)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Attachment, Inbox, Message
from tests.browser.conftest import Browser
from tests.factories import InboxFactory
from tests.support.fake_files import PNG

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PDF = b"%PDF-1.7\n" + b"1 0 obj <<>> endobj\n" * 40


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def test_a_visitor_sends_a_photo_and_a_refused_pdf_says_why(
    browser: Browser, live_server, redis_url, tmp_path
):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="")
    shop = DemoPage(helpdesk=live_server.url, website_token=inbox.webhook_token).start()
    inbox.provider_config = {"allowed_origins": shop.origin}
    inbox.save(update_fields=["provider_config"])
    photo, scan = tmp_path / "photo.png", tmp_path / "scan.pdf"
    photo.write_bytes(PNG)
    scan.write_bytes(PDF)
    try:
        page = browser.page
        page.set_viewport_size({"width": 375, "height": 740})
        page.goto(shop.origin + "/")
        page.get_by_role("button", name="Open chat").click()
        expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")

        with page.expect_file_chooser() as chooser:
            page.get_by_role("button", name="Attach a file (image or audio)").click()
        chooser.value.set_files(str(photo))

        expect(page.locator("[data-widget-message=visitor] [data-widget-own-file]")).to_have_text("photo.png")
        expect(page.get_by_label("Your message")).to_be_focused()
        browser.shot("widget-photo-sent-phone")
        (stored,) = Attachment.objects.filter(message__inbox=inbox)
        assert (stored.status, stored.content_type, stored.file_name) == (
            Attachment.Status.STORED,
            "image/png",
            "photo.png",
        )
        assert stored.file.read() == PNG

        with page.expect_file_chooser() as chooser:
            page.get_by_role("button", name="Attach a file (image or audio)").click()
        chooser.value.set_files(str(scan))

        expect(page.locator("[data-widget-status]")).to_have_text(
            "This file could not be sent. Files of type application/pdf are not accepted."
        )
        browser.shot("widget-pdf-refused-phone")
        assert Message.objects.filter(inbox=inbox).count() == 1
        page.reload()
        page.get_by_role("button", name="Open chat").click()
        expect(page.locator("[data-widget-own-file]")).to_have_text(["photo.png"])  # kept after a reload
        # The one error the browser logs is the refused file's 400: no CSP violation, no other failure.
        assert browser.console_errors == [
            "Failed to load resource: the server responded with a status of 400 (Bad Request)"
        ]
    finally:
        shop.stop()
