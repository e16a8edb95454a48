"""Telemetry setup: a TracerProvider that keeps spans in the database (for the dashboard's debug log) and exports
them over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and with that variable a MeterProvider exporting the
counters (the webhook requests refused before authentication, `helpdesk.tracing`). Span and attribute names live
in `captain.runtime.semconv` (AI work) and `helpdesk.tracing` (webhooks and delivery). Stored spans are deleted
after `SPAN_RETENTION_DAYS` (captain.answering.services.span_retention)."""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Mapping, Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from captain.conf import captain_setting
from captain.span_batches import TraceBatchSpanProcessor

logger = logging.getLogger(__name__)
_configured = False


def _ts(ns: int | None) -> dt.datetime:
    return dt.datetime.fromtimestamp((ns or 0) / 1e9, tz=dt.UTC)


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


class DatabaseSpanExporter(SpanExporter):
    """Writes finished spans to `captain.SpanRecord`. Failing to store telemetry never fails the product."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from captain.answering.models import SpanRecord

        rows = []
        for span in spans:
            ctx = span.get_span_context()
            # Optional on ReadableSpan only for spans built by hand: the SDK's spans always carry their context.
            assert ctx is not None
            rows.append(
                SpanRecord(
                    trace_id=format(ctx.trace_id, "032x"),
                    span_id=format(ctx.span_id, "016x"),
                    parent_span_id=format(span.parent.span_id, "016x") if span.parent else "",
                    name=span.name[:200],
                    start_time=_ts(span.start_time),
                    end_time=_ts(span.end_time),
                    status=span.status.status_code.name,
                    attributes={k: _plain(v) for k, v in (span.attributes or {}).items()},
                    events=[
                        {
                            "name": e.name,
                            "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()},
                        }
                        for e in span.events
                    ],
                )
            )
        try:
            SpanRecord.objects.bulk_create(rows, ignore_conflicts=True)
        except Exception:
            logger.exception("could not store %d spans", len(rows))
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def _resource(environ: Mapping[str, str]) -> Resource:
    return Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "captain-helpdesk")})


def build_tracer_provider(environ: Mapping[str, str] = os.environ) -> TracerProvider:
    """Our provider: spans kept in the database when enabled, exported over OTLP/HTTP when the standard
    `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` variable is set (the exporter reads the other `OTEL_*` itself)."""
    provider = TracerProvider(resource=_resource(environ))
    if captain_setting("STORE_SPANS"):
        # One write per trace when its task ends, in the task's thread: the debug log shows a run as soon as its
        # task ends, without a row-by-row insert per span.
        provider.add_span_processor(TraceBatchSpanProcessor(DatabaseSpanExporter()))
    if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def build_meter_provider(environ: Mapping[str, str] = os.environ) -> MeterProvider | None:
    """Counters exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT` is set; None otherwise (the
    counters stay no-ops: metrics are not kept in the database, and the sampled log lines still count)."""
    if not (environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")):
        return None
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    return MeterProvider(resource=_resource(environ), metric_readers=[reader])


def configure_tracing() -> None:
    """Install our TracerProvider and MeterProvider once per process, unless the host application installed
    its own."""
    global _configured
    if _configured:
        return
    _configured = True
    if not isinstance(metrics.get_meter_provider(), MeterProvider):
        meter_provider = build_meter_provider()
        if meter_provider is not None:
            metrics.set_meter_provider(meter_provider)
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return
    trace.set_tracer_provider(build_tracer_provider())
