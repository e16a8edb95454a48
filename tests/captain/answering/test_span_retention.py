"""Stored spans are kept SPAN_RETENTION_DAYS, then deleted by a beat sweep in batches (one short DELETE each)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from captain.answering.models import SpanRecord
from captain.answering.services import span_retention
from captain.answering.services.span_retention import spans_delete_expired
from captain.answering.tasks import span_retention_sweep
from config import celery_app
from tests.factories import SpanRecordFactory

pytestmark = pytest.mark.django_db


def spans_aged(days: float, n: int) -> set[int]:
    start = timezone.now() - timedelta(days=days)
    return {SpanRecordFactory(start_time=start).pk for _ in range(n)}


def deletes(queries: CaptureQueriesContext) -> int:
    return sum(q["sql"].lstrip().upper().startswith("DELETE") for q in queries.captured_queries)


def test_sweep_deletes_spans_past_the_retention_in_batches_and_keeps_newer(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "SPAN_RETENTION_DAYS": 30, "SPAN_SWEEP_BATCH": 3}
    spans_aged(45, 7)
    spans_aged(30.1, 1)
    kept = spans_aged(29.9, 2) | spans_aged(0, 2)

    with CaptureQueriesContext(connection) as queries:
        deleted = span_retention_sweep()

    assert deleted == 8
    assert set(SpanRecord.objects.values_list("pk", flat=True)) == kept
    assert deletes(queries) == 3  # 3 + 3 + 2: no statement deletes more than a batch


def test_retention_is_a_setting(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "SPAN_RETENTION_DAYS": 7}
    spans_aged(8, 2)
    kept = spans_aged(6, 1)

    assert spans_delete_expired() == 2
    assert set(SpanRecord.objects.values_list("pk", flat=True)) == kept


def test_default_retention_is_thirty_days():
    spans_aged(31, 1)
    kept = spans_aged(29, 1)

    assert spans_delete_expired() == 1
    assert set(SpanRecord.objects.values_list("pk", flat=True)) == kept


def test_zero_retention_keeps_every_span(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "SPAN_RETENTION_DAYS": 0}
    spans_aged(3650, 2)

    assert spans_delete_expired() == 0
    assert SpanRecord.objects.count() == 2


def test_sweep_stops_at_its_time_budget_and_the_next_one_goes_on(settings, monkeypatch):
    settings.CAPTAIN = {**settings.CAPTAIN, "SPAN_SWEEP_BATCH": 2, "SPAN_SWEEP_SECONDS": 10.0}
    spans_aged(60, 5)
    ticks = iter([0.0, 4.0, 11.0, 100.0, 104.0, 111.0])  # each sweep: start, after batch 1, after batch 2
    monkeypatch.setattr(span_retention, "_monotonic", lambda: next(ticks))

    assert spans_delete_expired() == 4  # two batches, then out of time with one row left
    assert spans_delete_expired() == 1
    assert SpanRecord.objects.count() == 0


def test_the_beat_schedule_runs_the_span_sweep():
    entry = django_settings.CELERY_BEAT_SCHEDULE["captain-span-retention"]

    assert entry["task"] == span_retention_sweep.name
    assert entry["task"] in celery_app.tasks
