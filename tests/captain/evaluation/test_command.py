"""`manage.py captain_eval`: import a JSONL file, run it now, print the table and totals, compare with a run."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from captain.answering.models import CreditLedgerEntry
from captain.evaluation.models import EvalQuestion, EvalRun, EvalSet
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("captain_eval", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "launch.jsonl"
    lines = [{"question": "Can I rent a bike?"}, {"question": "Let me talk to a person"}]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def test_a_jsonl_file_is_run_and_compared_with_an_earlier_run(model, questions):
    assistant = AssistantFactory()
    first = run("--assistant", str(assistant.pk), "--file", str(questions), "--label", "before")
    assert "verified   Can I rent a bike?" in first
    assert "refused    Let me talk to a person" in first
    assert "Totals: 2/2 answered, 1 verified, 1 refused, 0 unchecked, 0 errors." in first
    before = EvalRun.objects.get()

    assistant.handoff_message = "A colleague will answer you shortly."
    assistant.save()
    second = run("--assistant", str(assistant.pk), "--file", str(questions), "--compare", str(before.pk))

    assert EvalSet.objects.count() == 1 and EvalQuestion.objects.count() == 2  # the same questions, one set
    assert f"Compared with run {before.pk}: 1 question(s) changed." in second
    assert "2. Let me talk to a person  [answer]" in second
    assert "A colleague will answer you shortly." in second
    assert not CreditLedgerEntry.objects.exists()


def test_bad_input_stops_with_a_clear_message_and_stores_nothing(model, tmp_path):
    assistant = AssistantFactory()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "fine"}\n{"question": \n')
    with pytest.raises(CommandError, match="Line 2: not valid JSON"):
        run("--assistant", str(assistant.pk), "--file", str(bad))
    with pytest.raises(CommandError, match="No assistant 999"):
        run("--assistant", "999", "--file", str(bad))
    with pytest.raises(CommandError, match="No file"):
        run("--assistant", str(assistant.pk), "--file", str(tmp_path / "missing.csv"))
    assert not EvalSet.objects.exists()


def test_compare_needs_a_run_of_the_same_questions(model, questions, tmp_path):
    assistant = AssistantFactory()
    run("--assistant", str(assistant.pk), "--file", str(questions))
    other = tmp_path / "other.csv"
    other.write_text("question\nSomething else?\n")
    earlier = EvalRun.objects.get()
    with pytest.raises(CommandError, match="asked other questions"):
        run("--assistant", str(assistant.pk), "--file", str(other), "--compare", str(earlier.pk))
    assert EvalSet.objects.count() == 1  # nothing stored for the refused file
