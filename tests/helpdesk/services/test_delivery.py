"""Delivering outgoing messages to the API channel's callback URL: signed, retried, failures recorded."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry

from captain.answering.models import CreditBalance, CreditLedgerEntry
from captain.answering.services.credits import credit_debit
from helpdesk.channels.api_channel import verify
from helpdesk.delivery.send import backoff_seconds
from helpdesk.models import Delivery, Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, ConversationFactory, CreditBalanceFactory, MessageFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db


def outgoing_message(callback_url: str, **kwargs) -> Message:
    link = AssistantInboxFactory(inbox__callback_url=callback_url, inbox__secret="s3cret")
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="Your refund is on its way.",
        delivery=Delivery.Status.QUEUED,
        **kwargs,
    )


def test_delivery_posts_a_signed_event_and_marks_sent():
    with CallbackReceiver() as receiver:
        message = outgoing_message(receiver.url, ai_agent_key="refunds")
        assert message_deliver.apply(args=[message.id]).get() == "sent"
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.SENT
    assert delivery_of(message).attempts == 1
    [event] = receiver.events
    verify(secret="s3cret", headers=event["headers"], body=event["body"], window_seconds=300)
    assert event["json"]["text"] == "Your refund is on its way."
    assert event["headers"]["X-Helpdesk-Event-Id"] == f"message-{message.id}"


def test_redelivered_task_does_not_send_twice():
    with CallbackReceiver() as receiver:
        message = outgoing_message(receiver.url)
        message_deliver.apply(args=[message.id])
        assert message_deliver.apply(args=[message.id]).get() == "skipped"
    assert len(receiver.events) == 1


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_failure_is_retried(status):
    with CallbackReceiver(status=status) as receiver:
        message = outgoing_message(receiver.url)
        with pytest.raises(Retry):
            message_deliver(message.id)  # called directly, `self.retry` raises instead of re-running inline
    assert delivery_of(message).status == Delivery.Status.QUEUED
    assert f"HTTP {status}" in delivery_of(message).error


def test_permanent_failure_marks_failed_tells_people_and_refunds_the_credit():
    with CallbackReceiver(status=410) as receiver:
        message = outgoing_message(receiver.url)
        CreditBalanceFactory(account=message.account, limit=10)
        assert credit_debit(message=message, assistant=None, agent_key="assistant")
        assert message_deliver.apply(args=[message.id]).get() == "failed"
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.FAILED
    activity = message.conversation.messages.filter(message_type=Message.Type.ACTIVITY).get()
    assert "could not be delivered" in activity.content
    assert CreditBalance.objects.get(account=message.account).used == 0
    assert sorted(CreditLedgerEntry.objects.values_list("amount", flat=True)) == [-1, 1]


def test_unreachable_receiver_is_retried_not_failed():
    message = outgoing_message("http://127.0.0.1:9/callback")  # discard port: connection refused
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert delivery_of(message).status == Delivery.Status.QUEUED


def test_retries_give_up_after_the_limit(settings):
    settings.HELPDESK = {**settings.HELPDESK, "DELIVERY_MAX_RETRIES": 0}
    with CallbackReceiver(status=503) as receiver:
        message = outgoing_message(receiver.url)
        assert message_deliver.apply(args=[message.id]).get() == "failed"


def test_backoff_grows_is_capped_and_honours_retry_after():
    for attempt in range(1, 10):
        assert 0 <= backoff_seconds(attempt, base=2, cap=60) <= min(60, 2 * 2**attempt)
    assert backoff_seconds(1, base=2, cap=60, retry_after=30) >= 30
    assert backoff_seconds(1, base=2, cap=60, retry_after=600) == 60


def test_a_row_being_sent_by_another_task_is_not_sent_twice():
    from datetime import timedelta

    from django.utils import timezone

    with CallbackReceiver() as receiver:
        message = outgoing_message(receiver.url)
        Delivery.objects.filter(pk=message.pk).update(lease_until=timezone.now() + timedelta(seconds=60))
        with pytest.raises(Retry):
            message_deliver(message.id)  # waits for the holder's verdict
    assert receiver.events == []
    assert delivery_of(message).attempts == 0


def test_a_row_left_without_a_delivery_task_is_published_once_by_the_outbox_sweeper(redis_url):
    """The state a failed publish (broker down) or a worker killed between commit and publish leaves behind:
    a queued delivery with no `enqueued_at`. The sweep publishes it to the real broker, once."""
    from datetime import timedelta

    import redis
    from django.utils import timezone

    from helpdesk.tasks import outbox_sweep

    message = outgoing_message("http://127.0.0.1:9/callback")
    assert delivery_of(message).enqueued_at is None
    assert outbox_sweep() == 0  # too fresh: its on-commit publish may still be on its way
    Delivery.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(seconds=60))
    queue = redis.Redis.from_url(redis_url)
    before = queue.llen("helpdesk")
    assert outbox_sweep() == 1
    assert outbox_sweep() == 0  # claimed once
    assert queue.llen("helpdesk") == before + 1
    assert delivery_of(message).enqueued_at is not None


def test_a_row_waiting_for_its_retry_is_left_alone_by_the_sweeper():
    from datetime import timedelta

    from django.utils import timezone

    from helpdesk.tasks import outbox_sweep

    message = outgoing_message("http://127.0.0.1:9/callback")
    Delivery.objects.filter(pk=message.pk).update(
        created_at=timezone.now() - timedelta(hours=1),
        enqueued_at=timezone.now() + timedelta(seconds=200),
    )
    assert outbox_sweep() == 0
