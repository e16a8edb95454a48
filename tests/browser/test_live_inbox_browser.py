"""Live inbox: two agents of one account watch the "Unassigned" list in two browser contexts on the real web
server (gunicorn + uvicorn worker, ASGI) with a real redis-server. A signed webhook arrives on the API channel:
both lists show the new conversation and the folder counts go up, with no reload (the page is never navigated
and a marker set in its JavaScript survives). A webhook for another account changes nothing on their pages."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Membership
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stack(redis_url, tmp_path):
    acme, globex = AccountFactory(name="Acme"), AccountFactory(name="Globex")
    agents = {}
    for name in ("alice", "bob"):
        agents[name] = UserFactory(username=name, first_name=name.title())
        MembershipFactory(account=acme, user=agents[name], role=Membership.Role.AGENT)
    inbox = InboxFactory(account=acme, name="Website API", secret="live-secret")
    other_inbox = InboxFactory(account=globex, name="Globex API", secret="other-secret")
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    try:
        yield {"acme": acme, "inbox": inbox, "other_inbox": other_inbox, "server": server}
    finally:
        server.stop()


def send_webhook(server, inbox, message_id: str, text: str) -> None:
    body = json.dumps({"message_id": message_id, "contact": {"id": message_id, "name": "Ann"}, "text": text})
    response = httpx.post(
        f"{server.url}/webhooks/api/{inbox.webhook_token}/",
        content=body.encode(),
        headers={**signed_headers(inbox.secret, body.encode()), "Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def test_a_webhook_updates_both_agents_lists_and_counts_without_a_reload(stack, sign_in):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/setup --dev does)")
    server, acme = stack["server"], stack["acme"]
    list_url = f"{server.url}/app/accounts/{acme.id}/lists/unassigned/"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            pages, navigations, errors = {}, {}, {}
            for name in ("alice", "bob"):
                page = chromium.new_context(viewport={"width": 1360, "height": 900}).new_page()
                page.set_default_timeout(15_000)
                errors[name] = []
                page.on("console", lambda m, n=name: errors[n].append(m.text) if m.type == "error" else None)
                sign_in(page, server.url, name)
                page.goto(list_url)
                expect(page.locator("body")).to_have_attribute("data-live-state", "open")
                expect(page.locator('[data-folder-count="unassigned"]')).to_have_text("0")
                page.evaluate("window.__notReloaded = true")
                navigations[name] = []
                page.on("framenavigated", lambda frame, n=name: navigations[n].append(frame.url))
                pages[name] = page

            send_webhook(server, stack["inbox"], "live-1", "Hello, my parcel never arrived")
            send_webhook(server, stack["other_inbox"], "other-1", "Globex customer")

            for page in pages.values():
                expect(page.locator("table.conversations tbody tr")).to_have_count(1)
                expect(page.locator("table.conversations")).to_contain_text("my parcel never arrived")
                expect(page.locator('[data-folder-count="unassigned"]')).to_have_text("1")
                expect(page.locator('[data-folder-count="needs-people"]')).to_have_text("1")
                expect(page.locator("[data-live-region=list-total]")).to_have_text("(1)")

            send_webhook(server, stack["inbox"], "live-2", "A second customer")
            for name, page in pages.items():
                expect(page.locator("table.conversations tbody tr")).to_have_count(2)
                expect(page.locator('[data-folder-count="unassigned"]')).to_have_text("2")
                assert page.evaluate("window.__notReloaded === true"), f"{name}'s page was reloaded"
                assert navigations[name] == [], f"{name}'s page navigated: {navigations[name]}"
                # Another account's conversation never shows.
                assert "Globex customer" not in page.locator("main").inner_text()
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"live-inbox--{name}.png"), full_page=True)
            assert errors == {"alice": [], "bob": []}
        finally:
            chromium.close()
