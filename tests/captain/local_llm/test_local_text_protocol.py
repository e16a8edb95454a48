"""The REAL bundled model follows the text tool protocol, streamed through the real `openai` SDK.

Shapes only (a 0.5B model's wording varies): the streamed Thought deltas add up to the parsed Thought, and the
reply (after at most the one re-ask the runner allows) is a usable turn: an action naming the offered tool with
JSON-object arguments, or a final answer. The server runs in a child process that the fixture stops by PID.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from captain.local_llm import LocalLLMHandle, start_local_llm
from captain.runtime import ModelSettings, OpenAIChatModel, make_openai_client
from captain.runtime.text_protocol import assistant_item, complete_text_turn, protocol_prompt, reask_message

pytestmark = pytest.mark.local_llm

TOOL = {
    "type": "function",
    "function": {
        "name": "get_order_status",
        "description": "Look up the shipping status of an order by its number.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "The order number."}},
            "required": ["order_id"],
        },
    },
}


@pytest.fixture(scope="module")
def llm() -> Iterator[LocalLLMHandle]:
    handle = start_local_llm(port=0)
    try:
        yield handle
    finally:
        handle.stop()


def test_bundled_model_writes_a_parseable_text_protocol_turn(llm: LocalLLMHandle) -> None:
    client = OpenAIChatModel(make_openai_client(llm.base_url, None, timeout=120, max_retries=0))
    messages = [
        {
            "role": "system",
            "content": "You are a support assistant for a shop. Look orders up with the tool before answering.\n\n"
            + protocol_prompt([TOOL]),
        },
        {"role": "user", "content": "What is the status of my order A-1042?"},
    ]
    settings = ModelSettings(temperature=0.0, max_tokens=200)
    for _ in range(2):  # the runner re-asks once on a protocol error
        thoughts: list[str] = []
        response, turn = complete_text_turn(
            client,
            model=llm.model,
            messages=messages,
            settings=settings,
            offered=["get_order_status"],
            on_thought=thoughts.append,
        )
        assert "".join(thoughts) == turn.thought
        assert response.first_token_ms is not None and response.usage.output_tokens > 0
        if turn.error is None:
            break
        messages += [assistant_item(turn.raw), reask_message(turn.error)]
    assert turn.error is None, turn.raw
    assert turn.calls or turn.final
    for call in turn.calls:
        assert call.name == "get_order_status"
        assert isinstance(json.loads(call.arguments), dict)
