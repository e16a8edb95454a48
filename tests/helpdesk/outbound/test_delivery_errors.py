"""Deliveries through the outbound policy: what a remote server sends never reaches the error people read, and
a URL the policy refuses at send time fails for good with our reason."""

from __future__ import annotations

import logging

import pytest

from helpdesk.channels import slack, telegram, whatsapp
from helpdesk.models import Inbox, Message
from helpdesk.outbound import check_url
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.helpdesk.outbound.raw_server import RawServer, http_answer, raw_answer
from tests.support.fake_provider import Answer, FakeProvider
from tests.support.outbox import delivery_of
from tests.support.webhook_fixtures import outgoing_message

pytestmark = pytest.mark.django_db

MARKER = "MARKER-internal-db-password-4f1e9c"
BOT_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def api_message(callback_url: str) -> Message:
    link = AssistantInboxFactory(inbox__callback_url=callback_url, inbox__secret="s3cret")
    return outgoing_message(link.inbox, source_id="customer-1")


def everything_people_and_logs_see(message: Message, caplog) -> str:
    message.refresh_from_db()
    activities = message.conversation.messages.filter(message_type=Message.Type.ACTIVITY)
    return "\n".join([delivery_of(message).error, *activities.values_list("content", flat=True), caplog.text])


def test_a_callback_answering_500_with_a_body_leaves_the_body_out_of_the_error_and_activity(settings, caplog):
    settings.HELPDESK = {**settings.HELPDESK, "DELIVERY_MAX_RETRIES": 0}  # fail for good on the first 500
    caplog.set_level(logging.DEBUG)
    body = f"<html>Traceback ... {MARKER} ...</html>".encode()
    with RawServer(http_answer(500, body, {"Content-Type": "text/html"})) as server:
        message = api_message(server.url)
        assert message_deliver.apply(args=[message.id]).get() == "failed"
    seen = everything_people_and_logs_see(message, caplog)
    assert delivery_of(message).error == "callback answered HTTP 500"
    assert "A reply could not be delivered: callback answered HTTP 500" in seen
    assert MARKER not in seen


def test_a_server_that_does_not_speak_http_is_not_quoted(settings, caplog):
    """h11's protocol errors quote the bytes received (an SSH or Redis banner); only the error type is kept.
    (httpcore's own DEBUG trace still logs the exception's repr; production logs at INFO.)"""
    settings.HELPDESK = {**settings.HELPDESK, "DELIVERY_MAX_RETRIES": 0}
    caplog.set_level(logging.INFO)
    with RawServer(raw_answer(f"SSH-2.0-OpenSSH_9.6 {MARKER}\r\n\r\n".encode())) as server:
        message = api_message(server.url)
        assert message_deliver.apply(args=[message.id]).get() == "failed"
    seen = everything_people_and_logs_see(message, caplog)
    assert delivery_of(message).error == "network error talking to the callback (RemoteProtocolError)"
    assert MARKER not in seen


@pytest.mark.parametrize(
    "headers",
    [{"Content-Type": "text/html"}, {"Content-Encoding": "gzip"}],
    ids=["larger than the limit", "compressed"],
)
def test_a_callback_that_accepts_with_a_body_we_would_refuse_is_still_sent(outbound_settings, headers):
    """Only the status of a callback's answer counts, so its body is never read, and never refused."""
    outbound_settings(allowed_hosts=["127.0.0.1"], max_bytes=1024)
    with RawServer(http_answer(200, b"z" * 4096, headers)) as server:
        message = api_message(server.url)
        assert message_deliver.apply(args=[message.id]).get() == "sent"


def test_a_redirecting_callback_fails_for_good_and_is_not_followed(settings):
    with RawServer(http_answer(307, headers={"Location": "https://169.254.169.254/"})) as server:
        message = api_message(server.url)
        assert message_deliver.apply(args=[message.id]).get() == "failed"
        assert len(server.requests) == 1
    assert delivery_of(message).error == "callback answered HTTP 307 (redirects are not followed)"


def test_a_callback_that_rebinds_to_a_private_address_fails_for_good_with_our_reason(dns, outbound_settings):
    outbound_settings()
    dns.answer("hooks.example.com", "93.184.216.34")  # what the admin's check saw on save
    dns.answer("hooks.example.com", "10.0.0.5")  # what the name resolves to when the reply is sent
    check_url("https://hooks.example.com/cb")
    message = api_message("https://hooks.example.com/cb")
    assert message_deliver.apply(args=[message.id]).get() == "failed"  # permanent: no retry
    message.refresh_from_db()
    assert delivery_of(message).attempts == 1
    assert delivery_of(message).error == "callback refused by the outbound policy: address is private"
    activity = message.conversation.messages.get(message_type=Message.Type.ACTIVITY)
    assert activity.content == (
        "A reply could not be delivered: callback refused by the outbound policy: address is private"
    )


def test_a_provider_api_base_url_saved_before_the_policy_is_refused_at_send_time(outbound_settings):
    outbound_settings()
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": "http://169.254.169.254"},
    )
    result = telegram.send(inbox=inbox, source_id="42", text="hi", timeout=5).result
    assert (result.ok, result.permanent) == (False, True)
    assert (
        result.error
        == "provider API refused by the outbound policy: plain http is not allowed for this host, only https"
    )
    assert BOT_TOKEN not in result.error


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.mark.parametrize(
    ("channel", "channel_type", "config", "answer", "expected"),
    [
        (
            telegram,
            Inbox.ChannelType.TELEGRAM,
            {},
            Answer(400, {"ok": False, "error_code": 400, "description": f"Bad Request: {MARKER}"}),
            "Telegram HTTP 400: unrecognised error",
        ),
        (
            telegram,
            Inbox.ChannelType.TELEGRAM,
            {},
            Answer(500, f"<html>{MARKER}</html>".encode()),
            "Telegram HTTP 500: unrecognised error",
        ),
        (
            whatsapp,
            Inbox.ChannelType.WHATSAPP,
            {"phone_number_id": "106540352242922"},
            Answer(400, {"error": {"code": 100, "message": MARKER, "error_data": {"details": MARKER}}}),
            "WhatsApp HTTP 400 code 100: invalid parameter (check phone_number_id and the recipient)",
        ),
        (
            whatsapp,
            Inbox.ChannelType.WHATSAPP,
            {"phone_number_id": "106540352242922"},
            Answer(502, f"<html>{MARKER}</html>".encode()),
            "WhatsApp HTTP 502 no error code",
        ),
        (
            slack,
            Inbox.ChannelType.SLACK,
            {},
            Answer(200, {"ok": False, "error": MARKER.lower().replace("-", "_")}),
            "Slack HTTP 200: unrecognised error code",
        ),
        (
            slack,
            Inbox.ChannelType.SLACK,
            {},
            Answer(503, f"<html>{MARKER}</html>".encode()),
            "Slack HTTP 503: no error code",
        ),
    ],
)
def test_provider_errors_carry_the_status_and_our_classification_only(
    provider, channel, channel_type, config, answer, expected
):
    inbox = InboxFactory(
        channel_type=channel_type,
        access_token=BOT_TOKEN,
        provider_config={**config, "api_base_url": provider.base_url},
    )
    provider.script("", answer)  # every path ends with "": the next request gets this answer
    result = channel.send(inbox=inbox, source_id="C1:U1" if channel is slack else "42", text="hi", timeout=5)
    assert result.result.error == expected
    assert MARKER.lower() not in result.result.error.lower()
