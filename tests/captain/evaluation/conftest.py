"""A scripted model server for the evaluation tests: answers come from the last customer message."""

from __future__ import annotations

import pytest

from tests.support import fake_llm_server as fake

REPLIES = {
    "price": "You can rent a city bike at our front desk.",
    "person": None,  # ask for a person: the model hands over
}


def scripted(request: dict) -> fake.Step:
    message = fake.last_user_message(request).lower()
    if "person" in message and "handoff_to_human" in fake.offered_tools(request):
        return fake.tool_call("handoff_to_human", {"reason": "the customer asked for a person"})
    if "json array" in str(request["messages"][0].get("content", "")).lower():
        return fake.text('[{"question": "How much is a bike per day?", "expected": "12 euros"}]')
    return fake.text(REPLIES["price"])


@pytest.fixture
def model(redis_url, settings):
    with fake.FakeLLMServer(responder=scripted) as server:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
        }
        yield server
    from captain.assistants.services import model_endpoints

    model_endpoints.operator_clients_clear()
