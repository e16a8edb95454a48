"""Reading a question set from a file (CSV or JSONL) or a textarea, all or nothing.

Every bad row is reported with its line number, and nothing is stored when any row is bad: a half-imported set
would be tested as if it were the whole one.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

MAX_FILE_BYTES = 1024 * 1024
MAX_QUESTIONS = 500
"""Per file and per set: a run answers them one after another in the background."""
MAX_QUESTION_CHARS = 4000
"""As the playground's message box: what a customer's message may be."""
MAX_EXPECTED_CHARS = 10_000
MAX_PREVIOUS_TURNS = 20
ROLES = ("user", "assistant")
MAX_ERRORS_SHOWN = 20


@dataclass(frozen=True)
class ParsedQuestion:
    question: str
    expected: str = ""
    previous: list[dict[str, str]] = field(default_factory=list)


def _fail(errors: list[str]) -> None:
    shown = errors[:MAX_ERRORS_SHOWN]
    if len(errors) > len(shown):
        shown.append(f"… and {len(errors) - len(shown)} more.")
    raise ValidationError(shown)


def _decode(data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise ValidationError(
            f"The file is {len(data) / 1024:.0f} KiB; a question set may be at most {MAX_FILE_BYTES // 1024} KiB."
        )
    try:
        return data.decode("utf-8-sig")  # Excel writes UTF-8 CSV with a byte order mark
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValidationError(f"Line {line}: the file is not UTF-8 text (save it as UTF-8).") from exc


def _question(value: object, where: str, errors: list[str]) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not isinstance(value, str):
        errors.append(f'{where}: "question" must be text.')
    elif not text:
        errors.append(f"{where}: the question is empty.")
    elif len(text) > MAX_QUESTION_CHARS:
        errors.append(f"{where}: the question is {len(text)} characters; at most {MAX_QUESTION_CHARS}.")
    return text


def _expected(value: object, where: str, errors: list[str]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.append(f'{where}: "expected" must be text.')
        return ""
    if len(value) > MAX_EXPECTED_CHARS:
        errors.append(f"{where}: the expected answer is longer than {MAX_EXPECTED_CHARS} characters.")
    return value.strip()


def _previous(value: object, where: str, errors: list[str]) -> list[dict[str, str]]:
    if value is None:
        return []
    ok = isinstance(value, list) and len(value) <= MAX_PREVIOUS_TURNS
    turns: list[dict[str, str]] = []
    for turn in value if isinstance(value, list) else []:
        if not (
            isinstance(turn, dict) and turn.get("role") in ROLES and isinstance(turn.get("content"), str)
        ):
            ok = False
            break
        turns.append({"role": turn["role"], "content": turn["content"]})
    if not ok:
        errors.append(
            f'{where}: "previous" must be a list of at most {MAX_PREVIOUS_TURNS} turns '
            '{"role": "user" or "assistant", "content": text}.'
        )
    return turns


def _counted(questions: list[ParsedQuestion], errors: list[str]) -> list[ParsedQuestion]:
    if errors:
        _fail(errors)
    if not questions:
        raise ValidationError("There are no questions to add.")
    if len(questions) > MAX_QUESTIONS:
        raise ValidationError(f"There are {len(questions)} questions; a set holds at most {MAX_QUESTIONS}.")
    return questions


def parse_jsonl(data: bytes) -> list[ParsedQuestion]:
    """One JSON object per line: {"question": ..., "expected": ..., "previous": [{role, content}, ...]}.
    Blank lines are skipped; line numbers count them."""
    errors: list[str] = []
    questions: list[ParsedQuestion] = []
    for number, line in enumerate(_decode(data).splitlines(), 1):
        if not line.strip():
            continue
        where = f"Line {number}"
        try:
            row: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not valid JSON ({exc.msg}, column {exc.colno}).")
            continue
        if not isinstance(row, dict):
            errors.append(f'{where}: each line must be a JSON object with a "question".')
            continue
        question = _question(row.get("question"), where, errors)
        expected = _expected(row.get("expected"), where, errors)
        previous = _previous(row.get("previous"), where, errors)
        questions.append(ParsedQuestion(question, expected, previous))
    return _counted(questions, errors)


def parse_csv(data: bytes) -> list[ParsedQuestion]:
    """A header row naming `question` (and optionally `expected`; a `previous` column is ignored: a CSV cell
    is no place for a conversation, use JSONL for follow-ups)."""
    text = _decode(data)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = [name.strip().lower() for name in reader.fieldnames or []]
    except csv.Error as exc:
        raise ValidationError(f"Line 1: the header cannot be read ({exc}).") from exc
    if "question" not in header:
        raise ValidationError('Line 1: the header must name a "question" column (and optionally "expected").')
    reader.fieldnames = header
    errors: list[str] = []
    questions: list[ParsedQuestion] = []
    try:
        for row in reader:
            where = f"Line {reader.line_num}"
            if None in row:
                errors.append(f"{where}: more cells than the header names (quote a cell holding a comma).")
                continue
            if not any((v or "").strip() for v in row.values()):
                continue  # a blank line
            question = _question(row.get("question") or "", where, errors)
            expected = _expected(row.get("expected") or "", where, errors)
            questions.append(ParsedQuestion(question, expected))
    except csv.Error as exc:
        errors.append(f"Line {reader.line_num}: {exc}.")
    return _counted(questions, errors)


def parse_upload(*, file_name: str, data: bytes) -> list[ParsedQuestion]:
    """The questions of an uploaded .csv or .jsonl file; ValidationError naming every bad line otherwise."""
    name = file_name.lower()
    if name.endswith(".csv"):
        return parse_csv(data)
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return parse_jsonl(data)
    raise ValidationError('Upload a .csv file (a "question" column) or a .jsonl file (one object per line).')


def parse_typed(text: str) -> list[ParsedQuestion]:
    """One question per non-blank line of a textarea."""
    errors: list[str] = []
    questions = [
        ParsedQuestion(_question(line, f"Line {number}", errors))
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]
    return _counted(questions, errors)
