"""The tolerant readers of model output: structured replies and the remember step's answer."""

from __future__ import annotations

import pytest

from captain.runtime.remember import Declared, grounded, parse_remembered, response_format
from captain.runtime.structured import parse_reply


@pytest.mark.parametrize(
    ("raw", "shape", "text", "reasoning"),
    [
        ('{"response": "Hi", "reasoning": "greeting"}', "json", "Hi", "greeting"),
        ('  ```json\n{"response": "Hi", "reasoning": "r"}\n```  ', "json", "Hi", "r"),
        (
            '{"response": "Line\\nbreak \\"quoted\\"", "reasoning": "r"',
            "salvaged",
            'Line\nbreak "quoted"',
            "r",
        ),
        ("[1] Our hours are 9-17.", "plain", "[1] Our hours are 9-17.", ""),
        ("Just text.", "plain", "Just text.", ""),
        ('{"response": "", "reasoning": "nothing"}', "broken", "", ""),
        ('{"answer": "x"}', "broken", "", ""),
        ("{not json at all", "broken", "", ""),
        (
            "When you answer the customer (not when you call a tool), reply with one JSON object",
            "broken",
            "",
            "",
        ),
        ('{"response": "<your message to the customer>", "reasoning": "x"}', "broken", "", ""),
    ],
)
def test_parse_reply(raw, shape, text, reasoning):
    parsed = parse_reply(raw)
    assert (parsed.shape, parsed.text, parsed.reasoning) == (shape, text, reasoning)
    assert parsed.well_formed is (shape == "json")


DECLARED = [
    Declared("order_number", "Order number", "text"),
    Declared("seats", "Seats", "number"),
    Declared("plan", "Plan", "choice", ("basic", "pro")),
]


def test_remember_schema_names_only_declared_variables():
    schema = response_format(DECLARED)["json_schema"]["schema"]
    item = schema["properties"]["remember"]["items"]
    assert item["properties"]["name"]["enum"] == ["order_number", "seats", "plan"]
    assert schema["properties"]["remember"]["maxItems"] == 3


def test_parse_remembered_drops_undeclared_and_marks_ungrounded():
    said = "My order is ａ-７７８１ and we need 1,200 seats"
    answer = (
        '{"remember": [{"name": "order_number", "value": "A-7781"}, {"name": "seats", "value": "1200"},'
        ' {"name": "password", "value": "hunter2"}, {"name": "plan", "value": "pro"},'
        ' {"name": "order_number", "value": "A-9999"}]}'
    )
    found = {r.name: r for r in parse_remembered(answer, DECLARED, said)}
    assert set(found) == {"order_number", "seats", "plan"}
    assert found["order_number"].value == "A-9999" and not found["order_number"].grounded  # last one wins
    assert found["seats"].grounded and found["plan"].grounded
    assert parse_remembered("not json", DECLARED, said) == []


@pytest.mark.parametrize(
    ("value", "kind", "said", "expected"),
    [
        ("A-7781", "text", "订单号是 Ａ－7781 谢谢", True),  # full-width letters and dash fold to ASCII
        ("A-7781", "text", "order A-7718", False),
        ("A-7781", "text", "订单号是Ａ-7781谢谢", True),
        ("Chengdu", "text", "I moved to chengdu last week", True),
        ("Paris", "text", "I moved to Chengdu", False),
        ("42", "number", "about forty-two", False),
    ],
)
def test_grounded(value, kind, said, expected):
    assert grounded(value, kind, said) is expected
