"""System checks that keep an unsafe configuration from starting (registered by config.apps).

Django's own SECRET_KEY check (security.W009) is a warning and runs only with `check --deploy`, so a server
started with DEBUG off and no key used to start anyway and answer every page with a 500, or run on the
development key. Here the same test is an ERROR on every command that runs checks (runserver, migrate, check,
management commands), and `refuse_unsafe_start` applies it to the WSGI entry point, which runs no checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

# Django's thresholds for a real key (django.core.checks.security.base, W009).
MIN_LENGTH = 50
MIN_UNIQUE_CHARACTERS = 5
INSECURE_PREFIX = "django-insecure"
# config/settings.py's fallback with DEBUG on: public, in the repository.
DEVELOPMENT_KEYS = frozenset({"dev-only-insecure-key"})

HINT = (
    "Set DJANGO_SECRET_KEY to a long random value, e.g. the output of "
    "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`, and keep it secret (docs/security.md, "
    '"Production settings"). For development only, DJANGO_DEBUG=1 uses a built-in key.'
)


def secret_key_problem(secret_key: str | None) -> str | None:
    """Why `secret_key` is unfit for a server with DEBUG off, or None when it is fit."""
    if not secret_key:
        return "SECRET_KEY is missing or empty"
    if secret_key in DEVELOPMENT_KEYS:
        return "SECRET_KEY is the development key published in the repository"
    if secret_key.startswith(INSECURE_PREFIX):
        return f"SECRET_KEY starts with {INSECURE_PREFIX!r}, the mark of a generated development key"
    if len(secret_key) < MIN_LENGTH or len(set(secret_key)) < MIN_UNIQUE_CHARACTERS:
        return (
            f"SECRET_KEY is too weak: fewer than {MIN_LENGTH} characters or fewer than "
            f"{MIN_UNIQUE_CHARACTERS} different characters"
        )
    return None


@checks.register(checks.Tags.security)
def check_secret_key(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    if settings.DEBUG:
        return []
    try:
        secret_key = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django refuses to even read an empty key
        secret_key = ""
    problem = secret_key_problem(secret_key)
    if problem is None:
        return []
    return [checks.Error(f"{problem} and DEBUG is off.", hint=HINT, id="config.E001")]


def refuse_unsafe_start() -> None:
    """Raise ImproperlyConfigured (a failed worker boot in gunicorn, with this message) on an unsafe key."""
    errors = check_secret_key()
    if errors:
        raise ImproperlyConfigured(f"{errors[0].msg} {errors[0].hint}")
