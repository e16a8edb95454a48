"""Fake provider file APIs on 127.0.0.1: Telegram's getFile + file URL, WhatsApp Cloud's media lookup + media
URL, Slack's files.info + url_private_download, answering with the providers' real response shapes.

    with FakeFileHost() as host:
        file_id = host.telegram_file(JPEG, token="123:abc")
        inbox.provider_config = {"api_base_url": host.base_url}
        ...
        assert host.paths() == [...]

Every request is recorded (method, path with query, headers). A file can be served with a wrong
Content-Length claim, without one (chunked), or a route can be scripted to fail first (`fail_first`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Real magic bytes, padded: what the sniffing sees first.
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01" + bytes(range(256)) * 4
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
OGG_OPUS = b"OggS\x00\x02" + b"\x00" * 20 + b"OpusHead" + bytes(range(256)) * 4
WINDOWS_EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + b"\x00" * 1000
HTML_PAGE = b"<!DOCTYPE html><html><script>alert(document.cookie)</script></html>" + b" " * 500


@dataclass
class Served:
    body: bytes
    status: int = 200
    content_type: str = "application/octet-stream"
    length: str | None = "exact"
    """"exact": the true Content-Length; None: no Content-Length (chunked); any other text: sent as is."""
    fail_first: int = 0
    """Answer this many requests with a 500 first (a provider having trouble)."""
    served: int = field(default=0)


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)


class FakeFileHost:
    def __init__(self) -> None:
        self.routes: dict[str, Served] = {}
        self.requests: list[Seen] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # ---- lifecycle

    def __enter__(self) -> FakeFileHost:
        host = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with host._lock:
                    host.requests.append(Seen("GET", self.path, dict(self.headers.items())))
                    served = host.routes.get(self.path)
                    if served is not None:
                        served.served += 1
                if served is None:
                    self._send(Served(b'{"error": "not found"}', 404, "application/json"))
                elif served.served <= served.fail_first:
                    self._send(Served(b"<html>Internal Server Error</html>", 500, "text/html"))
                else:
                    self._send(served)

            def _send(self, served: Served) -> None:
                self.send_response(served.status)
                self.send_header("Content-Type", served.content_type)
                if served.length is None:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for start in range(0, len(served.body), 512):
                        chunk = served.body[start : start + 512]
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                length = str(len(served.body)) if served.length == "exact" else served.length
                self.send_header("Content-Length", length)
                self.end_headers()
                # The client may stop reading (a refused download).
                with contextlib.suppress(OSError):
                    self.wfile.write(served.body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def paths(self) -> list[str]:
        return [seen.path.split("?")[0] for seen in self.requests]

    def _json(self, path: str, body: Any, status: int = 200) -> Served:
        served = Served(json.dumps(body).encode(), status, "application/json")
        self.routes[path] = served
        return served

    # ---- the providers

    def telegram_file(
        self, data: Served | bytes, *, token: str, file_id: str, declared_size: int | None = None
    ) -> Served:
        """getFile for `file_id` answers a file_path; the file is served at /file/bot<token>/<file_path>."""
        served = data if isinstance(data, Served) else Served(data)
        file_path = f"photos/file_{next(self._ids)}.jpg"
        result: dict[str, Any] = {"file_id": file_id, "file_unique_id": "AQADx", "file_path": file_path}
        result["file_size"] = len(served.body) if declared_size is None else declared_size
        self._json(f"/bot{token}/getFile?file_id={file_id}", {"ok": True, "result": result})
        self.routes[f"/file/bot{token}/{file_path}"] = served
        return served

    def whatsapp_media(
        self,
        data: Served | bytes,
        *,
        media_id: str,
        mime_type: str,
        url: str | None = None,
        declared_size: int | None = None,
        version: str = "v21.0",
    ) -> Served:
        """GET /<version>/<media_id> answers the media URL (here on this host unless `url` is given)."""
        served = data if isinstance(data, Served) else Served(data)
        path = f"/whatsapp_business/attachments/?mid={media_id}&ext=1718000180&hash=ATv"
        self._json(
            f"/{version}/{media_id}",
            {
                "messaging_product": "whatsapp",
                "url": url or f"{self.base_url}{path}",
                "mime_type": mime_type,
                "sha256": "sAcC8WZ1h7d4Pm1lCw0kW2b3R8Y4pL6yq7bW8x4c1nE=",
                # Meta documents file_size as a string of digits.
                "file_size": str(len(served.body) if declared_size is None else declared_size),
                "id": media_id,
            },
        )
        self.routes[path] = served
        return served

    def slack_file(self, data: Served | bytes, *, file_id: str, mimetype: str, name: str) -> Served:
        """files.info answers the file object; the bytes are at its url_private_download."""
        served = data if isinstance(data, Served) else Served(data)
        download = f"/files-pri/T061EG9R6-{file_id}/download/{name}"
        self._json(
            f"/api/files.info?file={file_id}",
            {
                "ok": True,
                "file": {
                    "id": file_id,
                    "name": name,
                    "mimetype": mimetype,
                    "filetype": name.rpartition(".")[2],
                    "size": len(served.body),
                    "url_private": f"{self.base_url}/files-pri/T061EG9R6-{file_id}/{name}",
                    "url_private_download": f"{self.base_url}{download}",
                    "permalink": f"https://acme.slack.com/files/U061F7AUR/{file_id}/{name}",
                },
            },
        )
        self.routes[download] = served
        return served
