"""The `CAPTAIN = {...}` settings namespace, read lazily with defaults."""

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    "OPENAI_BASE_URL": "http://127.0.0.1:8081/v1",
    "OPENAI_API_KEY": "local",
    "DEFAULT_MODEL": "qwen2.5-coder-0.5b-instruct",
    "LLM_TIMEOUT_SECONDS": 30.0,
    "LLM_MAX_RETRIES": 1,
    "MAX_TURNS_CAP": 8,
    "RUN_DEADLINE_SECONDS": 480.0,
    "LOCK_TTL_SECONDS": 660,
    "LOCK_RETRY_SECONDS": 2,
    "MAX_ATTEMPTS": 3,
    "CREDITS_PER_REPLY": 1,
    "DEFAULT_CREDIT_LIMIT": 1000,
    "FAQ_SCORE_THRESHOLD": None,
    "HISTORY_MESSAGES": 20,
    "RECORD_CONTENT": True,
    "STORE_SPANS": True,
    "SWEEP_AFTER_SECONDS": 120,
}


def captain_setting(name: str) -> Any:
    if name not in DEFAULTS:
        raise KeyError(f"Unknown CAPTAIN setting {name!r}")
    return getattr(settings, "CAPTAIN", {}).get(name, DEFAULTS[name])
