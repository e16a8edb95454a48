"""Draft routing examples now, in this process (no worker needed), for enabled scenarios whose node has no drafts
of the scenario's current texts and no builder examples: the backfill the hourly sweep does in batches.

    python manage.py captain_draft_examples                  # every assistant
    python manage.py captain_draft_examples --assistant 7    # one assistant
    python manage.py captain_draft_examples --assistant 7 --force   # redraft all its enabled scenarios

Each scenario costs one call to its assistant's model (no credits). A failure is reported and the next scenario
is drafted.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from captain.assistants.models import Assistant, Scenario
from captain.conf import captain_setting
from captain.routing.services.example_drafts import drafts_missing, store_drafts


class Command(BaseCommand):
    help = "Draft routing examples for scenarios without current drafts (one model call per scenario)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--assistant", type=int, default=None, help="Only this assistant's scenarios (id)."
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="Redraft every enabled scenario in scope, even with current drafts or builder examples.",
        )

    def handle(self, *args: Any, assistant: int | None, force: bool, **options: Any) -> None:
        if not captain_setting("ROUTING_EXAMPLE_DRAFTS"):
            raise CommandError('Drafting is off (CAPTAIN["ROUTING_EXAMPLE_DRAFTS"]).')
        if assistant is not None and not Assistant.objects.filter(pk=assistant).exists():
            raise CommandError(f"No assistant {assistant}.")
        if force:
            scenarios = Scenario.objects.filter(enabled=True)
            if assistant is not None:
                scenarios = scenarios.filter(assistant_id=assistant)
            ids = list(scenarios.order_by("id").values_list("id", flat=True))
        else:
            ids = [missing.scenario_id for missing in drafts_missing(assistant_id=assistant)]
        stored_total = 0
        for scenario in Scenario.objects.select_related("assistant").filter(pk__in=ids).order_by("id"):
            stored = store_drafts(scenario, force=force)
            stored_total += stored
            outcome = f"{stored} drafted" if stored else "nothing drafted (see the log)"
            self.stdout.write(f"assistant {scenario.assistant_id} / {scenario.key}: {outcome}")
        self.stdout.write(f"{len(ids)} scenario(s), {stored_total} example(s) stored.")
