"""``http_get``: a GET to a loopback address, with a timeout."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

from ._files import ToolFailed

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_url(url: str) -> str | None:
    """None when ``url`` is an http URL on a loopback host, else the denial reason."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "http":
        return "scheme_not_http"
    if parsed.hostname not in LOOPBACK:
        return "not_loopback"
    return None


def http_get(url: str, timeout_s: float) -> tuple[int, str]:
    """Status and body text; ``ToolFailed`` (``timeout`` or ``backend``) otherwise."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout_s) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")
    except TimeoutError:
        raise ToolFailed("timeout", f"GET {url} timed out after {timeout_s:g} s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise ToolFailed("timeout", f"GET {url} timed out after {timeout_s:g} s") from None
        raise ToolFailed("backend", f"GET {url} failed: {exc.reason}") from None
    except OSError as exc:
        raise ToolFailed("backend", f"GET {url} failed: {exc}") from None
