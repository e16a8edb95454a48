"""Outbound event webhooks against a real HTTP receiver on 127.0.0.1: the signature verifies, a slow endpoint
times out and is retried, a 500 is retried then given up and logged, the outbound policy refuses a private
address in production settings, a replay sends again, and another account never receives the event."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk.channels.api_channel import EVENT_ID_HEADER, verify
from helpdesk.models import Conversation, CsatResponse, Membership, Message, Team, TeamMember, WebhookDelivery
from helpdesk.services.activities import AI
from helpdesk.services.conversations import (
    conversation_escalate,
    conversation_set_priority,
    conversation_set_status,
)
from helpdesk.services.event_webhook_endpoints import WebhookEndpointInvalid, webhook_endpoint_create
from helpdesk.services.event_webhooks import (
    event_emit,
    webhook_deliveries_republish,
    webhook_delivery_attempt,
)
from helpdesk.tasks import event_webhook_deliver, event_webhooks_retention_sweep
from tests.factories import (
    AccountFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

ALL_EVENTS = [
    "conversation_created",
    "conversation_updated",
    "conversation_resolved",
    "message_created",
    "handoff",
    "csat",
]


class Receiver:
    """An integration's URL: records each POST (headers, raw body); answers `status` after `delay` seconds."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status, self.delay = 200, 0.0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append({"headers": dict(self.headers), "body": body})
                time.sleep(receiver.delay)
                try:
                    self.send_response(receiver.status)
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up waiting

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(request["body"]) for request in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def quick_retries(settings):
    settings.HELPDESK = {
        **settings.HELPDESK,
        "DELIVERY_TIMEOUT_SECONDS": 0.5,
        "DELIVERY_BACKOFF_SECONDS": 0.01,
        "DELIVERY_BACKOFF_MAX_SECONDS": 0.05,
        "DELIVERY_MAX_RETRIES": 2,
    }


def endpoint_for(account, receiver, events=("message_created",)):
    return webhook_endpoint_create(account_id=account.pk, name="CRM", url=receiver.url, events=events)


def deliver_queued() -> list[str]:
    return [
        webhook_delivery_attempt(delivery_id=pk).status
        for pk in WebhookDelivery.objects.filter(status="queued").values_list("pk", flat=True)
    ]


def test_a_new_message_is_posted_signed_with_a_timestamp_and_the_signature_verifies(receiver):
    conversation = ConversationFactory()
    _, secret = endpoint_for(conversation.account, receiver)
    message = MessageFactory(conversation=conversation, content="Where is my parcel?")

    assert deliver_queued() == ["sent"]
    (request,) = receiver.requests
    verify(secret=secret, headers=request["headers"], body=request["body"], window_seconds=300)
    event = json.loads(request["body"])
    assert event["event"] == "message_created" and event["data"]["message_id"] == message.pk
    assert event["data"]["content"] == "Where is my parcel?"
    assert request["headers"][EVENT_ID_HEADER] == event["event_id"]
    row = WebhookDelivery.objects.get()
    assert (row.status, row.attempts, row.last_status_code) == ("sent", 1, 200)
    assert row.duration_ms is not None
    with pytest.raises(Exception, match="Signature does not match"):
        verify(secret="another-secret", headers=request["headers"], body=request["body"], window_seconds=300)


def test_a_slow_endpoint_times_out_and_is_retried(receiver, quick_retries):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver)
    MessageFactory(conversation=conversation)
    receiver.delay = 2.0
    row = WebhookDelivery.objects.get()

    started = time.monotonic()
    assert webhook_delivery_attempt(delivery_id=row.pk).status == "retrying"
    assert time.monotonic() - started < 1.8  # the timeout, not the receiver, ended the attempt
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("queued", 1)
    assert "timed out" in row.last_error
    receiver.delay = 0.0
    assert webhook_delivery_attempt(delivery_id=row.pk).status == "sent"
    row.refresh_from_db()
    assert (row.status, row.attempts, row.last_error) == ("sent", 2, "")
    assert len({request["headers"][EVENT_ID_HEADER] for request in receiver.requests}) == 1


def test_a_500_is_retried_with_backoff_then_given_up_and_logged(receiver, quick_retries):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver)
    MessageFactory(conversation=conversation)
    receiver.status = 500
    row = WebhookDelivery.objects.get()

    # The Celery task retries (eagerly here: countdowns are not waited for) until DELIVERY_MAX_RETRIES.
    assert event_webhook_deliver.apply(args=[row.pk]).get() == "failed"
    row.refresh_from_db()
    assert (row.status, row.attempts, row.last_status_code) == ("failed", 3, 500)
    assert row.last_error == "callback answered HTTP 500"
    assert len(receiver.requests) == 3


def test_the_outbound_policy_refuses_a_private_address_in_production_settings(receiver, settings):
    account = AccountFactory()
    endpoint_for(account, receiver)  # allowed while the test allowlist holds 127.0.0.1
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": [], "OUTBOUND_ALLOW_HTTP": False}

    for url in (
        receiver.url,
        "https://127.0.0.1/hooks",
        "https://10.0.0.8/hooks",
        "https://169.254.169.254/",
    ):
        with pytest.raises(WebhookEndpointInvalid, match="outbound policy"):
            webhook_endpoint_create(account_id=account.pk, name=url, url=url, events=["csat"])
    event_emit(account_id=account.pk, event="message_created", data={})
    assert deliver_queued() == ["failed"]
    assert "refused by the outbound policy" in WebhookDelivery.objects.get().last_error
    assert receiver.requests == []


def test_replay_sends_the_same_event_again(receiver):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver)
    admin = UserFactory()
    MembershipFactory(account=conversation.account, user=admin, role=Membership.Role.ADMIN)
    MessageFactory(conversation=conversation)
    deliver_queued()
    first = WebhookDelivery.objects.get()
    api = APIClient()
    api.force_authenticate(admin)

    answer = api.post(f"/api/v1/accounts/{conversation.account_id}/webhook-deliveries/{first.pk}/replay/")

    assert answer.status_code == 202 and answer.json()["replay_of"] == first.pk
    assert deliver_queued() == ["sent"]
    assert [event["event_id"] for event in receiver.events()] == [str(first.event_id)] * 2
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"]


def test_another_account_never_receives_the_event(receiver):
    other_receiver = Receiver()
    try:
        ours, theirs = ConversationFactory(), ConversationFactory()
        endpoint_for(ours.account, receiver, events=ALL_EVENTS)
        endpoint_for(theirs.account, other_receiver, events=ALL_EVENTS)
        MessageFactory(conversation=ours)
        conversation_set_status(conversation=ours, status="resolved", actor="ai")
        deliver_queued()
        assert receiver.events() and {e["account_id"] for e in receiver.events()} == {ours.account_id}
        assert other_receiver.events() == []
        # Their replay URL is 404 for our administrator.
        admin = UserFactory()
        MembershipFactory(account=ours.account, user=admin, role=Membership.Role.ADMIN)
        api = APIClient()
        api.force_authenticate(admin)
        their_row = WebhookDelivery.objects.create(
            account=theirs.account, endpoint=theirs.account.webhook_endpoints.get(), event="csat", payload={}
        )
        url = f"/api/v1/accounts/{ours.account_id}/webhook-deliveries/{their_row.pk}/replay/"
        assert api.post(url).status_code == 404
    finally:
        other_receiver.close()


def test_each_event_comes_from_where_it_happens(receiver):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver, events=ALL_EVENTS)
    created = ConversationFactory(contact_inbox=conversation.contact_inbox)
    MessageFactory(conversation=created, content="Hi")
    MessageFactory(conversation=created, content="internal", private=True, message_type=Message.Type.OUTGOING)
    conversation_escalate(conversation=created, reason="Refund", customer_message="")
    conversation_set_status(conversation=created, status=Conversation.Status.RESOLVED, actor="ai")
    CsatResponse.objects.create(account=created.account, conversation=created, rating=4)

    events = list(WebhookDelivery.objects.order_by("pk").values_list("event", flat=True))
    assert events[0] == "conversation_created"
    assert events.count("message_created") == 1  # the private note is not sent
    for name in ("handoff", "conversation_resolved", "csat", "conversation_updated"):
        assert name in events
    handoff = WebhookDelivery.objects.get(event="handoff").payload
    assert handoff["data"]["reason"] == "Refund" and handoff["data"]["conversation_id"] == created.pk


def test_only_subscribed_and_enabled_endpoints_get_rows(receiver):
    conversation = ConversationFactory()
    endpoint, _ = endpoint_for(conversation.account, receiver, events=["csat"])
    MessageFactory(conversation=conversation)
    assert not WebhookDelivery.objects.exists()
    endpoint.enabled = False
    endpoint.save()
    CsatResponse.objects.create(account=conversation.account, conversation=conversation, rating=5)
    assert not WebhookDelivery.objects.exists()


def test_the_api_shows_the_secret_once_and_only_to_administrators(receiver):
    account = AccountFactory()
    admin, agent = UserFactory(), UserFactory()
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    api = APIClient()
    api.force_authenticate(admin)
    base = f"/api/v1/accounts/{account.pk}/webhooks/"

    made = api.post(base, {"name": "CRM", "url": receiver.url, "events": ["csat"]}, format="json")
    assert made.status_code == 201 and len(made.json()["secret"]) == 64
    secret = made.json()["secret"]
    assert secret not in json.dumps(api.get(base).json())
    assert secret not in json.dumps(api.get(f"{base}{made.json()['id']}/").json())
    bad = api.post(base, {"name": "X", "url": "https://10.1.2.3/", "events": ["csat"]}, format="json")
    assert bad.status_code == 400 and "outbound policy" in json.dumps(bad.json())
    api.force_authenticate(agent)
    assert api.get(base).status_code == 403


def test_a_priority_change_written_with_update_is_sent_too(receiver):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver, events=["conversation_updated"])

    conversation_set_priority(conversation=conversation, priority="high", by=AI)

    (row,) = WebhookDelivery.objects.all()
    assert row.payload["data"]["priority"] == "high"


def test_an_automatic_assignment_is_sent(receiver):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver, events=["conversation_updated"])
    person = UserFactory()
    MembershipFactory(account=conversation.account, user=person, availability=Membership.Availability.ONLINE)
    returns = Team.objects.create(account=conversation.account, name="Returns", auto_assign=True)
    TeamMember.objects.create(team=returns, user=person)

    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", team_id=returns.pk)

    sent = [row.payload["data"]["assignee_id"] for row in WebhookDelivery.objects.order_by("pk")]
    assert sent[-1] == person.pk  # the round-robin's write (an update(), no signal) is told too


def test_the_sweep_publishes_a_row_whose_task_was_never_published(receiver):
    account = AccountFactory()
    endpoint_for(account, receiver, events=["csat"])
    (row_id,) = event_emit(
        account_id=account.pk, event="csat", data={}
    )  # after-commit publish never ran here
    WebhookDelivery.objects.filter(pk=row_id).update(created_at=timezone.now() - timedelta(minutes=5))

    assert webhook_deliveries_republish() == 1  # onto the test's real Redis broker
    assert WebhookDelivery.objects.get(pk=row_id).enqueued_at is not None
    assert webhook_deliveries_republish() == 0  # claimed once per period


def test_rows_are_written_with_the_change_and_published_after_its_commit(
    receiver, django_capture_on_commit_callbacks
):
    conversation = ConversationFactory()
    endpoint_for(conversation.account, receiver)
    with pytest.raises(RuntimeError), transaction.atomic():
        MessageFactory(conversation=conversation)
        raise RuntimeError("the change is rolled back")
    assert not WebhookDelivery.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        MessageFactory(conversation=conversation)
        assert WebhookDelivery.objects.get().enqueued_at is None  # written, not yet published

    assert WebhookDelivery.objects.get().enqueued_at is not None  # on the test's real Redis broker


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "", "url": "https://hooks.example.com/", "events": ["csat"]},
        {"name": "X", "url": "ftp://hooks.example.com/", "events": ["csat"]},
        {"name": "X", "url": "https://user:pw@hooks.example.com/", "events": ["csat"]},
        {"name": "X", "url": "https://10.0.0.1/", "events": []},
        {"name": "X", "url": "https://10.0.0.1/", "events": "csat"},
        {"name": "X", "url": "https://10.0.0.1/", "events": ["nope"]},
        {"name": "X", "url": "https://10.0.0.1/", "events": ["csat"], "enabled": "maybe"},
        {"name": "X" * 101, "url": "https://10.0.0.1/", "events": ["csat"]},
        {"name": "X", "url": "https://" + "a" * 600 + ".com/", "events": ["csat"]},
    ],
)
def test_bad_endpoint_input_is_a_clear_400(body):
    account = AccountFactory()
    admin = UserFactory()
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(admin)

    answer = api.post(f"/api/v1/accounts/{account.pk}/webhooks/", body, format="json")

    assert answer.status_code == 400, answer.content
    assert not account.webhook_endpoints.exists()


def test_patch_delete_and_the_log_filters_answer_as_documented(receiver):
    account = AccountFactory()
    admin = UserFactory()
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(admin)
    base = f"/api/v1/accounts/{account.pk}/webhooks/"
    first = api.post(base, {"name": "A", "url": receiver.url, "events": ["csat"]}, format="json").json()
    api.post(base, {"name": "B", "url": receiver.url, "events": ["csat"]}, format="json")
    url = f"{base}{first['id']}/"

    assert api.patch(url, {"name": "B"}, format="json").status_code == 400  # taken
    assert api.patch(url, {"events": []}, format="json").status_code == 400
    renewed = api.patch(url, {"new_secret": True, "enabled": False}, format="json").json()
    assert len(renewed["secret"]) == 64 and renewed["enabled"] is False
    assert "secret" not in api.patch(url, {"name": "C"}, format="json").json()
    log = f"/api/v1/accounts/{account.pk}/webhook-deliveries/"
    assert api.get(log, {"status": "nope"}).status_code == 400
    assert api.get(log, {"endpoint": "0"}).status_code == 400
    assert api.get(log, {"endpoint": first["id"], "status": "sent"}).json()["count"] == 0
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert api.post(f"/api/v1/accounts/{account.pk}/webhook-deliveries/99999/replay/").status_code == 404


def test_finished_deliveries_past_their_retention_are_deleted_and_queued_ones_kept(receiver, settings):
    settings.HELPDESK = {**settings.HELPDESK, "WEBHOOK_DELIVERY_RETENTION_DAYS": 30}
    account = AccountFactory()
    endpoint_for(account, receiver, events=["csat"])
    sent, failed, queued, fresh = (
        event_emit(account_id=account.pk, event="csat", data={})[0] for _ in range(4)
    )
    WebhookDelivery.objects.filter(pk=sent).update(status="sent")
    WebhookDelivery.objects.filter(pk=failed).update(status="failed")
    WebhookDelivery.objects.filter(pk__in=[sent, failed, queued]).update(
        created_at=timezone.now() - timedelta(days=31)
    )

    assert event_webhooks_retention_sweep() == 2
    assert set(WebhookDelivery.objects.values_list("pk", flat=True)) == {queued, fresh}
    settings.HELPDESK = {**settings.HELPDESK, "WEBHOOK_DELIVERY_RETENTION_DAYS": 0}
    WebhookDelivery.objects.update(status="sent")
    assert event_webhooks_retention_sweep() == 0
