"""Property-based fuzz of every channel webhook (Telegram, WhatsApp Cloud, Slack, the signed API channel).

Bodies start from each channel's real payloads (tests/fixtures/webhooks/<channel>/, the API channel's own
payload) and are mutated by tests/support/json_mutations.py, then:
- signed correctly and POSTed to the real webhook URL: the answer is 200 or 400, never 5xx; what a 200 stored is
  consistent (every message has its conversation and contact, no conversation without a message, nothing stored
  for an "ignored" answer); the same delivery again is a no-op with the same answer (providers retry);
- sent unsigned or wrongly signed: 401/403 and not one row added or changed in any helpdesk or captain table
  (the comparison leaves the span store aside, where signed requests keep their span; that refused ones store
  none there either is held by tests/helpdesk/webhooks/test_rejected_requests.py).
Each example runs in a savepoint rolled back afterwards, so examples cannot see each other's rows.
`pytest --hypothesis-show-statistics` shows how the examples were answered (200 accepted/ignored, 400 why).
Runs on SQLite in the main suite and on PostgreSQL in the `postgres` stage (which refuses NUL characters and
over-long values that SQLite stores). Plain regression tests for what the fuzz found are at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db.models import Count, F, Q
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from captain.answering.models import ReplyJob
from helpdesk.channels import api_channel, slack, telegram, whatsapp
from helpdesk.models import Contact, Conversation, Delivery, Inbox, Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.webhooks.test_api_channel import payload as api_payload
from tests.support.json_mutations import keywords_of, mutated_bodies, to_tree
from tests.support.outbox import delivery_of
from tests.support.row_state import database_state, rolled_back
from tests.support.webhook_fixtures import FIXTURES, fixture_body, fixture_json, outgoing_message

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

SIGNED_EXAMPLES = 250
FORGED_EXAMPLES = 50
FUZZ = hsettings(
    max_examples=SIGNED_EXAMPLES,
    deadline=None,
    derandomize=True,  # the same bodies on every run, so CI is repeatable
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# The wamid of the reply the WhatsApp `failed` status fixture reports on: an outgoing message with this id exists,
# so mutated statuses walk the whole failure path, and a forged one must leave it untouched.
FAILED_WAMID = "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBIyQjVFQjA4MjBFMTY0OUE2QzkA"


@dataclass(frozen=True)
class Channel:
    name: str
    channel_type: str
    secret: str
    provider_config: dict[str, str]
    documents: list[Any]
    sign: Callable[[str, bytes], dict[str, str]]
    body_bound: bool = True
    """Whether the credential covers the body (Telegram's secret token does not)."""
    timestamped: bool = False


def _fixtures(channel: str) -> list[Any]:
    return [fixture_json(channel, path.stem) for path in sorted((FIXTURES / channel).glob("*.json"))]


def _whatsapp_documents() -> list[Any]:
    """The fixtures, and one notification carrying a customer message and a `failed` status of our reply
    together (one change each), so mutations reach the order in which the two are handled."""
    mixed = fixture_json("whatsapp", "text_message")
    status_change = fixture_json("whatsapp", "status_failed_reengagement")["entry"][0]["changes"][0]
    mixed["entry"][0]["changes"].append(status_change)
    return [*_fixtures("whatsapp"), mixed]


def _api_documents() -> list[Any]:
    return [
        json.loads(api_payload()),
        {**json.loads(api_payload("m-2", text="Hi", contact_id="c-2")), "contact": {"id": "c-2"}},
    ]


CHANNELS = {
    c.name: c
    for c in [
        Channel(
            name="telegram",
            channel_type=Inbox.ChannelType.TELEGRAM,
            secret="tg_secret-token-123",
            provider_config={},
            documents=_fixtures("telegram"),
            sign=lambda secret, body: {telegram.SECRET_HEADER: secret},
            body_bound=False,
        ),
        Channel(
            name="whatsapp",
            channel_type=Inbox.ChannelType.WHATSAPP,
            secret="d6f1c0ffee0ddba11c0ffee0ddba11c0",
            provider_config={"phone_number_id": "106540352242922", "verify_token": "meatyhamhock"},
            documents=_whatsapp_documents(),
            sign=lambda secret, body: {whatsapp.SIGNATURE_HEADER: whatsapp.sign(secret, body)},
        ),
        Channel(
            name="slack",
            channel_type=Inbox.ChannelType.SLACK,
            secret="8f742231b10e8888abcd99yyyzzz85a5",
            provider_config={"bot_user_id": "U0LAN0Z89"},
            documents=_fixtures("slack"),
            sign=lambda secret, body: slack.signed_headers(secret, body),
            timestamped=True,
        ),
        Channel(
            name="api",
            channel_type=Inbox.ChannelType.API,
            secret="api-secret",
            provider_config={},
            documents=_api_documents(),
            sign=lambda secret, body: api_channel.signed_headers(secret, body),
            timestamped=True,
        ),
    ]
}
BODIES = {
    name: mutated_bodies(
        [to_tree(d) for d in channel.documents], [k for d in channel.documents for k in keywords_of(d)]
    )
    for name, channel in CHANNELS.items()
}
CHANNEL_NAMES = list(CHANNELS)


def make_inbox(channel: Channel) -> Inbox:
    """An inbox of `channel` served by an assistant; on WhatsApp with a sent reply the failed status names."""
    inbox = AssistantInboxFactory(
        inbox__channel_type=channel.channel_type,
        inbox__secret=channel.secret,
        inbox__provider_config=channel.provider_config,
        # Hundreds of requests a minute on purpose: the per-inbox limit is not what is tested here.
        inbox__webhook_rate_limit_per_minute=0,
    ).inbox
    if channel.name == "whatsapp":
        reply = outgoing_message(inbox, source_id="16505551234")
        Delivery.objects.filter(pk=reply.pk).update(
            status=Delivery.Status.SENT, provider_message_id=FAILED_WAMID
        )
    return inbox


@pytest.fixture
def channel_inbox(request) -> tuple[Channel, Inbox]:
    channel = CHANNELS[request.param]
    return channel, make_inbox(channel)


def post(client, channel: Channel, inbox: Inbox, body: bytes, headers: dict[str, str]):
    return client.post(
        f"/webhooks/{channel.name}/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=headers,
    )


# A WhatsApp `failed` status marks our reply failed and adds an activity line for people (not a customer
# message): the only change a notification without customer messages may make.
STATUS_EFFECTS = ("helpdesk.Message", "failed")


def assert_stored_rows_are_consistent() -> None:
    """What ingest promises whatever the payload: no half-stored message, every row linked to its own kind.
    Three queries (one per table), each listing the rows that break any of the table's rules."""
    incoming = Q(message_type=Message.Type.INCOMING)
    broken_messages = Message.objects.filter(
        (incoming & (Q(sender_contact__isnull=True) | Q(provider_message_id__isnull=True)))
        | (incoming & ~Q(sender_contact=F("conversation__contact")))
        | ~Q(inbox=F("conversation__inbox"))
        | ~Q(account=F("conversation__account"))
    )
    assert list(broken_messages.values("pk", "message_type", "sender_contact", "conversation")) == []
    broken_conversations = Conversation.objects.annotate(n=Count("messages")).filter(
        ~Q(contact=F("contact_inbox__contact")) | ~Q(inbox=F("contact_inbox__inbox")) | Q(n=0)
    )
    assert list(broken_conversations.values("pk", "contact", "inbox", "n")) == []
    assert list(Contact.objects.filter(contact_inboxes__isnull=True).values("pk")) == []


def _without(state: dict[str, int], keys: tuple[str, ...]) -> dict[str, int]:
    return {k: v for k, v in state.items() if k not in keys}


def assert_answer_matches_what_was_stored(
    response, before: dict[str, int], channel: Channel, inbox: Inbox
) -> dict[str, int]:
    """Check the answer against the rows it changed; returns the state after it."""
    after = database_state()
    assert response.status_code in (200, 400), response.content[:300]
    answer = response.json()
    status_effects = STATUS_EFFECTS if channel.name == "whatsapp" else ()
    if response.status_code == 400:
        assert after == before  # refused: nothing stored, nothing changed
        return after
    if answer.get("status") == "ignored" or "challenge" in answer:
        # Not a customer message (or Slack's handshake): stored nothing, started nothing.
        assert _without(after, status_effects) == _without(before, status_effects)
        return after
    assert answer["status"] == "accepted", answer
    ids = set(answer["message_ids"])
    stored = Message.objects.filter(pk__in=ids, inbox=inbox, message_type=Message.Type.INCOMING)
    assert stored.count() == len(ids)
    assert after["incoming"] - before["incoming"] == len(ids)
    assert after["helpdesk.Contact"] - before["helpdesk.Contact"] == (
        after["helpdesk.ContactInbox"] - before["helpdesk.ContactInbox"]
    )
    assert answer["conversation_id"] in set(stored.values_list("conversation_id", flat=True))
    # The AI is in charge of this inbox: every new conversation waits for it.
    assert not stored.exclude(reply_job__status=ReplyJob.Status.PENDING).exists()
    return after


@pytest.mark.parametrize("channel_inbox", CHANNEL_NAMES, indirect=True)
@FUZZ
@given(data=st.data())
def test_signed_mutated_payloads_never_answer_5xx_and_store_consistently(client, channel_inbox, data):
    channel, inbox = channel_inbox
    body = data.draw(BODIES[channel.name], label="body")
    with rolled_back():
        before = database_state()
        first = post(client, channel, inbox, body, channel.sign(channel.secret, body))
        after = assert_answer_matches_what_was_stored(first, before, channel, inbox)
        event(f"{first.status_code} {first.json().get('status') or first.json().get('error') or 'challenge'}")
        if first.status_code != 200:
            return  # refused, and proven to have stored nothing: a re-delivery is refused the same way

        # Providers re-deliver: the same request again changes nothing and gets the same kind of answer.
        assert_stored_rows_are_consistent()
        again = post(client, channel, inbox, body, channel.sign(channel.secret, body))
        assert again.status_code == 200
        assert database_state() == after
        if first.json().get("status") == "accepted":
            assert again.json()["status"] == "duplicate"
            assert again.json()["message_ids"] == first.json()["message_ids"]
        else:
            assert again.json() == first.json()


def _forgeries(channel: Channel) -> list[str]:
    kinds = ["missing", "wrong-secret", "empty", "truncated"]
    if channel.body_bound:
        kinds.append("other-body")
    if channel.timestamped:
        kinds += ["expired", "future"]
    return kinds


def forged_headers(channel: Channel, kind: str, body: bytes) -> dict[str, str]:
    secret = channel.secret
    if kind == "missing":
        return {}
    if kind == "wrong-secret":
        return channel.sign("not-" + secret, body)
    if kind == "other-body":
        return channel.sign(secret, body + b" ")
    if kind in ("expired", "future"):
        module = slack if channel.name == "slack" else api_channel
        # Well outside the 300 s window: at +301 s a slow request lands back inside it by the time it is checked.
        shift = -360 if kind == "expired" else 360
        return module.signed_headers(secret, body, now=time.time() + shift)
    signed = channel.sign(secret, body)
    name = next(h for h in signed if "timestamp" not in h.lower())
    return {**signed, name: "" if kind == "empty" else signed[name][:-1]}


@pytest.mark.parametrize("channel_inbox", CHANNEL_NAMES, indirect=True)
@hsettings(FUZZ, max_examples=FORGED_EXAMPLES)
@given(data=st.data())
def test_unsigned_or_forged_requests_store_nothing(client, channel_inbox, data):
    channel, inbox = channel_inbox
    body = data.draw(BODIES[channel.name], label="body")
    kind = data.draw(st.sampled_from(_forgeries(channel)), label="forgery")
    before = database_state()

    response = post(client, channel, inbox, body, forged_headers(channel, kind, body))

    # An over-long body is refused before anything else (it is never read, so never verified either).
    refused_unread = response.status_code == 400 and response.json()["error"] == "too_large"
    assert response.status_code in (401, 403) or refused_unread, response.content[:300]
    assert database_state() == before


# ---- what the fuzz found: the minimal examples, as plain regression tests ------------------------------------


def _signed_post(client, name: str, body: bytes):
    channel = CHANNELS[name]
    inbox = make_inbox(channel)
    return post(client, channel, inbox, body, channel.sign(channel.secret, body))


def test_an_overflowing_number_is_refused_not_500(client):
    # Python reads 1e999 as inf; copied into the message's attachments it broke the JSON column's insert
    # (SQLite's JSON_VALID check, PostgreSQL's jsonb): a 500 that Telegram would retry.
    body = fixture_body("telegram", "document_with_caption").replace(
        b'"file_size": 48213', b'"file_size": 1e999'
    )

    response = _signed_post(client, "telegram", body)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_json"
    assert not Message.objects.exists()


def test_slack_event_with_a_list_as_subtype_is_ignored_not_500(client):
    # `subtype in frozenset(...)` raised TypeError (a list is unhashable): a 500 that Slack would retry.
    event = fixture_json("slack", "message")
    event["event"]["subtype"] = ["file_share"]

    response = _signed_post(client, "slack", json.dumps(event).encode())

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert not Message.objects.exists()


def test_whatsapp_notification_refused_for_its_message_leaves_its_statuses_alone(client):
    # The failed status marked our reply failed (and added an activity line), then the message's over-long
    # sender id made the answer 400: a refused request that changed rows.
    notification = _whatsapp_documents()[-1]
    notification["entry"][0]["changes"][0]["value"]["messages"][0]["from"] = "1" * 300

    response = _signed_post(client, "whatsapp", json.dumps(notification).encode())

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_contact_id"
    reply = Message.objects.get(delivery__provider_message_id=FAILED_WAMID)
    assert delivery_of(reply).status == Delivery.Status.SENT
    assert Message.objects.count() == 1
