"""The live page of `asaql run --ui`: the standard library's threading HTTP server, read-only.

GET / is the page (built once: the diagram, the script, plotly.js); GET /api/status is the run's
numbers as JSON (RunMonitor.snapshot), which the page asks for every second. Anything else is
404, and any other method 501 (http.server's answer when a handler has no do_POST).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from asaql.pages.monitor import RunMonitor

DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` → (host, port); the host is 127.0.0.1 unless given."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, text
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--ui takes [HOST:]PORT (a port from 0 to 65535), got '{text}'")
    return host, int(port)


class LiveServer:
    """Serves `page` and the monitor's numbers from a daemon thread until `close`."""

    def __init__(self, monitor: RunMonitor, page: str, host: str, port: int):
        body = page.encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0]
                if path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", body)
                elif path == "/api/status":
                    data = json.dumps(monitor.snapshot(), default=str).encode("utf-8")
                    self._send(200, "application/json", data)
                else:
                    self._send(404, "text/plain; charset=utf-8", b"not found\n")

            def do_HEAD(self):  # noqa: N802
                self.do_GET()

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def log_message(self, format, *args):  # noqa: A002 - quiet: the run owns stderr
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="asaql-ui",
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
