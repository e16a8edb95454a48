"""A reply task that must wait (the customer still typing, a busy conversation or account) puts a fresh copy of
itself back on the queue and returns: no Celery retry, whose exception info copied the whole stack."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace

import pytest
import redis
from kombu.exceptions import OperationalError

from captain.answering import tasks
from captain.answering.models import ReplyJob
from tests.factories import MessageFactory

pytestmark = [pytest.mark.django_db]


def _running(message_id: int) -> SimpleNamespace:
    return SimpleNamespace(
        request=SimpleNamespace(args=[message_id], kwargs={"trace_context": {"traceparent": "x"}}),
        apply_async=tasks.reply_generate.apply_async,
    )


def test_a_put_back_task_is_queued_again_with_its_arguments_and_the_wait(redis_url):
    message = MessageFactory(content="hello", reply_job=ReplyJob.Status.PENDING)
    broker = redis.Redis.from_url(redis_url)
    broker.delete("captain")

    assert tasks._retry_later(_running(message.id), message.id, 2.5) == "requeued"

    # With a countdown the message is queued at once with its due time (the worker holds it until then).
    (queued,) = [json.loads(m) for m in broker.lrange("captain", 0, -1)]
    assert queued["headers"]["task"] == "captain.tasks.reply_generate"
    assert queued["headers"]["eta"] is not None
    args, kwargs, _ = json.loads(base64.b64decode(queued["body"]))
    assert args == [message.id] and kwargs == {"trace_context": {"traceparent": "x"}}
    assert ReplyJob.objects.get(pk=message.id).enqueued_at is not None


def test_a_broker_that_refuses_the_put_back_leaves_the_message_to_the_sweeper(redis_url):
    message = MessageFactory(content="hello", reply_job=ReplyJob.Status.PENDING)
    ReplyJob.objects.filter(pk=message.id).update(enqueued_at="2026-01-01T00:00:00Z")

    def refuse(*args: object, **kwargs: object) -> None:
        raise OperationalError("broker down")

    task = _running(message.id)
    task.apply_async = refuse
    assert tasks._retry_later(task, message.id, 1.0) == "requeue_failed"
    # Unpublished: the sweeper takes it within seconds instead of after a whole run's time.
    assert ReplyJob.objects.get(pk=message.id).enqueued_at is None
