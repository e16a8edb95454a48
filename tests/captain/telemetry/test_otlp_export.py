"""OTLP export: with the standard endpoint variable set, spans reach an OTLP/HTTP receiver (a real one on
127.0.0.1 that records the protobuf requests)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from captain.telemetry import build_tracer_provider


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
