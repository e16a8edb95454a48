"""Settings read from the environment: the bundled model gets a timeout that fits it, the budgets still nest, and
every default lives in one place (the app's conf module; config/settings.py passes only environment overrides)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from captain.conf import captain_setting
from tests.support.servers import ROOT

PRINT_BUDGETS = """
import django, json
django.setup()
from django.conf import settings
from django.core import checks
from captain.conf import captain_setting
errors = [e.id for e in checks.run_checks() if e.level >= checks.ERROR]
print(json.dumps({"timeout": captain_setting("LLM_TIMEOUT_SECONDS"), "retries": captain_setting("LLM_MAX_RETRIES"),
                  "soft": settings.CELERY_TASK_SOFT_TIME_LIMIT, "errors": errors}))
"""

PRINT_NAMESPACES = """
import django, json
django.setup()
from django.conf import settings
from captain.conf import DEFAULTS as CAPTAIN_DEFAULTS, DERIVED, captain_setting
from helpdesk.conf import DEFAULTS as HELPDESK_DEFAULTS
print(json.dumps({
    "CAPTAIN": settings.CAPTAIN, "HELPDESK": settings.HELPDESK,
    "captain_defaults": CAPTAIN_DEFAULTS, "helpdesk_defaults": HELPDESK_DEFAULTS,
    "derived": {name: captain_setting(name) for name in DERIVED},
    "hard": settings.CELERY_TASK_TIME_LIMIT,
}))
"""

# The one line config/settings.py writes without an environment variable: which AI answers customers is the
# project's composition (helpdesk's own default is no AI), not a default of either app.
PROJECT_WIRING = {"HELPDESK": {"AI_RESPONDER": "captain.integration.responder"}, "CAPTAIN": {}}


def run_settings(script: str, **env: str) -> dict:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAPTAIN_", "CELERY_", "HELPDESK_", "OPENAI_")) or k == "HELPDESK_VAR_DIR"
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def budgets(**env: str) -> dict:
    return run_settings(PRINT_BUDGETS, **env)


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


def test_settings_pass_only_environment_overrides_never_a_default_again():
    """A default written in config/settings.py as well as in the app's conf module drifts (SWEEP_AFTER_SECONDS
    did: 120 in captain/conf.py, 630 in effect). Without environment variables the namespaces hold nothing but
    the project's wiring, and no key repeats its app default."""
    figures = run_settings(PRINT_NAMESPACES)

    assert {"CAPTAIN": figures["CAPTAIN"], "HELPDESK": figures["HELPDESK"]} == PROJECT_WIRING
    for namespace, defaults in (("CAPTAIN", "captain_defaults"), ("HELPDESK", "helpdesk_defaults")):
        repeated = {k: v for k, v in figures[namespace].items() if figures[defaults].get(k, object()) == v}
        assert repeated == {}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # What the deployment ran with before the defaults moved to one place (config/settings.py's values).
        ({}, {"RUN_DEADLINE_SECONDS": 480.0, "LOCK_TTL_SECONDS": 630, "SWEEP_AFTER_SECONDS": 630}),
        (
            {"CAPTAIN_BUNDLED_MODEL": "1"},
            {"RUN_DEADLINE_SECONDS": 1440.0, "LOCK_TTL_SECONDS": 1590, "SWEEP_AFTER_SECONDS": 1590},
        ),
        (
            {"CAPTAIN_SWEEP_AFTER_SECONDS": "900"},
            {"RUN_DEADLINE_SECONDS": 480.0, "LOCK_TTL_SECONDS": 630, "SWEEP_AFTER_SECONDS": 900},
        ),
    ],
)
def test_time_budget_settings_follow_the_celery_limits(env, expected):
    figures = run_settings(PRINT_NAMESPACES, **env)

    assert figures["derived"] == expected


@pytest.mark.parametrize(
    ("env", "namespace", "name", "value"),
    [
        (
            {"OPENAI_BASE_URL": "https://llm.example/v1"},
            "CAPTAIN",
            "OPENAI_BASE_URL",
            "https://llm.example/v1",
        ),
        ({"CAPTAIN_MODEL": "gpt-4o-mini"}, "CAPTAIN", "DEFAULT_MODEL", "gpt-4o-mini"),
        ({"CAPTAIN_RECORD_CONTENT": "0"}, "CAPTAIN", "RECORD_CONTENT", False),
        ({"CAPTAIN_SECRETS_KEYS": "k1,,k2"}, "CAPTAIN", "SECRETS_KEYS", ["k1", "k2"]),
        ({"CAPTAIN_MODEL_ENDPOINTS": ""}, "CAPTAIN", "MODEL_ENDPOINTS", None),
        (
            {"HELPDESK_OUTBOUND_ALLOWED_HOSTS": " 127.0.0.1, localhost,"},
            "HELPDESK",
            "OUTBOUND_ALLOWED_HOSTS",
            ["127.0.0.1", "localhost"],
        ),
        ({"HELPDESK_DELIVERY_TIMEOUT": "3"}, "HELPDESK", "DELIVERY_TIMEOUT_SECONDS", 3.0),
    ],
)
def test_environment_variables_still_override(env, namespace, name, value):
    figures = run_settings(PRINT_NAMESPACES, **env)

    assert figures[namespace][name] == value


def test_captain_defaults_alone_keep_the_budgets_nested(settings):
    """A project that sets no CAPTAIN namespace gets the same lock TTL and sweep threshold as this one: past its
    Celery hard limit (captain/conf.py said 660 s and 120 s; a sweep after 120 s doubles a run still alive)."""
    settings.CAPTAIN = {}

    assert captain_setting("LOCK_TTL_SECONDS") == settings.CELERY_TASK_TIME_LIMIT + 60
    assert captain_setting("SWEEP_AFTER_SECONDS") == settings.CELERY_TASK_TIME_LIMIT + 60
    assert captain_setting("RUN_DEADLINE_SECONDS") < settings.CELERY_TASK_SOFT_TIME_LIMIT
