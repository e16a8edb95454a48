"""When routing example drafting is queued: after a scenario's create or a change of the texts drafts are written
from (published to the real redis-server broker after commit), by the hourly sweep for scenarios without current
drafts (once per retry period for the same texts), and by the backfill command, which drafts in-process."""

from __future__ import annotations

import io
import json

import pytest
import redis
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import CommandError

from captain.assistants.services.scenarios import scenario_create, scenario_update
from captain.routing.models import RoutingExample
from captain.routing.services import example_drafts
from captain.routing.services.example_drafts import example_drafts_sweep, scenario_texts_hash
from captain.routing.services.routing import routing_node_examples_set
from captain.routing.tasks import draft_routing_examples
from config import celery_app
from tests.factories import AssistantFactory, ScenarioFactory
from tests.support import fake_llm_server as fake
from tests.support.on_commit import not_realtime

pytestmark = pytest.mark.django_db

TASK = "captain.tasks.draft_routing_examples"


@pytest.fixture
def broker(redis_url):
    example_drafts._redis.cache_clear()
    yield redis_url
    example_drafts._redis.cache_clear()


def queued(redis_url: str) -> list[tuple[str, str]]:
    """(task name, its arguments) of the messages waiting on the captain queue, oldest first."""
    raw = redis.Redis.from_url(redis_url).lrange("captain_background", 0, -1)
    headers = [json.loads(message)["headers"] for message in reversed(raw)]  # LPUSH: newest first
    return [(h["task"], h["argsrepr"]) for h in headers]


def drafted(scenario, text="I want my money back", **fields):
    return RoutingExample.objects.create(
        account_id=scenario.assistant.account_id,
        assistant=scenario.assistant,
        key=scenario.key,
        text=text,
        source=RoutingExample.Source.DRAFTED,
        status=RoutingExample.Status.SUGGESTED,
        drafted_from=scenario_texts_hash(scenario),
        **fields,
    )


# ---- on scenario writes -------------------------------------------------------------------------------------


def test_a_new_scenario_queues_drafting_after_commit(broker, django_capture_on_commit_callbacks):
    assistant = AssistantFactory()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scenario = scenario_create(
            assistant=assistant, title="Refunds", description="Money back", instruction="x"
        )
        assert queued(broker) == []  # nothing before the commit

    for callback in callbacks:
        callback()
    assert queued(broker) == [(TASK, f"({scenario.pk}, False)")]


def test_changing_a_drafted_from_text_or_enabling_queues_drafting_and_other_writes_do_not(
    broker, django_capture_on_commit_callbacks
):
    scenario = ScenarioFactory(title="Refunds", description="Money back", instruction="x", enabled=False)

    with django_capture_on_commit_callbacks(execute=True):
        scenario_update(scenario=scenario, tools=[], title="Refunds")  # same title: nothing to redraft
    assert queued(broker) == []

    with django_capture_on_commit_callbacks(execute=True):
        scenario_update(scenario=scenario, enabled=True)
    with django_capture_on_commit_callbacks(execute=True):
        scenario_update(scenario=scenario, instruction="Ask for the order number.")
    with django_capture_on_commit_callbacks(execute=True):
        scenario_update(scenario=scenario, enabled=True, description="Money back")  # unchanged
    assert queued(broker) == [(TASK, f"({scenario.pk}, False)")] * 2


def test_nothing_is_queued_when_drafting_is_off(broker, settings, django_capture_on_commit_callbacks):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS": False}

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        scenario = scenario_create(
            assistant=AssistantFactory(), title="Refunds", description="d", instruction="i"
        )
        scenario_update(scenario=scenario, title="Returns")

    assert not_realtime(callbacks) == []
    assert queued(broker) == []
    assert example_drafts_sweep() == 0


def test_a_failed_publish_does_not_fail_the_save(monkeypatch, django_capture_on_commit_callbacks):
    def broker_down(*args, **kwargs):
        raise OSError("broker down")

    monkeypatch.setattr(draft_routing_examples, "delay", broker_down)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        scenario = scenario_create(
            assistant=AssistantFactory(), title="Refunds", description="d", instruction="i"
        )

    assert (
        len(not_realtime(callbacks)) == 1
    )  # it ran, failed, and was logged: the sweep drafts for the scenario later
    assert type(scenario).objects.filter(pk=scenario.pk).exists()


# ---- the task, the sweep, the command -----------------------------------------------------------------------


def test_the_task_drafts_for_its_scenario(llm_settings):
    scenario = ScenarioFactory(title="Refunds")
    llm_settings.push(fake.text('{"examples": ["I want my money back", "我要退款"]}'))

    assert draft_routing_examples.apply(args=(scenario.pk,)).get() == 2
    assert draft_routing_examples.apply(args=(scenario.pk + 1000,)).get() == 0


def test_the_sweep_queues_scenarios_without_current_drafts_once_per_period(broker, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS_BATCH": 2}
    assistant = AssistantFactory()
    first, second, third = (ScenarioFactory(assistant=assistant) for _ in range(3))
    current = ScenarioFactory(assistant=assistant)
    drafted(current)
    stale = ScenarioFactory(assistant=assistant)
    drafted(stale)
    stale.description = "Edited since it was drafted"
    stale.save()
    with_examples = ScenarioFactory(assistant=assistant)
    routing_node_examples_set(assistant=assistant, key=with_examples.key, examples=["Builder's own"])
    ScenarioFactory(assistant=assistant, enabled=False)

    assert example_drafts_sweep() == 2
    assert example_drafts_sweep() == 2  # the batch goes on with the rest
    assert example_drafts_sweep() == 0  # each was queued within the retry period

    third.title = "Renamed"
    third.save()
    assert example_drafts_sweep() == 1  # new texts: due again

    ids = [args for _, args in queued(broker)]
    assert ids == [f"({s.pk},)" for s in (first, second, third, stale, third)]


def test_the_beat_schedule_runs_the_sweep():
    entry = django_settings.CELERY_BEAT_SCHEDULE["captain-routing-example-drafts"]

    assert entry["task"] in celery_app.tasks


def test_the_backfill_command_drafts_in_process_for_the_assistant_given(llm_settings):
    mine = ScenarioFactory(title="Refunds")
    drafted(ScenarioFactory(assistant=mine.assistant, title="Done already"), text="Something else")
    other = ScenarioFactory(title="Someone else's")
    llm_settings.push(fake.text('{"examples": ["I want my money back"]}'))

    out = io.StringIO()
    call_command("captain_draft_examples", "--assistant", str(mine.assistant_id), stdout=out)

    assert f"assistant {mine.assistant_id} / {mine.key}: 1 drafted" in out.getvalue()
    assert "1 scenario(s), 1 example(s) stored." in out.getvalue()
    assert len(llm_settings.requests) == 1
    assert not RoutingExample.objects.filter(assistant=other.assistant).exists()

    llm_settings.push(fake.text("not json and one line"), fake.text("also not"))
    out = io.StringIO()
    call_command("captain_draft_examples", "--assistant", str(mine.assistant_id), "--force", stdout=out)
    assert "2 scenario(s), 0 example(s) stored." in out.getvalue()


def test_the_backfill_command_refuses_when_drafting_is_off_or_the_assistant_is_unknown(settings):
    with pytest.raises(CommandError, match="No assistant"):
        call_command("captain_draft_examples", "--assistant", "999999")
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS": False}
    with pytest.raises(CommandError, match="off"):
        call_command("captain_draft_examples")
