"""Importing a question set: all or nothing, every bad line named."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from captain.evaluation.models import EvalQuestion
from captain.evaluation.services import imports
from captain.evaluation.services.sets import eval_questions_import, eval_questions_type, eval_set_create
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def eval_set():
    return eval_set_create(assistant=AssistantFactory(), name="Launch check")


def refused(eval_set, name: str, data: bytes) -> str:
    with pytest.raises(ValidationError) as caught:
        eval_questions_import(eval_set=eval_set, file_name=name, data=data)
    assert not EvalQuestion.objects.exists()
    return " ".join(caught.value.messages)


def test_jsonl_with_follow_ups_and_a_bom_is_imported_in_order(eval_set):
    lines = [
        {"question": "How much is a bike?", "expected": "12 euros per day"},
        {"question": "And for kids?", "previous": [{"role": "user", "content": "How much is a bike?"}]},
    ]
    data = ("\ufeff" + "\n".join(json.dumps(line) for line in lines) + "\n\n").encode()
    stored = eval_questions_import(eval_set=eval_set, file_name="set.jsonl", data=data)
    assert [q.question for q in stored] == ["How much is a bike?", "And for kids?"]
    first, second = EvalQuestion.objects.order_by("position")
    assert first.expected == "12 euros per day" and first.origin == "uploaded" and first.approved
    assert second.previous == [{"role": "user", "content": "How much is a bike?"}]


def test_csv_with_bom_expected_and_ignored_previous(eval_set):
    data = '\ufeffquestion,expected,previous\n"Where, exactly, is the shop?",Main street,x\n\nOpen on Sunday?,,\n'
    stored = eval_questions_import(eval_set=eval_set, file_name="set.CSV", data=data.encode())
    assert [(q.question, q.expected, q.previous) for q in stored] == [
        ("Where, exactly, is the shop?", "Main street", []),
        ("Open on Sunday?", "", []),
    ]


def test_a_bad_csv_line_is_named_and_nothing_is_saved(eval_set):
    message = refused(eval_set, "set.csv", b"question,expected\nFine?,yes\n,no question here\nok,a,b,c\n")
    assert "Line 3: the question is empty." in message
    assert "Line 4: more cells than the header names" in message


def test_a_csv_without_a_question_column_is_refused(eval_set):
    assert 'Line 1: the header must name a "question" column' in refused(eval_set, "set.csv", b"q,a\nx,y\n")


def test_bad_json_and_an_empty_question_name_their_lines(eval_set):
    data = b'{"question": "ok"}\n{"question": "broken"\n{"question": "  "}\n["not an object"]\n'
    message = refused(eval_set, "set.jsonl", data)
    assert "Line 2: not valid JSON" in message
    assert "Line 3: the question is empty." in message
    assert "Line 4: each line must be a JSON object" in message


def test_bad_previous_turns_are_named(eval_set):
    data = b'{"question": "and then?", "previous": [{"role": "system", "content": "x"}]}\n'
    assert 'Line 1: "previous" must be a list' in refused(eval_set, "set.jsonl", data)


def test_too_big_a_file_and_too_many_rows_are_refused(eval_set, monkeypatch):
    big = b'{"question": "' + b"x" * (imports.MAX_FILE_BYTES) + b'"}\n'
    assert "at most 1024 KiB" in refused(eval_set, "set.jsonl", big)
    monkeypatch.setattr(imports, "MAX_QUESTIONS", 2)
    assert "at most 2" in refused(eval_set, "set.csv", b"question\na\nb\nc\n")


def test_not_utf8_and_unknown_kinds_are_refused(eval_set):
    assert "Line 2: the file is not UTF-8" in refused(eval_set, "set.csv", b"question\ncaf\xe9\n")
    assert "Upload a .csv file" in refused(eval_set, "set.xlsx", b"question\n")
    assert "no questions" in refused(eval_set, "set.jsonl", b"\n\n")


def test_typed_questions_one_per_line(eval_set):
    stored = eval_questions_type(eval_set=eval_set, text="First?\n\n  Second?  \n")
    assert [(q.question, q.origin, q.position) for q in stored] == [
        ("First?", "typed", 1),
        ("Second?", "typed", 2),
    ]
    more = eval_questions_type(eval_set=eval_set, text="Third?")
    assert more[0].position == 3
