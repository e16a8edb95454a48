"""The prompt warm-up sends exactly the fixed start of a reply's first model call (so a server's prompt cache
serves it to the first customer), is queued on the background lane when a worker starts, and never fails loudly."""

from __future__ import annotations

import json

import pytest
import redis
from celery import Celery, signals

from captain.answering.models import ReplyJob
from captain.answering.services.runs import run_for_message
from captain.answering.services.warmup import prompt_prefixes_warm
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support.fake_llm_server import error, text

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def link(redis_url, llm_settings):
    link = AssistantInboxFactory(assistant__name="Ava", assistant__instructions="Be warm and brief.")
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    return link


def test_the_warm_up_sends_the_fixed_start_of_a_real_reply(link, llm_settings):
    llm_settings.push(text("."), text("."))
    assert prompt_prefixes_warm(limit=4) == 2  # the triage assistant and its one specialist
    warm, specialist = llm_settings.requests[-2:]
    assert "handoff_to_assistant" in json.dumps(specialist["tools"])
    assert warm["max_tokens"] == 1
    assert [m["role"] for m in warm["messages"]] == ["system"]

    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, content="hello", reply_job=ReplyJob.Status.PENDING)
    llm_settings.push(text('{"response": "Hi!", "reasoning": "greeting"}'))
    run_for_message(message_id=message.id)
    reply = next(r for r in llm_settings.requests[1:] if r["messages"][-1].get("content") == "hello")
    # Byte for byte the same system prompt and tool schemas: the server's cache covers all of it.
    assert reply["messages"][0] == warm["messages"][0]
    assert reply["tools"] == warm["tools"]
    assert "handoff_to_refunds" in json.dumps(warm["tools"])


def test_a_model_that_fails_the_warm_up_only_logs_it(link, llm_settings):
    llm_settings.push(error(500))
    assert prompt_prefixes_warm(limit=4) == 0


def test_a_starting_worker_queues_the_warm_up_on_the_customer_lane(link, redis_url, settings):
    # Customer lane: on the background one it waited behind the seed's drafts and the first question found
    # nothing warmed (docs/first-run.md).
    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 4}
    broker = redis.Redis.from_url(redis_url)
    broker.delete("captain", "captain_background")
    signals.worker_ready.send(sender=None)
    queued = [json.loads(m)["headers"]["task"] for m in broker.lrange("captain", 0, -1)]
    assert queued == ["captain.tasks.prompt_prefixes_warm"]
    assert broker.lrange("captain_background", 0, -1) == []

    broker.delete("captain")
    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 0}
    signals.worker_ready.send(sender=None)
    assert broker.lrange("captain", 0, -1) == []


class _Consumer:
    """What Celery's `worker_ready` passes as its sender, as far as the signal reads it: the worker's app."""

    def __init__(self, app: Celery) -> None:
        self.app = app


def test_of_two_lane_workers_only_the_customer_one_queues_the_warm_up(link, redis_url, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 4}
    broker = redis.Redis.from_url(redis_url)
    broker.delete("captain", "captain_background")
    for queues in (["captain", "helpdesk"], ["captain_background"]):
        # A worker started with `-Q <queues>`: Celery selects them on its app, and the consumer carries the app.
        app = Celery("lane-worker", broker=redis_url, set_as_current=False)
        app.amqp.queues.select(queues)
        signals.worker_ready.send(sender=_Consumer(app))
    queued = [json.loads(m)["headers"]["task"] for m in broker.lrange("captain", 0, -1)]
    assert queued == ["captain.tasks.prompt_prefixes_warm"]
    assert broker.lrange("captain_background", 0, -1) == []


def test_a_starting_worker_loads_the_chinese_segmenter_off_the_reply_path(settings):
    import threading

    import jieba

    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 0}
    jieba.dt.initialized = False  # as in a worker process that has not read a Chinese question yet
    signals.worker_ready.send(sender=None)
    for loader in threading.enumerate():
        if loader.name == "segmenter-warm-up":
            loader.join(timeout=30)
    assert jieba.dt.initialized


def background_queue(redis_url: str):
    """What the background lane's queue holds (task, args), emptied on each read."""
    broker = redis.Redis.from_url(redis_url)
    broker.delete("captain_background")

    def queued() -> list[tuple[str, str]]:
        messages = [json.loads(m) for m in broker.lrange("captain_background", 0, -1)]
        broker.delete("captain_background")
        # A scenario's new texts also queue its routing examples' drafts (captain.routing): not these tests'.
        return [
            (m["headers"]["task"], m["headers"]["argsrepr"])
            for m in messages
            if m["headers"]["task"] != "captain.tasks.draft_routing_examples"
        ]

    return queued


def test_a_changed_assistant_is_warmed_again_on_the_background_lane(
    link, redis_url, settings, django_capture_on_commit_callbacks
):
    from captain.assistants.services.assistants import assistant_update
    from captain.assistants.services.scenarios import scenario_update

    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 4}
    queued = background_queue(redis_url)

    with django_capture_on_commit_callbacks(execute=True):
        assistant_update(assistant=link.assistant, instructions="Be warm, brief and exact.")
        assert queued() == []  # nothing before the save commits
    assert queued() == [("captain.tasks.assistant_prompt_warm", f"[{link.assistant.pk}]")]

    scenario = link.assistant.scenarios.get()
    with django_capture_on_commit_callbacks(execute=True):
        scenario_update(scenario=scenario, instruction="Ask for the order number first.")
    assert queued() == [("captain.tasks.assistant_prompt_warm", f"[{link.assistant.pk}]")]

    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 0}
    with django_capture_on_commit_callbacks(execute=True):
        assistant_update(assistant=link.assistant, instructions="Be brief.")
    assert queued() == []


def test_a_changed_custom_tool_warms_the_assistants_whose_scenarios_offer_it(
    link, redis_url, settings, django_capture_on_commit_callbacks
):
    # Its schema is in the fixed prompt of every agent offered it (the chat template appends the tool schemas).
    from captain.actions.services.custom_tools import custom_tool_delete, custom_tool_save

    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 4}
    link.assistant.scenarios.update(tools=["order_status"])
    other = AssistantInboxFactory(assistant__account=link.assistant.account).assistant
    ScenarioFactory(assistant=other, key="other", tools=["faq_lookup"])
    queued = background_queue(redis_url)
    fields = {
        "name": "order_status",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "url_template": "http://127.0.0.1:9/orders/{{ order_id }}",
    }
    warm = ("captain.tasks.assistant_prompt_warm", f"[{link.assistant.pk}]")
    with django_capture_on_commit_callbacks(execute=True):
        tool = custom_tool_save(account=link.assistant.account, fields=fields)
    assert queued() == [warm]
    with django_capture_on_commit_callbacks(
        execute=True
    ):  # renamed: the agents offered the old name change too
        custom_tool_save(account=link.assistant.account, fields={"name": "order_lookup"}, tool=tool)
    assert queued() == [warm]
    link.assistant.scenarios.update(tools=["order_lookup"])
    with django_capture_on_commit_callbacks(execute=True):
        custom_tool_delete(tool=tool)
    assert queued() == [warm]
    with django_capture_on_commit_callbacks(execute=True):
        custom_tool_save(account=link.assistant.account, fields={**fields, "name": "unused_tool"})
    assert queued() == []


def test_warming_one_assistant_sends_only_its_agents(link, llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "PROMPT_WARM_ASSISTANTS": 4}
    other = AssistantInboxFactory(assistant__name="Ben", assistant__instructions="Be formal.")
    llm_settings.push(text("."), text("."))
    before = len(llm_settings.requests)
    assert prompt_prefixes_warm(assistant_id=link.assistant.pk) == 2
    sent = llm_settings.requests[before:]
    assert all("Ben" not in json.dumps(r["messages"]) for r in sent)
    assert any("Be warm and brief." in json.dumps(r["messages"]) for r in sent)
    assert prompt_prefixes_warm(assistant_id=other.assistant.pk, limit=0) == 0  # warming off: nothing sent


def test_the_start_up_warm_up_loads_the_sentence_encoder_before_the_first_customer(
    link, llm_settings, monkeypatch
):
    # Its weights load on the first sentence (~0.6 s): that was the first customer's message.
    from captain.knowledge.services.retrieval import embeddings

    if not embeddings.encoder_available():
        pytest.skip("the sentence encoder is not installed")
    monkeypatch.setattr(embeddings, "_encoder", None)
    llm_settings.push(text("."), text("."))
    prompt_prefixes_warm(limit=4)
    assert embeddings._encoder is not None

    # Warming one changed assistant (a builder's save) is not a start-up: it leaves the process as it is.
    monkeypatch.setattr(embeddings, "_encoder", None)
    llm_settings.push(text("."), text("."))
    prompt_prefixes_warm(assistant_id=link.assistant_id)
    assert embeddings._encoder is None
