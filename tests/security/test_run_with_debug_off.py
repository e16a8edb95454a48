"""scripts/run with DJANGO_DEBUG=0: the web server answers plain HTTP with a redirect to https://, which the
supervisor's readiness probe must count as "up" (following it would wait for a TLS server that is not there)."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.servers import ROOT

# scripts/ is no package; a name of its own in sys.modules (its dataclasses look themselves up there).
spec = importlib.util.spec_from_file_location("supervisor_probe", ROOT / "scripts" / "supervisor.py")
supervisor = importlib.util.module_from_spec(spec)
sys.modules["supervisor_probe"] = supervisor
spec.loader.exec_module(supervisor)


@pytest.fixture
def server() -> Iterator[dict]:
    """Answers GET /<status> with that status (a redirect points at https://, as SECURE_SSL_REDIRECT does)."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            status = int(self.path.strip("/").split("/")[0])
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", f"https://127.0.0.1:{self.server.server_address[1]}/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield {"url": f"http://127.0.0.1:{httpd.server_address[1]}", "requests": requests}
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(("status", "up"), [(200, True), (301, True), (302, True), (404, True), (500, False)])
def test_the_readiness_probe_counts_any_answer_below_500_without_following_redirects(server, status, up):
    assert supervisor._http_ok(f"{server['url']}/{status}") is up
    assert server["requests"] == [f"/{status}"]  # asked once, never followed to https://


def test_nothing_listening_is_not_up():
    from tests.support.servers import free_port

    assert supervisor._http_ok(f"http://127.0.0.1:{free_port()}/") is False
