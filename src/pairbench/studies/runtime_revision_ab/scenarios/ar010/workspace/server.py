"""A tiny server: prints ``READY <port>`` once it listens, answers ``/answer``."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    """``/answer`` is the code; anything else is 404."""

    def do_GET(self) -> None:
        found = self.path == "/answer"
        body = b"code: 7319\n" if found else b"not found\n"
        self.send_response(200 if found else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> None:
    """Listen on a free loopback port until stopped."""
    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
