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
    # The conversation lock is a lease renewed every third of this while the run lives (services/locks.py).
    "LOCK_LEASE_SECONDS": 30,
    "LOCK_RETRY_SECONDS": 2,
    "MAX_ATTEMPTS": 3,
    "CREDITS_PER_REPLY": 1,
    "MODEL_ENDPOINTS": None,
    "EXTRA_MODELS": "",
    "OWN_ENDPOINTS_ALLOWED": True,
    "OWN_ENDPOINT_CREDITS_PER_REPLY": 1,
    "SECRETS_KEYS": [],
    "DEFAULT_CREDIT_LIMIT": 1000,
    "FAQ_SCORE_THRESHOLD": None,
    "HISTORY_MESSAGES": 20,
    "RECORD_CONTENT": True,
    "STORE_SPANS": True,
    "SWEEP_AFTER_SECONDS": 120,
    # A message whose publish failed (broker down) has no ai_enqueued_at; the sweeper takes it after this.
    "SWEEP_UNPUBLISHED_AFTER_SECONDS": 10,
    # Quiet time after a customer's latest message before the AI answers, so a burst gets one reply; and the
    # longest a burst may defer the answer (a customer who never pauses is still answered).
    "DEBOUNCE_SECONDS": 1.5,
    "DEBOUNCE_MAX_SECONDS": 6.0,
    # Runs of one account at the same time (0: no cap). Over the cap the task waits in the queue (retried).
    "MAX_CONCURRENT_RUNS_PER_ACCOUNT": 4,
    "ACCOUNT_BUSY_RETRY_SECONDS": 3,
    # After a failed publish, webhooks skip the broker for this long (the sweeper enqueues their messages), so
    # an outage costs one slow publish per process and window instead of one per webhook.
    "BROKER_DOWN_BACKOFF_SECONDS": 5.0,
    # Router model calls the semantic router may spend per customer message (docs/routing.md).
    "ROUTER_MODEL_CALLS_PER_MESSAGE": 1,
}


def captain_setting(name: str) -> Any:
    if name not in DEFAULTS:
        raise KeyError(f"Unknown CAPTAIN setting {name!r}")
    return getattr(settings, "CAPTAIN", {}).get(name, DEFAULTS[name])
