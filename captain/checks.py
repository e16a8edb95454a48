"""System checks: the time budgets must nest (or a long run is redelivered while it still runs: two replies),
and the operator's model endpoints must be well-formed."""

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

from captain.conf import captain_setting


@checks.register(checks.Tags.compatibility)
def check_time_budgets_nest(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    per_call = captain_setting("LLM_TIMEOUT_SECONDS") * (captain_setting("LLM_MAX_RETRIES") + 1)
    worst_run = per_call * captain_setting("MAX_TURNS_CAP")
    soft = getattr(settings, "CELERY_TASK_SOFT_TIME_LIMIT", None)
    hard = getattr(settings, "CELERY_TASK_TIME_LIMIT", None)
    visibility = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("visibility_timeout", 3600)
    lock_ttl = captain_setting("LOCK_TTL_SECONDS")
    chain = [("worst-case run", worst_run), ("soft time limit", soft), ("hard time limit", hard)]
    chain += [("broker visibility timeout", visibility)]
    errors: list[checks.CheckMessage] = []
    for (low_name, low), (high_name, high) in pairwise(chain):
        if low is None or high is None or not low < high:
            errors.append(
                checks.Error(f"{low_name} ({low}) must be below {high_name} ({high}).", id="captain.E001")
            )
    if hard is not None and not lock_ttl > hard:
        errors.append(
            checks.Error(
                f"Account run-slot TTL LOCK_TTL_SECONDS ({lock_ttl}) must exceed the hard limit.",
                id="captain.E002",
            )
        )
    return errors


@checks.register(checks.Tags.compatibility)
def check_model_endpoints(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """A malformed CAPTAIN_MODEL_ENDPOINTS stops start-up with the reason, instead of failing every run."""
    from captain.assistants.services.model_endpoints import operator_endpoints

    try:
        endpoints = operator_endpoints()
    except ValueError as exc:
        return [checks.Error(str(exc), id="captain.E002")]
    if not endpoints:
        return [checks.Error("CAPTAIN['MODEL_ENDPOINTS'] names no endpoint.", id="captain.E002")]
    empty = [name for name, endpoint in endpoints.items() if not endpoint.model_credits]
    if empty:
        return [
            checks.Error(
                f"Model endpoint(s) {', '.join(empty)} offer no model ('models').", id="captain.E002"
            )
        ]
    return []
