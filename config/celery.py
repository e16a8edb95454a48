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


@signals.task_prerun.connect
def _drop_old_connections(sender: Any = None, **kwargs: Any) -> None:
    """Before a task, as Django before a request: a connection past CONN_MAX_AGE or left unusable goes. Not for
    a task run eagerly inside its caller (its caller's connection and transaction are in use)."""
    from django.db import close_old_connections

    if not _eager(sender):
        close_old_connections()


@signals.task_postrun.connect
def _release_connections(sender: Any = None, **kwargs: Any) -> None:
    """After a task: in a pool whose threads outlive their tasks (threads, prefork, solo) the connection stays for
    the thread's next task while CONN_MAX_AGE allows, as between Django's requests; in gevent's pool each task runs
    in a greenlet of its own whose connections nothing would reuse, so they are closed now, not when collected."""
    from django.db import close_old_connections, connections

    if _eager(sender):
        return
    if _greenlets():
        connections.close_all()
    else:
        close_old_connections()


def _eager(task: Any) -> bool:
    return bool(getattr(getattr(task, "request", None), "is_eager", False))


def _greenlets() -> bool:
    gevent_monkey = sys.modules.get("gevent.monkey")
    return gevent_monkey is not None and gevent_monkey.is_module_patched("threading")
