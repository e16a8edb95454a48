"""Saving an inbox: the callback URL and `provider_config` go through the outbound policy, and
`provider_config` holds only the keys its channel documents. (No REST endpoint writes inboxes: the admin is
the one place they are edited.)"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.channels.provider_config import validate_provider_config
from helpdesk.models import Inbox
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db

TELEGRAM_ADDRESS = "149.154.167.220"


@pytest.fixture(autouse=True)
def _policy(outbound_settings, dns):
    outbound_settings()  # nothing allowlisted: the production default
    dns.answer("api.telegram.org", TELEGRAM_ADDRESS)
    dns.answer("hooks.example.com", "93.184.216.34")
    dns.answer("localhost", "127.0.0.1")


def add_inbox(admin_client, **fields: str):
    data = {"account": AccountFactory().pk, "name": "Inbox", "channel_type": "api", **fields}
    return admin_client.post("/admin/helpdesk/inbox/add/", data)


def form_errors(response) -> dict[str, list[str]]:
    assert response.status_code == 200  # the form again, with its errors
    return response.context["adminform"].form.errors


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/", "address is a cloud metadata service"),
        ("http://10.0.0.8/hook", "address is private"),
        ("http://localhost:6379/", "address is loopback"),
        ("http://[::1]/", "address is loopback"),
        ("https://hooks.example.com.evil:x@127.0.0.1/", "credentials in the URL are not allowed"),
        ("http://hooks.example.com/cb", "plain http is not allowed for this host, only https"),
    ],
)
def test_admin_refuses_a_callback_url_the_policy_refuses(admin_client, url, reason):
    response = add_inbox(admin_client, callback_url=url)
    assert form_errors(response)["callback_url"] == [f"This URL is refused by the outbound policy: {reason}."]
    assert f"This URL is refused by the outbound policy: {reason}." in response.content.decode()
    assert not Inbox.objects.exists()


def test_admin_saves_a_public_https_callback_url(admin_client):
    response = add_inbox(admin_client, callback_url="https://hooks.example.com/cb")
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Inbox.objects.get().callback_url == "https://hooks.example.com/cb"


def test_admin_refuses_a_file_url_as_api_base_url_naming_the_key(admin_client):
    response = add_inbox(
        admin_client, channel_type="telegram", provider_config='{"api_base_url": "file:///etc/passwd"}'
    )
    assert form_errors(response)["provider_config"] == [
        'provider_config["api_base_url"] is refused by the outbound policy: '
        "scheme 'file' is not allowed, only https."
    ]
    assert not Inbox.objects.exists()


@pytest.mark.parametrize(
    ("channel_type", "config", "message"),
    [
        ("telegram", {"api_base_url": "https://169.254.169.254"}, "address is a cloud metadata service"),
        ("telegram", {"api_base_url": "https://api.telegram.org?x=1"}, "must not have a query or fragment"),
        (
            "telegram",
            {"apibase_url": "https://api.telegram.org"},
            'provider_config["apibase_url"] is not a setting',
        ),
        (
            "api",
            {"api_base_url": "https://api.telegram.org"},
            "known keys: business_hours, time_zone, away_message",
        ),
        (
            "whatsapp",
            {"phone_number_id": "../../me"},
            'provider_config["phone_number_id"] must be the digits',
        ),
        ("whatsapp", {"api_version": "v21.0/../x"}, 'provider_config["api_version"] must look like'),
        ("whatsapp", {"phone_number_id": 123}, 'provider_config["phone_number_id"] must be a string'),
        ("slack", {"bot_user_id": "U1 <script>"}, 'provider_config["bot_user_id"] must be a Slack user id'),
        ("slack", ["api_base_url"], "must be a JSON object"),
    ],
)
def test_provider_config_errors_name_the_bad_key(channel_type, config, message):
    with pytest.raises(ValidationError) as invalid:
        validate_provider_config(channel_type, config)
    assert message in invalid.value.messages[0]


def test_every_documented_key_is_accepted_and_empty_values_mean_the_default():
    validate_provider_config(
        "whatsapp",
        {
            "phone_number_id": "106540352242922",
            "verify_token": "any text the operator chose",
            "api_version": "v21.0",
            "api_base_url": "https://api.telegram.org",
        },
    )
    validate_provider_config("slack", {"bot_user_id": "U0LAN0Z89", "api_base_url": ""})
    validate_provider_config("telegram", {})
    validate_provider_config("api", {})


def test_admin_saves_a_valid_provider_config(admin_client):
    response = add_inbox(
        admin_client,
        channel_type="whatsapp",
        provider_config='{"phone_number_id": "106540352242922", "verify_token": "v", "api_version": "v21.0"}',
    )
    assert response.status_code == 302
    assert Inbox.objects.get().provider_config["phone_number_id"] == "106540352242922"
