"""OTLP export: with the standard endpoint variable set, spans and counters reach an OTLP/HTTP receiver (a real one on
127.0.0.1 that records the protobuf requests)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from captain.telemetry import build_meter_provider, build_tracer_provider
from helpdesk import tracing


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.mark.django_db
def test_spans_are_exported_over_otlp_http_when_the_endpoint_is_set(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "STORE_SPANS": False}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        import os

        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        try:
            provider = build_tracer_provider(
                {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "t"}
            )
        finally:
            del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        with provider.get_tracer("test").start_as_current_span("captain.run") as span:
            span.set_attribute("captain.credit_used", True)
        provider.force_flush()
        provider.shutdown()
    finally:
        server.shutdown()
    [(path, body)] = _Collector.received
    assert path == "/v1/traces"
    request = ExportTraceServiceRequest.FromString(body)
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert [s.name for s in spans] == ["captain.run"]
    assert spans[0].attributes[0].key == "captain.credit_used"


def test_no_endpoint_means_no_exporter(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "STORE_SPANS": False}
    provider = build_tracer_provider({})
    assert provider._active_span_processor._span_processors == ()


class _MetricsCollector(_Collector):
    received: list[tuple[str, bytes]] = []


def test_webhook_rejections_are_exported_over_otlp_http_when_the_endpoint_is_set(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _MetricsCollector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)  # the exporter reads it itself
    try:
        provider = build_meter_provider({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
        assert provider is not None
        tracing.rejection_counter(provider).add(3, {tracing.ATTR_REASON: "signature_invalid"})
        provider.shutdown()  # collects and exports once more, then stops the reader's thread
    finally:
        server.shutdown()
    [(path, body)] = _MetricsCollector.received
    assert path == "/v1/metrics"
    request = ExportMetricsServiceRequest.FromString(body)
    [metric] = [m for rm in request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    assert metric.name == tracing.METRIC_WEBHOOK_REJECTED
    assert metric.sum.data_points[0].as_int == 3


def test_no_endpoint_means_no_meter_provider():
    assert build_meter_provider({}) is None
