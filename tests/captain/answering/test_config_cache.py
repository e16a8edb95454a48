"""The per-process cache of an assistant's configuration (captain.answering.services.config_cache) never serves
a stale configuration: what an admin saves is what the very next reply run uses. Real runs against the scripted
model over HTTP, the version token in a real Redis."""

from __future__ import annotations

import pytest

from captain.answering.models import ReplyJob
from captain.answering.services import config_cache
from captain.answering.services.locks import _client
from captain.answering.services.runs import run_for_message
from captain.assistants.models import Assistant, Scenario
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support.fake_llm_server import offered_tools, system_prompt, text, tool_call

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def link(redis_url, llm_settings):
    link = AssistantInboxFactory(assistant__instructions="Always greet with Ahoy.")
    ScenarioFactory(
        assistant=link.assistant, title="Refunds", key="refunds", description="Refund requests", tools=[]
    )
    return link


def answer(link, llm_settings, *steps) -> list[dict]:
    """One customer message on a new conversation, answered; the model requests it made."""
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, content="Hello?", reply_job=ReplyJob.Status.PENDING)
    before = len(llm_settings.requests)
    llm_settings.push(*(steps or [text("Hi!")]))
    assert run_for_message(message_id=message.id) == "reply"
    return llm_settings.requests[before:]


def test_changed_instructions_reach_the_very_next_run(link, llm_settings):
    assert "Always greet with Ahoy." in system_prompt(answer(link, llm_settings)[0])
    assistant = Assistant.objects.get(pk=link.assistant_id)
    assistant.instructions = "Always greet with Howdy."
    assistant.save()
    prompt = system_prompt(answer(link, llm_settings)[0])
    assert "Always greet with Howdy." in prompt and "Ahoy" not in prompt


def test_a_new_disabled_or_edited_scenario_reaches_the_very_next_run(link, llm_settings):
    assert "handoff_to_billing" not in offered_tools(answer(link, llm_settings)[0])
    ScenarioFactory(
        assistant=link.assistant,
        title="Billing",
        key="billing",
        description="Invoices",
        instruction="Say 42.",
    )
    assert "handoff_to_billing" in offered_tools(answer(link, llm_settings)[0])

    billing = Scenario.objects.get(key="billing")
    billing.instruction = "Say 43."
    billing.save()
    requests = answer(link, llm_settings, tool_call("handoff_to_billing", {}), text("43"))
    assert "Say 43." in system_prompt(requests[-1]) and "Say 42." not in system_prompt(requests[-1])

    billing.enabled = False
    billing.save()
    assert "handoff_to_billing" not in offered_tools(answer(link, llm_settings)[0])

    Scenario.objects.filter(key="refunds").delete()
    assert "handoff_to_refunds" not in offered_tools(answer(link, llm_settings)[0])


def test_the_version_in_redis_is_what_tells_another_process(link, llm_settings):
    """A save in another process (the admin's web process) reaches this worker through the token in Redis:
    written without this process's signals, the change is picked up once the token moves, not before."""
    answer(link, llm_settings)
    # A write this process's signals do not see, as if made elsewhere.
    Assistant.objects.filter(pk=link.assistant_id).update(instructions="Always greet with Salut.")
    assert "Ahoy" in system_prompt(answer(link, llm_settings)[0])  # the cache was in use
    _client().set(config_cache.VERSION_KEY, "moved-by-another-process")
    assert "Always greet with Salut." in system_prompt(answer(link, llm_settings)[0])


def test_the_version_moves_again_when_the_save_commits(link, django_capture_on_commit_callbacks):
    """A run that read the version between the save and its commit may have cached the old rows under the new
    token; the commit moves the token once more."""
    with django_capture_on_commit_callbacks() as callbacks:
        Assistant.objects.get(pk=link.assistant_id).save()
    before = _client().get(config_cache.VERSION_KEY)
    assert config_cache.config_changed in callbacks
    for callback in callbacks:
        callback()
    assert _client().get(config_cache.VERSION_KEY) != before


def test_without_redis_nothing_is_cached(link, llm_settings, monkeypatch):
    answer(link, llm_settings)
    monkeypatch.setattr(config_cache, "_read_version", lambda: "")
    Assistant.objects.filter(pk=link.assistant_id).update(instructions="Always greet with Hej.")
    assert "Always greet with Hej." in system_prompt(answer(link, llm_settings)[0])
