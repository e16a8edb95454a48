"""Syncing WhatsApp templates from a Graph API played by a real HTTP server on 127.0.0.1: pages followed, approved
templates upserted, others not offered, errors reported; the admin's "Sync templates" action with none ticked."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import Client

from helpdesk.models import Inbox, Membership, WhatsAppTemplate
from helpdesk.services.whatsapp_templates import SyncFailed, whatsapp_templates_sync
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db

WABA = "102290129340398"
TOKEN = "EAAGm0PX4ZCpsBAKZCZA0ZD"


class Graph:
    """Answers GET /v21.0/{WABA}/message_templates from `pages` (page 2 reached through paging.next)."""

    def __init__(self) -> None:
        self.pages: list[dict[str, Any]] = []
        self.status = 200
        self.requests: list[tuple[str, str]] = []
        graph = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                graph.requests.append((self.path, self.headers.get("Authorization", "")))
                page = 1 if "after=CURSOR2" in self.path else 0
                body = graph.pages[page] if graph.status == 200 else {"error": {"code": 190, "message": "x"}}
                payload = json.dumps(body).encode()
                self.send_response(graph.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def graph() -> Iterator[Graph]:
    server = Graph()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def _template(name: str, status: str, body: str, header: str | None = None) -> dict[str, Any]:
    components: list[dict[str, Any]] = [{"type": "BODY", "text": body}]
    if header:
        components.insert(0, {"type": "HEADER", "format": "TEXT", "text": header})
    return {
        "name": name,
        "language": "en_US",
        "status": status,
        "category": "UTILITY",
        "components": components,
    }


@pytest.fixture
def inbox(graph: Graph) -> Inbox:
    graph.pages = [
        {
            "data": [
                _template("order_update", "APPROVED", "Hi {{1}}, order {{2}} shipped.", header="Your order"),
                _template("promo", "PENDING", "Sale!"),
            ],
            "paging": {"next": f"{graph.base_url}/v21.0/{WABA}/message_templates?after=CURSOR2"},
        },
        {"data": [_template("follow_up", "APPROVED", "Still need help with {{1}}?")], "paging": {}},
    ]
    return InboxFactory(
        channel_type=Inbox.ChannelType.WHATSAPP,
        access_token=TOKEN,
        provider_config={"phone_number_id": "1065", "waba_id": WABA, "api_base_url": graph.base_url},
    )


def test_sync_follows_pages_and_upserts_approved(graph: Graph, inbox: Inbox) -> None:
    WhatsAppTemplate.objects.create(inbox=inbox, name="order_update", language="en_US", body="old {{1}}")
    result = whatsapp_templates_sync(inbox=inbox)
    assert (result.saved, result.skipped) == (2, 1)
    assert graph.requests[0] == (
        f"/v21.0/{WABA}/message_templates?fields=name,language,status,category,components&limit=100",
        f"Bearer {TOKEN}",
    )
    assert len(graph.requests) == 2
    rows = {t.name: t for t in WhatsAppTemplate.objects.filter(inbox=inbox)}
    assert set(rows) == {"order_update", "follow_up"}
    assert rows["order_update"].body == "Hi {{1}}, order {{2}} shipped."
    assert (rows["order_update"].variables, rows["order_update"].header_text) == (2, "Your order")
    assert rows["follow_up"].variables == 1


def test_a_template_no_longer_approved_is_marked(graph: Graph, inbox: Inbox) -> None:
    WhatsAppTemplate.objects.create(inbox=inbox, name="promo", language="en_US", body="Sale!")
    whatsapp_templates_sync(inbox=inbox)
    assert WhatsAppTemplate.objects.get(inbox=inbox, name="promo").status == WhatsAppTemplate.Status.PENDING


def test_meta_error_and_missing_account_id_are_reported(graph: Graph, inbox: Inbox) -> None:
    graph.status = 401
    with pytest.raises(SyncFailed, match="HTTP 401"):
        whatsapp_templates_sync(inbox=inbox)
    inbox.provider_config = {"phone_number_id": "1065", "api_base_url": graph.base_url}
    with pytest.raises(SyncFailed, match="waba_id"):
        whatsapp_templates_sync(inbox=inbox)
    assert not WhatsAppTemplate.objects.exists()


def test_outbound_policy_refuses_an_unlisted_host(settings: Any, graph: Graph, inbox: Inbox) -> None:
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    with pytest.raises(SyncFailed, match="outbound policy"):
        whatsapp_templates_sync(inbox=inbox)
    assert graph.requests == []


def test_admin_sync_action_with_none_ticked(graph: Graph, inbox: Inbox) -> None:
    user = UserFactory(is_staff=True)
    MembershipFactory(account=inbox.account, user=user, role=Membership.Role.ADMIN)
    other = InboxFactory(
        account=AccountFactory(),
        channel_type=Inbox.ChannelType.WHATSAPP,
        access_token=TOKEN,
        provider_config={"waba_id": WABA, "api_base_url": graph.base_url},
    )
    client = Client()
    client.force_login(user)
    response = client.post(
        "/admin/helpdesk/whatsapptemplate/", {"action": "sync_templates", "index": 0}, follow=True
    )
    assert response.status_code == 200
    assert "2 approved templates saved, 1 skipped" in response.content.decode()
    assert WhatsAppTemplate.objects.filter(inbox=inbox).count() == 2
    assert not WhatsAppTemplate.objects.filter(inbox=other).exists()  # another account's inbox is not synced


def test_the_inbox_admin_takes_the_business_account_id() -> None:
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WHATSAPP, provider_config={"phone_number_id": "1065"})
    user = UserFactory(is_staff=True)
    MembershipFactory(account=inbox.account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    page = client.get(url)
    assert "WhatsApp Business Account ID" in page.content.decode()
    refused = client.post(url, admin_form_data(page) | {"whatsapp_waba_id": "../x"})
    assert refused.context["adminform"].form.errors["whatsapp_waba_id"] == [
        "Must be the digits of Meta's WhatsApp Business Account id."
    ]
    saved = client.post(url, admin_form_data(page) | {"whatsapp_waba_id": WABA})
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    inbox.refresh_from_db()
    assert inbox.provider_config["waba_id"] == WABA
