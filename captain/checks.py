"""System checks: the time budgets must nest, or a long run is redelivered while it still runs (two replies)."""

from itertools import pairwise

from django.conf import settings
from django.core import checks

from .conf import captain_setting


@checks.register(checks.Tags.compatibility)
def check_time_budgets_nest(app_configs, **kwargs) -> list[checks.CheckMessage]:
    per_call = captain_setting("LLM_TIMEOUT_SECONDS") * (captain_setting("LLM_MAX_RETRIES") + 1)
    worst_run = per_call * captain_setting("MAX_TURNS_CAP")
    soft = getattr(settings, "CELERY_TASK_SOFT_TIME_LIMIT", None)
    hard = getattr(settings, "CELERY_TASK_TIME_LIMIT", None)
    visibility = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("visibility_timeout", 3600)
    lock_ttl = captain_setting("LOCK_TTL_SECONDS")
    chain = [("worst-case run", worst_run), ("soft time limit", soft), ("hard time limit", hard)]
    chain += [("broker visibility timeout", visibility)]
    errors = []
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
