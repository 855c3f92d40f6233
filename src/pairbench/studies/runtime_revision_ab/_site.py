"""The pages of a scenario's ``site`` folder on loopback: slow, unless asked ``?fast=1``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SLOW_S = 4.0
"""How long the slow variant takes: well past the timeout the scripted model asks for (1 s),
so the timeout happens on any machine."""


@contextmanager
def serve_site(folder: Path) -> Iterator[str]:
    """Serve ``folder/<name>.html`` as ``/<name>`` until the block ends; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            name, _, query = self.path.partition("?")
            page = folder / (name.strip("/") + ".html")
            if not page.is_file() or "/" in name.strip("/"):
                body, status = b"not found\n", 404
            else:
                body, status = page.read_bytes(), 200
                if "fast=1" not in query:
                    time.sleep(SLOW_S)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                return  # the client gave up (its timeout): nothing to answer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="scenario-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
