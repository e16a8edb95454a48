"""Database connections around Celery tasks: Celery's Django fixup closed every connection before and after each
task (a new connection per task); config.celery keeps a thread's connection for its next task as Django keeps
one between requests, and closes what is too old, unusable, or (gevent's pool) a finished greenlet's."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from django.db import connection

from config import celery, celery_app

pytestmark = [pytest.mark.django_db(transaction=True)]


def _task(*, eager: bool = False) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_the_fixup_no_longer_closes_connections_itself():
    assert celery_app.conf.get("CELERY_DB_REUSE_MAX") >= 10**6


def test_a_threads_pool_task_leaves_its_connection_for_the_threads_next_task(settings):
    connection.ensure_connection()
    opened = connection.connection
    celery._drop_old_connections(sender=_task())
    celery._release_connections(sender=_task())
    assert connection.connection is opened


def test_a_connection_past_its_max_age_or_unusable_is_closed_after_the_task():
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1  # older than CONN_MAX_AGE
    celery._release_connections(sender=_task())
    assert connection.connection is None

    connection.ensure_connection()
    connection.errors_occurred = True
    connection.health_check_enabled = True
    connection.is_usable = lambda: False  # type: ignore[method-assign]
    try:
        celery._drop_old_connections(sender=_task())
    finally:
        del connection.is_usable
    assert connection.connection is None


def test_in_gevents_pool_a_tasks_connections_close_with_it(monkeypatch):
    monkeypatch.setattr(celery, "_greenlets", lambda: True)
    connection.ensure_connection()
    celery._release_connections(sender=_task())
    assert connection.connection is None


def test_an_eager_task_leaves_its_callers_connection_alone():
    connection.ensure_connection()
    opened = connection.connection
    connection.close_at = time.monotonic() - 1
    celery._drop_old_connections(sender=_task(eager=True))
    celery._release_connections(sender=_task(eager=True))
    assert connection.connection is opened
