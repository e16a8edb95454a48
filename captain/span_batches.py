"""A span processor that stores a trace's spans in one write when its local root ends.

OpenTelemetry's `SimpleSpanProcessor` exports every span as it ends: with the database exporter that was one
INSERT (and one transaction) per span, a dozen per reply run. Here the spans of a trace wait until the span that
began the trace in this process ends (no parent, or a parent from another process: the Celery task continuing
the webhook's trace), then go to the exporter together, so the debug log still shows a run as soon as its task
ends. A span ending after its local root (a thread that outlived the task) is stored at once; a trace whose root
never ends in this process is written out once it holds `MAX_PENDING` spans or is older than `MAX_AGE_SECONDS`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter

MAX_PENDING = 256
MAX_AGE_SECONDS = 60.0
MAX_TRACES = 1024
"""Traces waiting at once; past it the oldest is written out (a leak guard, not a limit a run reaches)."""


class TraceBatchSpanProcessor(SpanProcessor):
    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter
        self._lock = threading.Lock()
        # trace id -> (first span's arrival, spans waiting), oldest first.
        self._pending: OrderedDict[int, tuple[float, list[ReadableSpan]]] = OrderedDict()
        self._finished: OrderedDict[int, None] = OrderedDict()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        # A new local root of a trace seen before (a second task continuing the same webhook's trace): its
        # spans wait for it again instead of going one by one.
        if span.parent is None or span.parent.is_remote:
            context = span.get_span_context()
            if context is not None:
                with self._lock:
                    self._finished.pop(context.trace_id, None)

    def on_end(self, span: ReadableSpan) -> None:
        context = span.get_span_context()
        if context is None or not context.trace_flags.sampled:
            return
        trace_id, now = context.trace_id, time.monotonic()
        local_root = span.parent is None or span.parent.is_remote
        ready: list[list[ReadableSpan]] = []
        with self._lock:
            if trace_id in self._finished and not local_root:
                ready.append([span])
            else:
                _, spans = self._pending.setdefault(trace_id, (now, []))
                spans.append(span)
                if local_root or len(spans) >= MAX_PENDING:
                    del self._pending[trace_id]
                    ready.append(spans)
                    if local_root:
                        self._remember_finished(trace_id)
            ready.extend(self._overdue(now))
        for batch in ready:
            self._exporter.export(batch)

    def _remember_finished(self, trace_id: int) -> None:
        self._finished[trace_id] = None
        while len(self._finished) > MAX_TRACES:
            self._finished.popitem(last=False)

    def _overdue(self, now: float) -> list[list[ReadableSpan]]:
        """Traces waiting too long, or too many at once, taken out to be written (under the lock)."""
        out = []
        while self._pending:
            trace_id, (started, spans) = next(iter(self._pending.items()))
            if now - started < MAX_AGE_SECONDS and len(self._pending) <= MAX_TRACES:
                break
            del self._pending[trace_id]
            out.append(spans)
        return out

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            batches = [spans for _, spans in self._pending.values()]
            self._pending.clear()
        for batch in batches:
            self._exporter.export(batch)
        return True

    def shutdown(self) -> None:
        self.force_flush()
        self._exporter.shutdown()
