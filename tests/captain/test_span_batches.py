"""Spans are stored per trace when the trace's local root ends (`captain.span_batches`): one write for a whole
reply run instead of one per span, still as soon as the task ends."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract, inject
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from captain import span_batches
from captain.span_batches import TraceBatchSpanProcessor


class Recorder(SpanExporter):
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append([s.name for s in spans])
        return SpanExportResult.SUCCESS


@pytest.fixture
def tracer_and_recorder() -> tuple[trace.Tracer, Recorder]:
    recorder = Recorder()
    provider = TracerProvider()
    provider.add_span_processor(TraceBatchSpanProcessor(recorder))
    return provider.get_tracer("test"), recorder


def test_a_trace_is_written_once_when_its_root_ends(tracer_and_recorder) -> None:
    tracer, recorder = tracer_and_recorder
    with tracer.start_as_current_span("task"):
        for name in ("route", "llm", "tool", "llm"):
            with tracer.start_as_current_span(name):
                pass
        assert recorder.batches == []  # nothing written while the task runs
    assert recorder.batches == [["route", "llm", "tool", "llm", "task"]]


def test_a_task_continuing_another_process_trace_is_its_own_root_and_a_late_span_goes_at_once(
    tracer_and_recorder,
) -> None:
    tracer, recorder = tracer_and_recorder
    carrier: dict[str, str] = {}
    with tracer.start_as_current_span("webhook"):
        inject(carrier)
    recorder.batches.clear()
    # The worker: the task's parent is remote (the webhook's span, in the web process).
    token = otel_context.attach(extract(carrier))
    try:
        task = tracer.start_span("task")
        with trace.use_span(task, end_on_exit=False):
            late = tracer.start_span("suggestions")  # outlives the task (a background thread's work)
            with tracer.start_as_current_span("llm"):
                pass
        task.end()
        assert recorder.batches == [["llm", "task"]]
        late.end()
        assert recorder.batches[-1] == ["suggestions"]
        # A second task continuing the same trace batches its own spans again.
        with tracer.start_as_current_span("task-2"), tracer.start_as_current_span("llm-2"):
            pass
        assert recorder.batches[-1] == ["llm-2", "task-2"]
    finally:
        otel_context.detach(token)


def test_a_root_that_never_ends_does_not_hold_its_spans_for_ever(tracer_and_recorder, monkeypatch) -> None:
    tracer, recorder = tracer_and_recorder
    monkeypatch.setattr(span_batches, "MAX_PENDING", 3)
    root = tracer.start_span("stuck")
    with trace.use_span(root, end_on_exit=False):
        for n in range(4):
            with tracer.start_as_current_span(f"step-{n}"):
                pass
    assert recorder.batches == [["step-0", "step-1", "step-2"]]


def test_force_flush_writes_what_waits() -> None:
    recorder = Recorder()
    processor = TraceBatchSpanProcessor(recorder)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    root = tracer.start_span("stuck")
    with trace.use_span(root, end_on_exit=False), tracer.start_as_current_span("step"):
        pass
    assert recorder.batches == []
    assert processor.force_flush()
    assert recorder.batches == [["step"]]
