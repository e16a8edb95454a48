"""Test an assistant before launch from the shell: import a question set, run it now in this process (no worker
needed; no conversation, no charge), print each answer's verdict and the totals, and optionally what changed
since an earlier run of the same questions.

    python manage.py captain_eval --assistant 7 --file questions.jsonl --label "new instructions"
    python manage.py captain_eval --assistant 7 --file questions.csv --compare 12

The file is CSV (a `question` column, optional `expected`) or JSONL ({"question", "expected", "previous"}); a bad
line stops the command with every bad line named, before anything is stored. Running the same questions again
reuses their set (same name, same questions), so its runs can be compared here and on the dashboard page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from captain.assistants.models import Assistant
from captain.evaluation.models import EvalAnswer, EvalRun, EvalSet
from captain.evaluation.selectors import eval_answers, eval_run_totals, eval_runs_compare
from captain.evaluation.services.imports import MAX_FILE_BYTES, ParsedQuestion, parse_upload
from captain.evaluation.services.runs import eval_run_create, eval_run_execute
from captain.evaluation.services.sets import eval_questions_add, eval_set_create

WIDTH = 60


def _cut(text: str, width: int = WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _same_questions(eval_set: EvalSet, parsed: list[ParsedQuestion]) -> bool:
    stored = [(q.question, q.expected, q.previous) for q in eval_set.questions.filter(approved=True)]
    return stored == [(q.question, q.expected, q.previous) for q in parsed]


class Command(BaseCommand):
    help = "Run a question set through an assistant (no charge) and print the answers, verdicts and totals."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--assistant", type=int, required=True, help="The assistant's id.")
        parser.add_argument("--file", required=True, help="A .csv or .jsonl question file (UTF-8).")
        parser.add_argument("--label", default="", help="A label for this run (e.g. what changed).")
        parser.add_argument("--name", default="", help="The set's name (default: the file's name).")
        parser.add_argument("--compare", type=int, default=None, help="An earlier run of the same questions.")

    def handle(self, *args: Any, assistant: int, file: str, label: str, name: str, **options: Any) -> None:
        found = Assistant.objects.filter(pk=assistant).first()
        if found is None:
            raise CommandError(f"No assistant {assistant}.")
        parsed = self._read(Path(file))
        before = self._earlier(options["compare"], found, parsed)
        eval_set = before.set if before is not None else self._set(found, name or Path(file).name, parsed)
        try:
            run = eval_run_create(eval_set=eval_set, label=label)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"{run} of “{eval_set}” (set {eval_set.pk}): {run.question_count} question(s), {run.model_name}"
        )
        outcome = eval_run_execute(run_id=run.pk, step_aside=False, on_answer=self._progress)
        run.refresh_from_db()
        self._table(run)
        if before is not None:
            self._compare(before, run)
        if outcome != "done":
            raise CommandError(f"The run {outcome}: {run.detail or 'see the log'}.")

    def _read(self, path: Path) -> list[ParsedQuestion]:
        if not path.is_file():
            raise CommandError(f"No file {path}.")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CommandError(f"{path} is larger than {MAX_FILE_BYTES // 1024} KiB.")
        try:
            return parse_upload(file_name=path.name, data=path.read_bytes())
        except ValidationError as exc:
            raise CommandError(f"{path}: nothing imported.\n" + "\n".join(exc.messages)) from exc

    def _set(self, assistant: Assistant, name: str, parsed: list[ParsedQuestion]) -> EvalSet:
        for existing in EvalSet.objects.filter(assistant=assistant, name=name).order_by("-created", "-id"):
            if _same_questions(existing, parsed):
                return existing
        eval_set = eval_set_create(assistant=assistant, name=name)
        eval_questions_add(eval_set=eval_set, questions=parsed, origin="uploaded")
        return eval_set

    def _earlier(
        self, run_id: int | None, assistant: Assistant, parsed: list[ParsedQuestion]
    ) -> EvalRun | None:
        """The run to compare with; its set is this run's, so it must ask exactly the file's questions."""
        if run_id is None:
            return None
        before = EvalRun.objects.select_related("set").filter(pk=run_id, set__assistant=assistant).first()
        if before is None:
            raise CommandError(f"No run {run_id} of assistant {assistant.pk} to compare with.")
        if not _same_questions(before.set, parsed):
            raise CommandError(
                f"Run {run_id} asked other questions (set {before.set_id}): runs compare question by question, "
                "so the file must hold the same questions as that run's set."
            )
        return before

    def _progress(self, answer: EvalAnswer) -> None:
        self.stderr.write(f"  {answer.question.position}: {answer.verdict} ({answer.seconds:.1f} s)")

    def _table(self, run: EvalRun) -> None:
        self.stdout.write(f"\n{'#':>3}  {'verdict':<9}  {'question':<40}  answer")
        for answer in eval_answers(run=run):
            self.stdout.write(
                f"{answer.question.position:>3}  {answer.verdict:<9}  {_cut(answer.question.question, 40):<40}  "
                f"{_cut(answer.reply)}"
            )
        t = eval_run_totals(run=run)
        self.stdout.write(
            f"\nTotals: {t.answered}/{run.question_count} answered, {t.verified} verified, {t.refused} refused, "
            f"{t.unchecked} unchecked, {t.errors} errors. Run id {run.pk}."
        )

    def _compare(self, before: EvalRun, after: EvalRun) -> None:
        rows = [r for r in eval_runs_compare(left=before, right=after) if r.changed]
        self.stdout.write(f"\nCompared with run {before.pk}: {len(rows)} question(s) changed.")
        for row in rows:
            self.stdout.write(
                f"\n{row.question.position}. {_cut(row.question.question, 100)}  [{', '.join(row.changes)}]"
            )
            for title, answer in ((f"run {before.pk}", row.left), (f"run {after.pk}", row.right)):
                text = f"{answer.verdict:<9}  {_cut(answer.reply, 100)}" if answer else "not answered"
                self.stdout.write(f"   {title:<10} {text}")
