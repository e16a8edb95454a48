"""The Celery app. Workers answer customer messages (captain) and deliver replies (helpdesk)."""

import os
import sys
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("captain_helpdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
def _refuse_unsafe_start(**kwargs: Any) -> None:
    """Celery runs Django's system checks but ignores their result: refuse here to start a worker (or beat) with
    DEBUG off and no real SECRET_KEY (config.E001), as gunicorn and manage.py do."""
    from django.core.exceptions import ImproperlyConfigured

    from config.checks import refuse_unsafe_start

    try:
        refuse_unsafe_start()
    except ImproperlyConfigured as exc:
        # Celery logs an exception from a signal handler and starts anyway; SystemExit is not caught.
        sys.stderr.write(f"Refusing to start: {exc}\n")
        raise SystemExit(1) from exc
