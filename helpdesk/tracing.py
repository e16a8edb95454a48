"""OpenTelemetry helpers for the helpdesk side: span and attribute names, trace context for tasks, and the
count of webhook requests refused before authentication.

Trace context travels to Celery tasks as an explicit `trace_context` argument (a W3C traceparent carrier),
so a worker's spans join the trace of the webhook request that caused them.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import AbstractContextManager

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("helpdesk")

SPAN_WEBHOOK = "helpdesk.webhook"
SPAN_DELIVER = "helpdesk.deliver"

ATTR_INBOX_ID = "helpdesk.inbox.id"
ATTR_CHANNEL = "helpdesk.channel"
ATTR_ACCOUNT_ID = "helpdesk.account.id"
ATTR_CONVERSATION_ID = "helpdesk.conversation.id"
ATTR_MESSAGE_ID = "helpdesk.message.id"
ATTR_DUPLICATE = "helpdesk.webhook.duplicate"
ATTR_REJECTED = "helpdesk.webhook.rejected"
ATTR_DELIVERY_STATUS = "helpdesk.delivery.status"
ATTR_DELIVERY_ATTEMPT = "helpdesk.delivery.attempt"


def inject_context() -> dict[str, str]:
    """The current trace context as a small dict that can be passed as a task argument."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def extract_context(carrier: dict[str, str] | None) -> otel_context.Context:
    return propagate.extract(carrier or {})


# ---- requests refused before authentication --------------------------------------------------------------
# They open no span: anyone can send them, so one stored span each would let anyone fill the span store. They
# are counted here instead, by channel and reason (a short code such as "signature_invalid", never the token
# or signature), in an OpenTelemetry counter and a log line sampled per reason.

METRIC_WEBHOOK_REJECTED = "helpdesk.webhook.rejected"
ATTR_REASON = "helpdesk.webhook.reason"
REJECTION_LOG_INTERVAL_SECONDS = 60.0


def rejection_counter(provider: metrics.MeterProvider | None = None) -> metrics.Counter:
    """The counter on `provider`, by default the global one (a no-op until a MeterProvider is installed)."""
    meter = metrics.get_meter("helpdesk", meter_provider=provider)
    return meter.create_counter(
        METRIC_WEBHOOK_REJECTED,
        unit="{request}",
        description="Webhook requests refused before authentication (nothing stored)",
    )


def _monotonic() -> float:
    """A function of its own so tests can move the sampling clock without touching `time`."""
    return time.monotonic()


class SampledRejectionLog:
    """At most one log line per (channel, reason) and interval, saying how many requests it stands for: a
    flood of forged requests must not become a flood of log lines. Per process, like the log itself."""

    def __init__(self, interval: float = REJECTION_LOG_INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], int] = {}
        self._logged_at: dict[tuple[str, str], float] = {}

    def note(self, channel: str, reason: str, inbox_id: int | None) -> None:
        key = (channel, reason)
        now = _monotonic()
        with self._lock:
            count = self._pending.get(key, 0) + 1
            last = self._logged_at.get(key)
            if last is not None and now - last < self.interval:
                self._pending[key] = count
                return
            self._pending[key] = 0
            self._logged_at[key] = now
        logger.info(
            "%s webhook rejected (%s): %d request(s) since the last line, latest for inbox %s",
            channel,
            reason,
            count,
            inbox_id if inbox_id is not None else "unknown",
        )


webhook_rejections = rejection_counter()
rejection_log = SampledRejectionLog()


def webhook_rejected(*, channel: str, reason: str, inbox_id: int | None = None) -> None:
    """Count one webhook request refused before it was authenticated (and so before any span)."""
    webhook_rejections.add(1, {ATTR_CHANNEL: channel, ATTR_REASON: reason})
    rejection_log.note(channel, reason, inbox_id)


def webhook_span(
    *, channel: str, inbox_id: int, account_id: int, start_time: int
) -> AbstractContextManager[trace.Span]:
    """The span of an authenticated webhook request, dated from when the request arrived (`time.time_ns()`)
    so its duration still covers reading and verifying the body."""
    return tracer.start_as_current_span(
        SPAN_WEBHOOK,
        start_time=start_time,
        attributes={ATTR_CHANNEL: channel, ATTR_INBOX_ID: inbox_id, ATTR_ACCOUNT_ID: account_id},
    )
