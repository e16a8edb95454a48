"""Settings for Captain Helpdesk, read from the environment.

Embedded defaults (SQLite, a local Redis, the bundled local model on 127.0.0.1) need no configuration;
`DATABASE_URL`, `REDIS_URL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `CAPTAIN_MODEL` and the standard `OTEL_*`
variables move the same code to real infrastructure.
"""

import os
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONCE, NONE, SELF

from captain.conf import DEFAULTS as CAPTAIN_DEFAULTS
from captain.conf import task_time_limits, worst_case_run_seconds

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("HELPDESK_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def env_flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(value: str) -> list[str]:
    """Comma-separated, blanks dropped."""
    return [item.strip() for item in value.split(",") if item.strip()]


def env_settings(variables: dict[str, tuple[str, Callable[[str], Any]]]) -> dict[str, Any]:
    """{setting: parse(value)} for each environment variable of `variables` that is set, and nothing else: the
    defaults live in the apps' conf modules, so a value is written in one place."""
    return {key: parse(os.environ[name]) for key, (name, parse) in variables.items() if name in os.environ}


# DEBUG is off unless asked for: scripts/run asks for it (DJANGO_DEBUG=1) for the embedded demo. With DEBUG off,
# config.checks (config.E001) stops start-up without a real DJANGO_SECRET_KEY; this development key is public.
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key" if DEBUG else "")
ALLOWED_HOSTS = [
    h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]
PUBLIC_BASE_URL = os.environ.get("HELPDESK_PUBLIC_URL", "http://127.0.0.1:8000")

# ---- E-mail (notifications: helpdesk.services.notifications) ------------------------------------------------------
# Embedded default: the console backend prints each e-mail to the web/worker log. Setting EMAIL_HOST switches to
# SMTP; EMAIL_BACKEND names any other Django backend. The timeout bounds how long a commit's e-mail may wait.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if os.environ.get("EMAIL_HOST")
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Captain Helpdesk <helpdesk@localhost>")
SERVER_EMAIL = os.environ.get("SERVER_EMAIL", DEFAULT_FROM_EMAIL)

# ---- HTTPS (docs/security.md, "Production settings") -------------------------------------------------------
# Production defaults with DEBUG off (`manage.py check --deploy` passes with them); with DEBUG on, what a
# development server on http://127.0.0.1 needs. Each can be set on its own.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", not DEBUG)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", not DEBUG)
# Behind N reverse proxies that terminate TLS: trust their X-Forwarded-Proto (else every request looks like
# plain HTTP and SECURE_SSL_REDIRECT loops), and take the client address for the login lockout from the
# X-Forwarded-For entry the outermost of them added (config.login_throttle.client_ip). 0: no proxy, and both
# headers are ignored, since a client could forge them.
TRUSTED_PROXY_COUNT = env_int("DJANGO_TRUSTED_PROXY_COUNT", 0)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXY_COUNT else None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # Two-factor sign-in (helpdesk.services.two_factor): authenticator-app codes and one-time backup codes.
    # Before helpdesk, whose admin replaces django-otp's device admins (they show the secret and its QR code).
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "helpdesk",
    "captain",
    "axes",
    "csp",
    "config",  # config.checks: refuses DEBUG off without a real SECRET_KEY
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions, before CommonMiddleware (as Django documents): the browser's language (Accept-Language).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): whether this session passed the two-factor step (django-otp).
    "django_otp.middleware.OTPMiddleware",
    # The signed-in person's chosen language wins over the browser's (it needs the user, so after auth).
    "helpdesk.i18n.PersonLanguageMiddleware",
    # The request being served, for the audit log's who and where (helpdesk.services.audit).
    "helpdesk.services.audit.AuditRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: turns a locked-out login into the lockout page (429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "helpdesk.i18n.person_language_context",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets the web server and a worker read while the other writes; the timeout absorbs short write locks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
    # A file, not memory, so Celery worker processes started by the end-to-end tests share the test database;
    # one per test process, so two test runs on one machine never share it.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"helpdesk-test-{os.getpid()}.sqlite3")
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en"
# The dashboard's languages; helpdesk.models.Language lists the same codes for a person's and an inbox's choice.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# Files customers send (images, voice notes), kept through Django's storage API; served only through the
# dashboard's authenticated attachment view, never as public media URLs.
MEDIA_ROOT = VAR_DIR / "media"
# The dashboard's own sign-in (agents are not staff, so the admin's login page would refuse them).
LOGIN_URL = "/auth/login/"
LOGIN_REDIRECT_URL = "/app/"

# ---- Login throttling (django-axes): the dashboard sign-in and the admin's --------------------------------------
# Axes first: it refuses a locked-out username or client before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# N failures lock the username (from any address) and, separately, the client address (for any username),
# until the cool-off has passed since the last failure.
AXES_FAILURE_LIMIT = env_int("HELPDESK_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("HELPDESK_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# A successful sign-in clears that user's failures (config.login_throttle.LoginAttempts).
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "config.login_throttle.LoginAttempts"
AXES_CLIENT_IP_CALLABLE = "config.login_throttle.client_ip"
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
# Two-factor sign-in (django-otp): the name an authenticator app shows beside the code. A wrong code doubles the
# wait before the next one is checked (django-otp's throttling, factor 1: 1 s, 2 s, 4 s...), and every wrong code
# also counts as a failed sign-in for axes above (helpdesk.views.sign_in).
OTP_TOTP_ISSUER = "Captain Helpdesk"

# ---- Content-Security-Policy (django-csp) ------------------------------------------------------------------------
# Everything from this origin, no inline script or style: templates/ keep theirs in static files, and the few
# inline blocks of third-party pages (Swagger UI) carry the per-request nonce. The same policy with DEBUG on, so a
# violation shows up in development and in the browser tests.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# Webhook bodies are refused above this size before any parsing (see helpdesk.api.webhooks).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("HELPDESK_MAX_BODY_BYTES", 256 * 1024)
# A bulk action ticks up to helpdesk.services.bulk.BULK_LIMIT (1,000) conversations, one form field each, plus
# the form's own fields; Django's default of 1,000 fields answered such a selection with a 400 before the view
# could say anything. Past this, the view's "at most 1,000" message still comes first for up to 1,100 ids.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1100

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # drf-spectacular's, plus each operation's error answers (400/401/403/404/415/429).
    "DEFAULT_SCHEMA_CLASS": "helpdesk.api.schema.ApiSchema",
    # JSON only, with the webhooks' nesting limit (RecursionError was a 500). A form or multipart body cannot carry
    # a list or an object: DRF dropped those fields and the write went ahead on the rest (a routing graph was
    # emptied). Any other content type is a JSON 415; the document upload adds multipart on its own view.
    "DEFAULT_PARSER_CLASSES": ["helpdesk.api.parsers.BoundedJSONParser"],
    # DRF's test client speaks the API's language: JSON unless a test asks for multipart (the document upload).
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    # A body over DATA_UPLOAD_MAX_MEMORY_SIZE is a JSON 400 like any other parse error (Django's was an HTML page).
    "EXCEPTION_HANDLER": "helpdesk.api.exceptions.api_exception_handler",
    # Per-token throttling. The counters live in Django's cache (per process with the default local-memory
    # cache; set a shared cache for several web processes).
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.UserRateThrottle",
        "rest_framework.throttling.AnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": os.environ.get("HELPDESK_API_RATE_USER", "1200/min"),
        "anon": os.environ.get("HELPDESK_API_RATE_ANON", "60/min"),
    },
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Captain Helpdesk API",
    "DESCRIPTION": "Conversations, messages, assistants, scenarios, FAQ entries and credit usage.",
    "VERSION": "0.1.0",
    # Swagger UI and ReDoc from our own static files (drf-spectacular-sidecar), not a CDN: the docs page must
    # work on a machine with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One name for the routing modes (fields `mode` and `default_mode`): otherwise drf-spectacular warns
    # (W001) and `manage.py check --deploy --fail-level WARNING` fails.
    "ENUM_NAME_OVERRIDES": {
        "RoutingModeEnum": "captain.routing.models.RoutingMode",
        "ScenarioModeEnum": "captain.assistants.models.ScenarioMode",
        # Several models have a `status`: each gets its own enum name in the schema (conversations keep theirs).
        "StatusEnum": "helpdesk.models.Conversation.Status",
        "FaqEntryStatusEnum": "captain.knowledge.models.FaqEntry.Status",
        "KnowledgeDocumentStatusEnum": "captain.knowledge.models.KnowledgeDocument.Status",
        "RoutingExampleStatusEnum": "captain.routing.models.RoutingExample.Status",
        # Likewise `kind`: custom attribute definitions and memory variables.
        "AttributeKindEnum": "helpdesk.models.CustomAttributeDefinition.Kind",
        "MemoryVariableKindEnum": "captain.memory.models.MemoryVariable.Kind",
        # `action`: a shortcut's and an audit entry's; `event`: one set for the webhooks' events and deliveries.
        "ActionEnum": "captain.actions.models.Shortcut.Action",
        "AuditEntryActionEnum": "helpdesk.models.AuditEntry.Action",
        "WebhookEventEnum": "helpdesk.models.WebhookEvent",
        # `visibility` of macros and `event` of automation rules.
        "MacroVisibilityEnum": "helpdesk.models.automation.Visibility",
        "AutomationEventEnum": "helpdesk.models.AutomationEvent",
        # An invitation's `role` (a membership's roles) and `state`.
        "MembershipRoleEnum": "helpdesk.models.Membership.Role",
        "InvitationStateEnum": "helpdesk.models.Invitation.State",
    },
    # `<id:...>` in a path (helpdesk.ids): a 64-bit positive integer, as `<int:...>` was typed before.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 2**63 - 1}
    },
}

# ---- Redis and Celery --------------------------------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# Time budgets nest (RELIABILITY.md): per LLM call timeout x (retries + 1) x max turns < soft limit < hard limit
# < broker visibility timeout < conversation lock TTL is checked by `captain.checks`; the chain's margins and
# the model defaults live in `captain.conf`, here only what the environment changes.
# The bundled model runs on this machine's CPU (scripts/run sets CAPTAIN_BUNDLED_MODEL=1 when it starts it): it
# generated 1.4 tokens/s on 2 busy cores, so one reply can take minutes, and retrying a call that timed out on a
# saturated CPU only waits again: 180 s per attempt and no retry (an explicit CAPTAIN_LLM_* still wins).
BUNDLED_MODEL = env_bool("CAPTAIN_BUNDLED_MODEL", False)
CAPTAIN_MODEL_BUDGET = {
    # Its server answers two calls at once (captain.local_llm): the model gate admits two, one kept for customers.
    **(
        {
            "LLM_TIMEOUT_SECONDS": 180.0,
            "LLM_MAX_RETRIES": 0,
            "MODEL_GATE_SLOTS": 2,
            "MODEL_GATE_BACKGROUND_ALONE": True,
        }
        if BUNDLED_MODEL
        else {}
    ),
    **env_settings(
        {
            "LLM_TIMEOUT_SECONDS": ("CAPTAIN_LLM_TIMEOUT", float),
            "LLM_MAX_RETRIES": ("CAPTAIN_LLM_MAX_RETRIES", int),
            "MAX_TURNS_CAP": ("CAPTAIN_MAX_TURNS_CAP", int),
        }
    ),
}
RUN_BUDGET_SECONDS = worst_case_run_seconds(
    timeout=CAPTAIN_MODEL_BUDGET.get("LLM_TIMEOUT_SECONDS", CAPTAIN_DEFAULTS["LLM_TIMEOUT_SECONDS"]),
    retries=CAPTAIN_MODEL_BUDGET.get("LLM_MAX_RETRIES", CAPTAIN_DEFAULTS["LLM_MAX_RETRIES"]),
    max_turns=CAPTAIN_MODEL_BUDGET.get("MAX_TURNS_CAP", CAPTAIN_DEFAULTS["MAX_TURNS_CAP"]),
)

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT, CELERY_TASK_TIME_LIMIT = task_time_limits(RUN_BUDGET_SECONDS)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT * 2,
    # A webhook must answer fast even when Redis is down: fail the publish quickly, the message is already
    # stored and the sweeper enqueues it after recovery.
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_DEFAULT_QUEUE = "helpdesk"
# Each captain task to its lane's queue (captain.lanes): customer replies on `captain`, background AI work on
# `captain_background`; everything else on `helpdesk`.
CELERY_TASK_ROUTES = ("captain.lanes.route_task",)
# Task modules outside the apps' `tasks.py` (autodiscovered): the conversation timers (see helpdesk/timers.py).
CELERY_IMPORTS = ("helpdesk.timers",)
# Celery's Django fixup closes every database connection before and after each task, so every task opened a new
# one (an eighth of a busy worker's samples). A practically endless reuse count turns that off; config.celery
# closes connections as Django does around a request instead (CONN_MAX_AGE, broken ones), and always in gevent's
# pool, where each task is a new greenlet with connections of its own.
CELERY_DB_REUSE_MAX = 10**9
CELERY_BEAT_SCHEDULE = {
    # Outgoing messages whose delivery task was never published (broker down, worker killed after commit).
    "helpdesk-outbox-sweep": {"task": "helpdesk.tasks.outbox_sweep", "schedule": 15.0},
    # E-mail inboxes with an IMAP mailbox: new mail read every minute (a poll left queued longer is dropped).
    "helpdesk-mailboxes-poll": {
        "task": "helpdesk.timers.mailboxes_poll",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # Conversation timers (helpdesk/timers.py): a snooze wakes within a minute of its time, a
    # quiet AI conversation is judged within a minute of its account's threshold; a waiting customer is
    # counted in hours, so every five minutes is plenty. Each sweep is a few indexed queries when idle.
    "helpdesk-snoozed-wake": {"task": "helpdesk.timers.snoozed_wake_sweep", "schedule": 60.0},
    # SLA targets are minutes: a breach is recorded (and told) within a minute of its due time.
    "helpdesk-sla-breaches": {"task": "helpdesk.timers.sla_breach_sweep", "schedule": 60.0},
    "helpdesk-auto-resolve-ai": {"task": "helpdesk.timers.auto_resolve_ai_sweep", "schedule": 60.0},
    "helpdesk-auto-resolve-waiting": {
        "task": "helpdesk.timers.auto_resolve_waiting_sweep",
        "schedule": 300.0,
    },
    # Often enough that a message stored during a broker outage is answered soon after recovery; the sweep is
    # one indexed query when there is nothing to do.
    "captain-pending-messages-sweep": {
        "task": "captain.tasks.pending_messages_sweep",
        "schedule": env_float("CAPTAIN_SWEEP_INTERVAL_SECONDS", 15.0),
    },
    # Knowledge documents whose re-sync interval (hours) has passed.
    "captain-knowledge-resync-due": {"task": "captain.tasks.knowledge_resync_due", "schedule": 3600.0},
    # FAQ drafts from conversations resolved lately with a person's answer (bounded batch per sweep).
    "captain-faq-drafts-conversations": {
        "task": "captain.tasks.faq_drafts_conversations_sweep",
        "schedule": 900.0,
    },
    # Routing example drafts for scenarios without drafts of their current texts (edits queue their own; this
    # catches scenarios from before drafting existed and publishes that failed). Bounded batch per sweep.
    "captain-routing-example-drafts": {
        "task": "captain.tasks.routing_example_drafts_sweep",
        "schedule": 3600.0,
    },
    # Stored spans past CAPTAIN_SPAN_RETENTION_DAYS, deleted in batches within a time budget per sweep.
    "captain-span-retention": {"task": "captain.tasks.span_retention_sweep", "schedule": 3600.0},
    # Audit log entries past HELPDESK_AUDIT_RETENTION_DAYS and finished webhook deliveries past
    # HELPDESK_WEBHOOK_DELIVERY_RETENTION_DAYS, in batches within a time budget (the next sweep goes on).
    "helpdesk-audit-retention": {"task": "helpdesk.tasks.audit_retention_sweep", "schedule": 3600.0},
    "helpdesk-webhook-delivery-retention": {
        "task": "helpdesk.tasks.event_webhooks_retention_sweep",
        "schedule": 3600.0,
    },
    # Sign-in history past HELPDESK_SIGN_IN_RETENTION_DAYS.
    "helpdesk-sign-in-retention": {"task": "helpdesk.tasks.sign_in_retention_sweep", "schedule": 3600.0},
    # Event webhook deliveries whose task was never published (broker down) or got lost.
    "helpdesk-event-webhooks-sweep": {"task": "helpdesk.tasks.event_webhooks_sweep", "schedule": 30.0},
}

# The apps' settings namespaces hold only what this deployment changes: every default lives in the app's conf
# module (helpdesk/conf.py, captain/conf.py, with why it is what it is), and each line below names the environment
# variable that overrides it (tests/test_settings.py fails if a default is written here again).
HELPDESK = {
    # Project wiring, not a default: `captain` answers customers (helpdesk's own default is no AI), plugged in
    # by import path so helpdesk never imports it.
    "AI_RESPONDER": os.environ.get("HELPDESK_AI_RESPONDER", "captain.integration.responder"),
    **env_settings(
        {
            # Per inbox (an inbox may set its own); over it: 429 + Retry-After (providers retry), nothing stored.
            "WEBHOOK_RATE_LIMIT_PER_MINUTE": ("HELPDESK_WEBHOOK_RATE_LIMIT", int),
            # Per client address; only failed authentications count, a signed request is never refused by it.
            "WEBHOOK_AUTH_FAILURES_PER_MINUTE": ("HELPDESK_WEBHOOK_AUTH_FAILURE_LIMIT", int),
            "PASSWORD_RESETS_PER_HOUR": ("HELPDESK_PASSWORD_RESETS_PER_HOUR", int),
            # How long an invitation's link works, in days.
            "INVITATION_DAYS": ("HELPDESK_INVITATION_DAYS", int),
            "DELIVERY_MAX_RETRIES": ("HELPDESK_DELIVERY_MAX_RETRIES", int),
            "OUTBOX_UNPUBLISHED_AFTER_SECONDS": ("HELPDESK_OUTBOX_UNPUBLISHED_AFTER_SECONDS", int),
            "DELIVERY_TIMEOUT_SECONDS": ("HELPDESK_DELIVERY_TIMEOUT", float),
            "DELIVERY_BACKOFF_SECONDS": ("HELPDESK_DELIVERY_BACKOFF", float),
            # Outbound policy for tenant URLs (docs/security.md): comma-separated host names, addresses or
            # networks that may be private or use plain http, each best with its port ("127.0.0.1:8082", as
            # scripts/run's demo, "[::1]:8081"); without one, every port of it (Redis too, on 127.0.0.1).
            "OUTBOUND_ALLOWED_HOSTS": ("HELPDESK_OUTBOUND_ALLOWED_HOSTS", env_list),
            "OUTBOUND_ALLOW_HTTP": ("HELPDESK_OUTBOUND_ALLOW_HTTP", env_flag),
            "OUTBOUND_MAX_RESPONSE_BYTES": ("HELPDESK_OUTBOUND_MAX_RESPONSE_BYTES", int),
            "ATTACHMENT_MAX_BYTES": ("HELPDESK_ATTACHMENT_MAX_BYTES", int),
            # Comma-separated Fernet keys for inbox secrets at rest (the first encrypts; all decrypt).
            "SECRETS_KEYS": ("HELPDESK_SECRETS_KEYS", env_list),
            # Audit log entries and finished webhook deliveries older than these days are deleted (0 keeps them).
            "AUDIT_RETENTION_DAYS": ("HELPDESK_AUDIT_RETENTION_DAYS", int),
            "SIGN_IN_RETENTION_DAYS": ("HELPDESK_SIGN_IN_RETENTION_DAYS", int),
            "WEBHOOK_DELIVERY_RETENTION_DAYS": ("HELPDESK_WEBHOOK_DELIVERY_RETENTION_DAYS", int),
        }
    ),
}

CAPTAIN = {
    **CAPTAIN_MODEL_BUDGET,
    **env_settings(
        {
            "OPENAI_BASE_URL": ("OPENAI_BASE_URL", str),
            "OPENAI_API_KEY": ("OPENAI_API_KEY", str),
            "DEFAULT_MODEL": ("CAPTAIN_MODEL", str),
            "LOCK_LEASE_SECONDS": ("CAPTAIN_LOCK_LEASE_SECONDS", float),
            "MAX_ATTEMPTS": ("CAPTAIN_MAX_ATTEMPTS", int),
            "CREDITS_PER_REPLY": ("CAPTAIN_CREDITS_PER_REPLY", int),
            "COPILOT_CREDITS": ("CAPTAIN_COPILOT_CREDITS", int),
            # JSON naming each endpoint's base_url, key variable (api_key_env) and models (system check
            # captain.E002); empty means the one "default" endpoint. CAPTAIN_MODELS: "name=credits,...".
            "MODEL_ENDPOINTS": ("CAPTAIN_MODEL_ENDPOINTS", lambda value: value or None),
            "EXTRA_MODELS": ("CAPTAIN_MODELS", str),
            "VISION_MODELS": ("CAPTAIN_VISION_MODELS", str),
            "TEXT_TOOL_MODELS": ("CAPTAIN_TEXT_TOOL_MODELS", str),
            "ARTIFACT_THRESHOLD_CHARS": ("CAPTAIN_ARTIFACT_THRESHOLD_CHARS", int),
            "TRANSCRIPTION_BASE_URL": ("CAPTAIN_TRANSCRIPTION_BASE_URL", str),
            "TRANSCRIPTION_API_KEY": ("CAPTAIN_TRANSCRIPTION_API_KEY", str),
            "TRANSCRIPTION_MODEL": ("CAPTAIN_TRANSCRIPTION_MODEL", str),
            "OWN_ENDPOINTS_ALLOWED": ("CAPTAIN_OWN_ENDPOINTS_ALLOWED", env_flag),
            "OWN_ENDPOINT_CREDITS_PER_REPLY": ("CAPTAIN_OWN_ENDPOINT_CREDITS_PER_REPLY", int),
            # Comma-separated Fernet keys (the first encrypts; the others still decrypt, for rotation).
            "SECRETS_KEYS": (
                "CAPTAIN_SECRETS_KEYS",
                lambda value: [k for k in value.split(",") if k.strip()],
            ),
            "DEFAULT_CREDIT_LIMIT": ("CAPTAIN_DEFAULT_CREDIT_LIMIT", int),
            "KNOWLEDGE_GROUNDING_CHECK": ("CAPTAIN_KNOWLEDGE_GROUNDING_CHECK", env_flag),
            "RECORD_CONTENT": ("CAPTAIN_RECORD_CONTENT", env_flag),
            "STORE_SPANS": ("CAPTAIN_STORE_SPANS", env_flag),
            # Days stored spans are kept (0: for ever); an hourly sweep deletes older ones in batches.
            "SPAN_RETENTION_DAYS": ("CAPTAIN_SPAN_RETENTION_DAYS", int),
            "SWEEP_AFTER_SECONDS": ("CAPTAIN_SWEEP_AFTER_SECONDS", int),
            "SWEEP_UNPUBLISHED_AFTER_SECONDS": ("CAPTAIN_SWEEP_UNPUBLISHED_AFTER_SECONDS", int),
            # docs/reliability.md: a burst of customer messages within this window gets one reply.
            "DEBOUNCE_SECONDS": ("CAPTAIN_DEBOUNCE_SECONDS", float),
            "DEBOUNCE_MAX_SECONDS": ("CAPTAIN_DEBOUNCE_MAX_SECONDS", float),
            # A message arriving during its conversation's run is looked at again after this (docs/reliability.md).
            "LOCK_RETRY_SECONDS": ("CAPTAIN_LOCK_RETRY_SECONDS", float),
            # docs/deploy.md: customer and background lanes, and the model gate's slots per endpoint.
            "LANES": ("CAPTAIN_LANES", env_flag),
            "MODEL_GATE_SLOTS": ("CAPTAIN_MODEL_GATE_SLOTS", int),
            "MODEL_GATE_CUSTOMER_SLOTS": ("CAPTAIN_MODEL_GATE_CUSTOMER_SLOTS", int),
            "MODEL_GATE_BACKGROUND_ALONE": ("CAPTAIN_MODEL_GATE_BACKGROUND_ALONE", env_flag),
            "PROMPT_WARM_ASSISTANTS": ("CAPTAIN_PROMPT_WARM_ASSISTANTS", int),
            "MAX_CONCURRENT_RUNS_PER_ACCOUNT": ("CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT", int),
            "ACCOUNT_BUSY_RETRY_SECONDS": ("CAPTAIN_ACCOUNT_BUSY_RETRY_SECONDS", int),
            "BROKER_DOWN_BACKOFF_SECONDS": ("CAPTAIN_BROKER_DOWN_BACKOFF_SECONDS", float),
            # docs/routing.md: router model calls the semantic router may spend per customer message.
            "ROUTER_MODEL_CALLS_PER_MESSAGE": ("CAPTAIN_ROUTER_MODEL_CALLS_PER_MESSAGE", int),
            # docs/routing.md: drafted example phrases for scenarios, and the takeover window of corrections.
            "ROUTING_EXAMPLE_DRAFTS": ("CAPTAIN_ROUTING_EXAMPLE_DRAFTS", env_flag),
            "CORRECTION_TAKEOVER_SECONDS": ("CAPTAIN_CORRECTION_TAKEOVER_SECONDS", int),
        }
    ),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO ("HTTP Request: POST ..."): noise in the worker log and the demo's output.
    # django-axes announces itself at INFO in every process, every management command's output included.
    "loggers": {
        "httpx": {"level": "WARNING"},
        # The openai SDK logs each request under this name (its bundled HTTP client), not "httpx".
        "httpx2": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},
    },
}
