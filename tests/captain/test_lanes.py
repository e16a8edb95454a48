"""Customers first: every captain task has a lane and its lane's queue; the running task's lane is known to the
code it calls (the model gate reads it)."""

from __future__ import annotations

import pytest
from celery import current_app, signals

from captain import lanes


def test_replies_are_customer_work_and_everything_else_of_captain_is_background():
    names = {name for name in current_app.tasks if name.startswith("captain.")}
    customer = {name for name in names if lanes.lane_of_task(name) == lanes.CUSTOMER}
    # The start-up prompt warm-up too: it is for the first customers' replies (captain.lanes.CUSTOMER_TASKS).
    assert customer == {
        "captain.tasks.reply_generate",
        "captain.tasks.pending_messages_sweep",
        "captain.tasks.prompt_prefixes_warm",
    }
    # The background lane holds the work that starved customers: drafting, judgements, copilot, documents.
    for name in (
        "captain.tasks.faq_drafts_from_document",
        "captain.tasks.draft_routing_examples",
        "captain.tasks.knowledge_document_process",
        "captain.tasks.auto_resolve_judge",
        "captain.tasks.copilot_generate",
        "captain.tasks.eval_run",
    ):
        assert lanes.lane_of_task(name) == lanes.BACKGROUND, name


def test_each_task_is_published_to_its_lane_queue():
    router = current_app.amqp.router
    assert router.route({}, "captain.tasks.reply_generate")["queue"].name == "captain"
    assert router.route({}, "captain.tasks.faq_drafts_from_document")["queue"].name == "captain_background"
    assert router.route({}, "helpdesk.tasks.message_deliver")["queue"].name == "helpdesk"


def test_lanes_off_put_every_captain_task_on_one_queue(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "LANES": False}
    assert lanes.queue_of_task("captain.tasks.faq_drafts_from_document") == "captain"
    assert lanes.queue_of_task("captain.tasks.reply_generate") == "captain"


def test_worker_queue_lists_cover_every_queue_once():
    customer = lanes.worker_queues(lanes.CUSTOMER).split(",")
    background = lanes.worker_queues(lanes.BACKGROUND).split(",")
    assert set(customer) & set(background) == set()
    assert set(customer) | set(background) == set(lanes.worker_queues("all").split(","))


@pytest.mark.parametrize(
    ("task_name", "expected"),
    [
        ("captain.tasks.faq_drafts_from_document", lanes.BACKGROUND),
        ("captain.tasks.reply_generate", lanes.CUSTOMER),
    ],
)
def test_a_running_task_sets_its_lane_for_the_code_it_calls(task_name, expected):
    task = current_app.tasks[task_name]
    assert lanes.current() == lanes.CUSTOMER
    signals.task_prerun.send(sender=task, task_id="t-1", task=task, args=(), kwargs={})
    try:
        assert lanes.current() == expected
    finally:
        signals.task_postrun.send(sender=task, task_id="t-1", task=task, args=(), kwargs={}, retval=None)
    assert lanes.current() == lanes.CUSTOMER
