"""Settings read from the environment: the bundled model gets a timeout that fits it, and the budgets still nest."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.servers import ROOT

PRINT_BUDGETS = """
import django, json
django.setup()
from django.conf import settings
from django.core import checks
errors = [e.id for e in checks.run_checks() if e.level >= checks.ERROR]
print(json.dumps({"timeout": settings.CAPTAIN["LLM_TIMEOUT_SECONDS"], "retries": settings.CAPTAIN["LLM_MAX_RETRIES"],
                  "soft": settings.CELERY_TASK_SOFT_TIME_LIMIT, "errors": errors}))
"""


def budgets(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CAPTAIN_", "CELERY_"))}
    out = subprocess.run(
        [sys.executable, "-c", PRINT_BUDGETS],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("env", "timeout", "retries"),
    [
        ({}, 30.0, 1),
        # The bundled model on a busy CPU: one long attempt, no retry (a retry on a saturated CPU only waits again).
        ({"CAPTAIN_BUNDLED_MODEL": "1"}, 180.0, 0),
        # An explicit setting always wins.
        (
            {"CAPTAIN_BUNDLED_MODEL": "1", "CAPTAIN_LLM_TIMEOUT": "60", "CAPTAIN_LLM_MAX_RETRIES": "2"},
            60.0,
            2,
        ),
    ],
)
def test_model_timeout_fits_the_model_and_the_time_budgets_still_nest(env, timeout, retries):
    figures = budgets(**env)

    assert (figures["timeout"], figures["retries"]) == (timeout, retries)
    assert (
        figures["errors"] == []
    )  # captain.E001/E002: per-call x attempts x turns < soft < hard < visibility
    assert figures["soft"] > timeout * (retries + 1) * 8
