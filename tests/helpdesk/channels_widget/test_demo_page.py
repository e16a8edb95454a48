"""The demo's widget: the seed adds a website widget inbox answered by the demo assistant, and
`helpdesk_widget_page` serves the shop page for it (its behaviour in chromium: tests/browser/test_widget_browser.py)."""

from __future__ import annotations

import httpx
import pytest
from django.core.management import CommandError, call_command

from captain.assistants.models import AssistantInbox
from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Inbox

pytestmark = pytest.mark.django_db


def test_the_demo_seed_adds_a_widget_inbox_for_the_local_shop_page(settings):
    settings.DEBUG = True
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")  # safe to run again

    (widget,) = Inbox.objects.filter(channel_type=Inbox.ChannelType.WIDGET)
    assert "http://127.0.0.1:8090" in widget.provider_config["allowed_origins"].split()
    assert AssistantInbox.objects.filter(inbox=widget).exists()


def test_the_shop_page_carries_the_script_tag_under_a_strict_policy():
    page = DemoPage(helpdesk="http://127.0.0.1:8000", website_token="tok-1").start()
    try:
        response = httpx.get(page.origin + "/", timeout=5)
    finally:
        page.stop()
    assert (
        "<script src='http://127.0.0.1:8000/static/helpdesk/widget/widget.js' data-website-token='tok-1' async>"
        in response.text
    )
    policy = response.headers["content-security-policy"]
    assert "script-src http://127.0.0.1:8000;" in policy
    assert "'unsafe-inline'" not in policy


def test_the_page_command_needs_a_widget_inbox():
    with pytest.raises(CommandError, match="No widget inbox"):
        call_command("helpdesk_widget_page")
