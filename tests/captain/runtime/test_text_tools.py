"""Tool calls written as text by small models are recovered, only for offered names."""

import pytest

from captain.runtime.text_tools import recover_text_tool_calls

OFFERED = ["handoff_to_refunds", "faq_lookup"]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "handoff_to_refunds", "arguments": {"reason": "refund"}}',
        'Sure!\n```json\n{"name": "handoff_to_refunds", "arguments": {"reason": "refund"}}\n```',
        '<tool_call>\n{"name": "handoff_to_refunds", "arguments": {"reason": "refund"}}\n</tool_call>',
        '[{"name": "handoff_to_refunds", "parameters": {"reason": "refund"}}]',
    ],
)
def test_calls_written_as_text_are_recovered(text):
    [call] = recover_text_tool_calls(text, OFFERED)
    assert call.name == "handoff_to_refunds"
    assert '"reason": "refund"' in call.arguments


def test_several_calls_keep_their_order():
    text = (
        '{"name": "faq_lookup", "arguments": {"query": "x"}}\n{"name": "handoff_to_refunds", "arguments": {}}'
    )
    assert [c.name for c in recover_text_tool_calls(text, OFFERED)] == ["faq_lookup", "handoff_to_refunds"]


@pytest.mark.parametrize(
    "text",
    [
        "Your order ships tomorrow.",
        '{"name": "delete_everything", "arguments": {}}',  # not offered: stays text (and is refused nowhere)
        'Here is your data: {"name": "Ann", "order": 42}',
        "{broken json name",
        "",
        None,
    ],
)
def test_other_text_is_left_alone(text):
    assert recover_text_tool_calls(text, OFFERED) == []
