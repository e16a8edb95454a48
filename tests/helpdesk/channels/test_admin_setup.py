"""Setting up a provider inbox in the admin: the access token is write-only, the webhook URL is per channel."""

from __future__ import annotations

import ipaddress

import pytest

from helpdesk.models import Inbox
from helpdesk.outbound import policy
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


def test_telegram_inbox_keeps_its_token_write_only_and_shows_its_own_webhook_url(
    admin_client, settings, monkeypatch
):
    settings.PUBLIC_BASE_URL = "https://help.example.com"
    # The outbound policy resolves api_base_url on save, and no DNS server can run here: Telegram's address.
    telegram = ipaddress.ip_address("149.154.167.220")
    monkeypatch.setattr(policy, "resolve_host", lambda host, port: [telegram])
    account = AccountFactory()
    response = admin_client.post(
        "/admin/helpdesk/inbox/add/",
        {
            "account": account.pk,
            "name": "Bot",
            "channel_type": "telegram",
            "new_access_token": "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
            "provider_config": '{"api_base_url": "https://api.telegram.org"}',
        },
    )
    assert response.status_code == 302
    inbox = Inbox.objects.get(name="Bot")
    assert inbox.access_token == "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    assert inbox.provider_config == {"api_base_url": "https://api.telegram.org"}
    html = admin_client.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/").content.decode()
    assert inbox.access_token not in html
    assert f"https://help.example.com/webhooks/telegram/{inbox.webhook_token}/" in html
    assert "setWebhook" in html
