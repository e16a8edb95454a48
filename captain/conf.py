"""The `CAPTAIN = {...}` settings namespace, read lazily with defaults (DRF's `api_settings` shape).

This module is the ONE home of every default: a project's settings pass only what its deployment changes
(config/settings.py: the environment variables it documents; tests/test_settings.py holds it to that). Three
defaults follow the Celery time limits instead of a fixed number (`DERIVED`), so the budgets stay nested
(`captain.checks`) whatever a deployment sets its model timeout to.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    "OPENAI_BASE_URL": "http://127.0.0.1:8081/v1",
    "OPENAI_API_KEY": "local",
    "DEFAULT_MODEL": "qwen2.5-coder-0.5b-instruct",
    # A hosted endpoint answers in seconds: 30 s per attempt and one retry (the bundled model gets more,
    # config/settings.py CAPTAIN_BUNDLED_MODEL).
    "LLM_TIMEOUT_SECONDS": 30.0,
    "LLM_MAX_RETRIES": 1,
    "MAX_TURNS_CAP": 8,
    # Tool outputs longer than this many characters are stored as run artifacts and referenced from the
    # context (docs/actions.md); 0 keeps every output in the context.
    "ARTIFACT_THRESHOLD_CHARS": 4000,
    # A killed worker's conversation lock lapses after this (a live run renews it every third of it,
    # services/locks.py).
    "LOCK_LEASE_SECONDS": 30.0,
    "LOCK_RETRY_SECONDS": 2,
    "MAX_ATTEMPTS": 3,
    "CREDITS_PER_REPLY": 1,
    # Credits one copilot result (a draft, summary or rewrite for an agent) costs; failures cost nothing.
    "COPILOT_CREDITS": 1,
    # Named model endpoints tenants pick from (docs/security.md). None: one endpoint named "default"
    # built from OPENAI_BASE_URL / OPENAI_API_KEY, offering DEFAULT_MODEL plus EXTRA_MODELS ("name=credits,...").
    "MODEL_ENDPOINTS": None,
    "EXTRA_MODELS": "",
    # Tenants' own endpoints (their URL, their key): whether they may add them, and credits per reply.
    "OWN_ENDPOINTS_ALLOWED": True,
    "OWN_ENDPOINT_CREDITS_PER_REPLY": 1,
    # Fernet keys for secrets stored at rest (first one encrypts; the others still decrypt, for rotation).
    # Empty: a key derived from SECRET_KEY (rotating SECRET_KEY then makes stored keys unreadable).
    "SECRETS_KEYS": [],
    "DEFAULT_CREDIT_LIMIT": 1000,
    "HISTORY_MESSAGES": 20,
    # Prompts, raw model output and tool arguments are stored on spans for the debug log; turn off if a
    # privacy policy forbids keeping message bodies in telemetry.
    "RECORD_CONTENT": True,
    "STORE_SPANS": True,
    # Stored spans older than this many days are deleted by a beat sweep (captain.answering.services.span_retention);
    # 0 keeps them for ever. Each DELETE takes at most SPAN_SWEEP_BATCH rows, so the table is never locked
    # for long, and a sweep stops after SPAN_SWEEP_SECONDS (the next one, an hour later, goes on).
    "SPAN_RETENTION_DAYS": 30,
    "SPAN_SWEEP_BATCH": 5000,
    "SPAN_SWEEP_SECONDS": 60.0,
    # A job whose publish failed (broker down) has no `enqueued_at`; the sweeper takes it after this.
    "SWEEP_UNPUBLISHED_AFTER_SECONDS": 10,
    # Quiet time after a customer's latest message before the AI answers, so a burst gets one reply; and the
    # longest a burst may defer the answer (a customer who never pauses is still answered).
    # Customers first (captain.lanes, captain.model_gate): background AI work on its own queue, and a gate per model
    # endpoint that holds background calls back while a customer call waits. Slots: calls an endpoint serves at
    # once (the bundled model: its server's two slots, config/settings.py); customer slots: kept free of
    # background calls. False: one queue, no gate.
    "LANES": True,
    "MODEL_GATE_SLOTS": 64,
    "MODEL_GATE_CUSTOMER_SLOTS": 1,
    "MODEL_GATE_BACKGROUND_ALONE": False,
    # After a worker starts, the fixed prompts of this many recently active assistants are sent to their model
    # once (one output token each), so the server's prompt cache has them before the first customer writes
    # (captain.answering.services.warmup). 0: no warm-up.
    "PROMPT_WARM_ASSISTANTS": 4,
    "DEBOUNCE_SECONDS": 1.5,
    "DEBOUNCE_MAX_SECONDS": 6.0,
    # Runs of one account at the same time (0: no cap). Over the cap the task waits in the queue (retried).
    "MAX_CONCURRENT_RUNS_PER_ACCOUNT": 4,
    "ACCOUNT_BUSY_RETRY_SECONDS": 3,
    # After a failed publish, webhooks skip the broker for this long (the sweeper enqueues their messages), so
    # an outage costs one slow publish per process and window instead of one per webhook.
    "BROKER_DOWN_BACKOFF_SECONDS": 5.0,
    # Router model calls the semantic router may spend per customer message (docs/routing.md). 1: at most one
    # small call per turn (one A-or-B question); 2 lets it ask two yes/no questions, a little more accurate on
    # a 0.5B router model.
    "ROUTER_MODEL_CALLS_PER_MESSAGE": 1,
    # A person taking a conversation over from the AI this soon after the router moved it to another node
    # records the message as a routing correction for the node it left (captain.routing.services.routing_corrections);
    # later takeovers are about something else. 0: takeovers record nothing.
    "CORRECTION_TAKEOVER_SECONDS": 300,
    # Knowledge (docs/knowledge.md). Relevance thresholds on the vector score, by kind: None uses the measured
    # defaults of captain.knowledge.services.knowledge_search.RetrievalThresholds ({"faq": .., "chunk": .., ...} to override).
    "KNOWLEDGE_THRESHOLDS": None,
    # How the best fused candidates are reordered: None uses the measured defaults of
    # captain.knowledge.services.rerank.RerankSettings ({"enabled": False} turns the rerank off).
    "KNOWLEDGE_RERANK": None,
    # Assistants whose vectors a process keeps in memory (2 KiB per chunk each).
    "KNOWLEDGE_INDEX_CACHE_ASSISTANTS": 16,
    # The deterministic check of a reply's numbers, links and e-mails against the sources (on by default).
    "KNOWLEDGE_GROUNDING_CHECK": True,
    # An approved FAQ entry at least this close to the customer's message (and 0.10 ahead of the next entry, in
    # the customer's language) is sent as written, without a model call (docs/knowledge.md). None: never.
    "KNOWLEDGE_FAQ_ANSWER_SCORE": 0.65,
    # FAQ drafts (captain/knowledge/services/faq_drafts.py). Model calls per document at most, chunks per call and pairs
    # asked per chunk: 20 x 3 chunks covers a 60-chunk document; the rest of a longer one is not drafted from.
    "FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT": 20,
    "FAQ_DRAFTS_CHUNKS_PER_CALL": 3,
    "FAQ_DRAFTS_PAIRS_PER_CHUNK": 2,
    "FAQ_DRAFTS_MAX_TOKENS": 800,
    # Cosine similarity of question+answer at which a draft repeats an entry; None: the measured default
    # (captain.knowledge.services.faq_draft_pairs.DUPLICATE_SIMILARITY, 0.72).
    "FAQ_DRAFTS_DUPLICATE_SIMILARITY": None,
    # The conversation sweep: conversations resolved within this many hours, at most this many per sweep.
    "FAQ_DRAFTS_CONVERSATION_LOOKBACK_HOURS": 24,
    "FAQ_DRAFTS_CONVERSATION_BATCH": 20,
    # Routing example drafts (captain/routing/services/example_drafts.py): the assistant's model writes customer-style
    # messages for each scenario's routing node as suggestions to review. Off: nothing is drafted or queued
    # (stored drafts stay as they are). Accounts have no language setting: drafts are written in
    # these languages (codes) plus the one the scenario itself is written in, this many per language; the
    # hourly sweep queues at most ROUTING_EXAMPLE_DRAFTS_BATCH scenarios without drafts of their current texts.
    "ROUTING_EXAMPLE_DRAFTS": True,
    # Drafted phrases are suggestions: the router uses one once a person accepts it (or adopts the drafts as the
    # builder's examples). True: also use a node's unreviewed drafts while the builder has written none; False:
    # never; "auto": only for an assistant on which the product's own check (captain/routing/services/
    # draft_check.py, leave-one-out over the messages whose node a person stated) shows they help. Not True by
    # default because on descriptions-only held-out graphs the bundled 0.5B model's drafts lowered routing
    # accuracy by 1.2-5.5 points (docs/routing.md).
    "ROUTING_UNREVIEWED_DRAFTS": "auto",
    "ROUTING_EXAMPLE_LANGUAGES": ["en", "zh"],
    "ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE": 6,
    "ROUTING_EXAMPLE_DRAFTS_BATCH": 20,
    # Knowledge documents (captain.knowledge.services.knowledge): an upload over this size is refused (kept as a failed
    # document saying so, its bytes not stored); sitemaps and crawls fetch at most this many pages, crawls follow
    # links at most this deep, and a scheduled re-sync is at most this many hours apart.
    "KNOWLEDGE_MAX_UPLOAD_BYTES": 20 * 1024 * 1024,
    "KNOWLEDGE_MAX_PAGES": 200,
    "KNOWLEDGE_MAX_DEPTH": 3,
    "KNOWLEDGE_MAX_SYNC_INTERVAL_HOURS": 24 * 90,
    # A document that chunks into more passages than this fails (split it): one upload cannot flood an index.
    "KNOWLEDGE_MAX_CHUNKS_PER_DOCUMENT": 5000,
    # Files customers send (captain.answering.services.media_content). Before answering, a run waits at most this long for
    # the batch's files still being fetched. A vision model (an endpoint's `vision` list) gets at most this many
    # of the latest images, each at most this size (sent inline, base64: a third larger); older or larger ones
    # are described to it in words.
    "MEDIA_WAIT_SECONDS": 10.0,
    # The default endpoint's models that can see images ("name,name"); a configured endpoint lists its own.
    "VISION_MODELS": "",
    # The default endpoint's models that cannot return native tool calls ("name,name"): their agents use the
    # text tool protocol (captain.runtime.text_protocol). A configured endpoint lists its own ("text_tools");
    # `manage.py captain_probe_tools` detects which protocol a model follows.
    "TEXT_TOOL_MODELS": "",
    "VISION_MAX_IMAGES": 4,
    "VISION_MAX_IMAGE_BYTES": 4 * 1024 * 1024,
    # Voice notes are transcribed by an OpenAI-compatible `/audio/transcriptions` endpoint (reached through the
    # outbound policy) when a URL is set; without one the model is told it cannot hear them.
    "TRANSCRIPTION_BASE_URL": "",
    "TRANSCRIPTION_API_KEY": "",
    "TRANSCRIPTION_MODEL": "whisper-1",
    "TRANSCRIPTION_TIMEOUT_SECONDS": 30.0,
}

# Time budgets nest (RELIABILITY.md): worst-case run < Celery soft limit < hard limit < broker visibility
# timeout, and the conversation lock and the sweeper wait past the hard limit.
SOFT_LIMIT_MARGIN_SECONDS = 60
"""After the run's deadline, time to hand the conversation to people and record the run."""
HARD_LIMIT_MARGIN_SECONDS = 30
PAST_HARD_LIMIT_SECONDS = 60
"""How long after the hard limit a run is certainly dead (lock TTL, sweeper threshold)."""


def worst_case_run_seconds(*, timeout: float, retries: int, max_turns: int) -> float:
    """Per-call timeout x attempts x turns: the longest a run's model calls can take."""
    return timeout * (retries + 1) * max_turns


def task_time_limits(run_seconds: float) -> tuple[int, int]:
    """(soft, hard) Celery time limits for runs that may take `run_seconds`."""
    soft = int(run_seconds + SOFT_LIMIT_MARGIN_SECONDS)
    return soft, soft + HARD_LIMIT_MARGIN_SECONDS


def _worst_case_run() -> float:
    return worst_case_run_seconds(
        timeout=float(captain_setting("LLM_TIMEOUT_SECONDS")),
        retries=int(captain_setting("LLM_MAX_RETRIES")),
        max_turns=int(captain_setting("MAX_TURNS_CAP")),
    )


def _hard_limit() -> int:
    """The project's Celery hard time limit, or the one the model budget implies when it sets none."""
    hard = getattr(settings, "CELERY_TASK_TIME_LIMIT", None)
    return int(hard) if hard is not None else task_time_limits(_worst_case_run())[1]


DERIVED: dict[str, Callable[[], Any]] = {
    # The run's own deadline: its worst case, which the soft limit exceeds (480 s with the defaults above).
    "RUN_DEADLINE_SECONDS": _worst_case_run,
    # The account run-slot lock outlives the hard limit (captain.E002), so a killed run frees it (630 s).
    "LOCK_TTL_SECONDS": lambda: _hard_limit() + PAST_HARD_LIMIT_SECONDS,
    # A message still unanswered this long after it was enqueued is re-enqueued: longer than the hard limit,
    # so a run that is still alive is never doubled (630 s).
    "SWEEP_AFTER_SECONDS": lambda: _hard_limit() + PAST_HARD_LIMIT_SECONDS,
}


def captain_setting(name: str) -> Any:
    if name not in DEFAULTS and name not in DERIVED:
        raise KeyError(f"Unknown CAPTAIN setting {name!r}")
    configured = getattr(settings, "CAPTAIN", {})
    if name in configured:
        return configured[name]
    return DERIVED[name]() if name in DERIVED else DEFAULTS[name]
