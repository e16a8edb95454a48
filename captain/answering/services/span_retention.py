"""Span retention: stored spans (`captain.SpanRecord`, the debug log's telemetry) are deleted once older than
`SPAN_RETENTION_DAYS`, by a beat sweep (`captain.tasks.span_retention_sweep`).

The sweep deletes in batches of `SPAN_SWEEP_BATCH` rows, one short statement each, so a large backlog never
holds a long lock on the table the request path writes to; it stops after `SPAN_SWEEP_SECONDS` and the next
sweep goes on where it stopped. Runs and messages are kept: only their telemetry expires.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.utils import timezone

from captain.answering.models import SpanRecord
from captain.conf import captain_setting

logger = logging.getLogger(__name__)


def _monotonic() -> float:
    """A function of its own so tests can spend the time budget without touching `time`."""
    return time.monotonic()


def _delete_batch(*, before: datetime, batch: int) -> int:
    # One DELETE with the batch chosen in a subquery (indexed on start_time): no id list sent back and forth.
    expired = SpanRecord.objects.filter(start_time__lt=before).order_by().values("pk")[:batch]
    deleted, _ = SpanRecord.objects.filter(pk__in=expired).delete()
    return deleted


def spans_delete_expired(*, now: datetime | None = None) -> int:
    """Delete spans that started before the retention window, batch by batch within the time budget; returns
    how many. A retention of 0 days keeps every span."""
    days = int(captain_setting("SPAN_RETENTION_DAYS"))
    if days <= 0:
        return 0
    before = (now or timezone.now()) - timedelta(days=days)
    batch = max(1, int(captain_setting("SPAN_SWEEP_BATCH")))
    budget = float(captain_setting("SPAN_SWEEP_SECONDS"))
    started = _monotonic()
    total = 0
    while True:
        deleted = _delete_batch(before=before, batch=batch)
        total += deleted
        if deleted < batch or _monotonic() - started >= budget:
            break
    if total:
        logger.info("deleted %d spans older than %d days", total, days)
    return total
