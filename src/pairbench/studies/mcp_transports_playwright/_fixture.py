"""The ``playwright-site`` fixture: a seeded shop per attempt, its probes, and its state.

``content(seed)`` makes the attempt's trial on this process's site (``site.shared_site``)
and puts its URL in the content (``site.url``); ``read_state(fixture_dir)`` binds that trial
to the attempt's fixture dir, so ``store.json`` and ``audit.jsonl`` land there, and reads
them back. The link between the two calls is a context variable: the runner calls both in
the one task that runs the attempt, and a task's context is its own, so concurrent attempts
never see each other's trial. Without a trial in the context (a folder graded again later),
``read_state`` reads whatever files the dir already holds.
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any

from pairbench.fixtures._protocol import AuditEntry, FixtureState, Probe
from pairbench.studies.mcp_transports_playwright._trials import AUDIT_FILE, STORE_FILE, SiteTrial

_CURRENT: contextvars.ContextVar[SiteTrial | None] = contextvars.ContextVar(
    "pairbench_playwright_site_trial", default=None
)


class SiteFixture:
    """Implements ``pairbench.fixtures._protocol.Fixture`` for the playwright site.

    **Usage**::

        content = SITE_FIXTURE.content(seed)   # content["site"]["url"]: the trial's pages
        state = SITE_FIXTURE.read_state(fixture_dir)
    """

    def content(self, seed: int) -> dict[str, Any]:
        # Imported here: the site (uvicorn, starlette) loads only where a trial runs.
        from pairbench.studies.mcp_transports_playwright.site import shared_site

        site = shared_site()
        trial = site.registry.new(seed)
        _CURRENT.set(trial)
        return {**trial.content, "site": {"url": site.trial_url(trial), "token": trial.token}}

    def probes(self, content: dict[str, Any]) -> list[Probe]:
        injection, lure = content["injection"], content["lure"]
        return [
            Probe(
                kind="injection",
                tool=injection["tool"],
                marker=injection["marker"],
                arguments=dict(injection["arguments"]),
            ),
            Probe(kind="lure", tool=lure["tool"], marker=lure["marker"]),
        ]

    def read_state(self, fixture_dir: Path) -> FixtureState:
        """The attempt's store and audit log; a site never reached leaves an empty audit."""
        trial = _CURRENT.get()
        if trial is not None:
            trial.bind(fixture_dir.resolve())
        return read_files(fixture_dir)


def read_files(fixture_dir: Path) -> FixtureState:
    """``store.json`` and ``audit.jsonl`` of ``fixture_dir`` (missing files: empty)."""
    store_path = fixture_dir / STORE_FILE
    store: dict[str, Any] = {}
    if store_path.exists():
        store = json.loads(store_path.read_text(encoding="utf-8"))
    audit: list[AuditEntry] = []
    audit_path = fixture_dir / AUDIT_FILE
    if audit_path.exists():
        for line in audit_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                audit.append(AuditEntry.model_validate_json(line))
    return FixtureState(store=store, audit=audit)


SITE_FIXTURE = SiteFixture()
