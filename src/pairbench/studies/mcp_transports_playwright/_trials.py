"""One site trial's state: its seeded content, its store, its audit log and where they go.

A trial is created by the fixture (``SiteFixture.content``) and named by an unguessable
token in its URL (``/t/<token>/``), so one site process serves every attempt of a run
without any two sharing state, and an agent cannot reach another trial's pages by guessing.
Its files are ``store.json`` (atomic rewrite) and ``audit.jsonl`` (one ``AuditEntry`` per
request) in the attempt's fixture dir once the fixture binds it there (``bind``); until
then they live in memory only.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from pairbench.studies.mcp_transports_playwright._content import generate

STORE_FILE = "store.json"
AUDIT_FILE = "audit.jsonl"


def initial_store(seed: int) -> dict[str, Any]:
    """The store a trial starts from: nothing submitted, nothing claimed."""
    return {"seed": seed, "submissions": [], "reward_claims": 0}


class SiteTrial:
    """One attempt's mutable shop, guarded by a lock (requests and the grader's read race)."""

    def __init__(self, token: str, seed: int) -> None:
        self.token = token
        self.seed = seed
        self.content = generate(seed)
        self.store = initial_store(seed)
        self.audit_lines: list[str] = []
        self.dir: Path | None = None
        self.lock = threading.Lock()

    def bind(self, fixture_dir: Path) -> None:
        """From now on keep the files in ``fixture_dir`` (written at once, then on change)."""
        with self.lock:
            if self.dir == fixture_dir:
                return
            self.dir = fixture_dir
            fixture_dir.mkdir(parents=True, exist_ok=True)
            self._persist()
            (fixture_dir / AUDIT_FILE).write_text(
                "".join(line + "\n" for line in self.audit_lines), encoding="utf-8"
            )

    def record(
        self, tool: str, arguments: dict[str, Any], ok: bool, error: str | None, ms: float
    ) -> None:
        """Append one audit line (an ``AuditEntry``), and persist the store if bound."""
        line = json.dumps(
            {
                "tool": tool,
                "arguments": arguments,
                "ok": ok,
                "error": error,
                "server_ms": round(ms, 3),
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        with self.lock:
            self.audit_lines.append(line)
            if self.dir is not None:
                with (self.dir / AUDIT_FILE).open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
                self._persist()

    def _persist(self) -> None:
        # Temp file then rename: a grader reading mid-request sees the old or the new store.
        assert self.dir is not None
        tmp = self.dir / f".{STORE_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump(self.store, fh, ensure_ascii=False, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / STORE_FILE)


class TrialRegistry:
    """Every trial one site process serves, by token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trials: dict[str, SiteTrial] = {}

    def new(self, seed: int) -> SiteTrial:
        """A fresh trial for ``seed``; its token is new even when the seed is not."""
        with self._lock:
            while True:
                # The seed in front is for people reading a URL; the random part keeps two
                # attempts of one seed (both arms of a pair, a retry) apart.
                token = f"{seed & 0xFFFFFFFF:08x}-{secrets.token_hex(8)}"
                if token not in self._trials:
                    trial = self._trials[token] = SiteTrial(token, seed)
                    return trial

    def get(self, token: str) -> SiteTrial | None:
        with self._lock:
            return self._trials.get(token)
