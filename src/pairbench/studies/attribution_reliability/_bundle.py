"""One evidence package, recorded once per trial under a lock, judged by every arm and run.

The protocol records a package's scripted users once per trial and has every arm's engine
judge the same bundle. Each arm's attempt serves the trial's site itself (its own slug and
loopback port, kept live while its engine judges), so the first attempt
of a trial that gets here records the bundle and every later one (the other arms, an
infrastructure re-run, a resumed run, and every later run under the same lock: another
sitting, another engine's experiment frozen to the same lock) loads those bytes. They are
kept beside the runs, per lock (``<runs>/.recordings/<lock sha256[:16]>/<task>/<trial>/``,
``recording_folder``), so two runs under one lock judge the same recording. The one change
on loading: the recording's two origins (``http://127.0.0.1:<port>``) and its slug become
the serving site's, so a step's URL still opens the page it names. A lock file orders two
attempts that reach the same trial at once.

**Usage**::

    sessions, shared = await trial_bundle(package, site, ctx.shared_dir)
    # shared.sha256: the bytes every arm judged; shared.reused: recorded by an earlier attempt
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from pairbench._atomic import write_atomic
from pairbench._model import Frozen
from pairbench.studies.attribution_reliability._manifest import Package
from pairbench.studies.attribution_reliability.engines._models import RecordedSession
from pairbench.studies.attribution_reliability.site._server import RunningSite

BUNDLE_NAME = "package.json"
SCHEMA = "pairbench.attribution.bundle/1"
_POLL_S = 0.1


class StoredBundle(Frozen):
    """``<run>/shared/<task>/<trial>/package.json``: what every arm of the trial judges."""

    schema_: Literal["pairbench.attribution.bundle/1"] = Field(
        default="pairbench.attribution.bundle/1", alias="schema"
    )
    package: str
    slug: str
    start_url: str
    other_origin: str
    sessions: list[RecordedSession]


@dataclass(frozen=True)
class SharedBundle:
    path: Path | None
    """Where it is stored (None: no shared folder, recorded for this attempt only)."""
    sha256: str
    """Of the stored bytes (before the origins are rebased), the same for every arm."""
    reused: bool


def _origin(url: str) -> str:
    found = re.match(r"^[a-z]+://[^/]+", url)
    return found.group(0) if found else url


def recording_folder(shared_dir: Path | None) -> Path | None:
    """Where the trial's recording is kept: per lock, beside the runs, when the attempt's
    run folder holds a lock (``<run>/shared/<task>/<trial>`` -> ``<runs>/.recordings/<lock
    sha256[:16]>/<task>/<trial>``); else the trial's shared folder itself."""
    if shared_dir is None or len(shared_dir.parents) < 4:
        return shared_dir
    run_dir = shared_dir.parents[2]
    lock = run_dir / "lock.json"
    if shared_dir.parents[1].name != "shared" or not lock.is_file():
        return shared_dir
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    return run_dir.parent / ".recordings" / digest / shared_dir.parent.name / shared_dir.name


def _rebase(text: str, stored: StoredBundle, site: RunningSite) -> str:
    """The stored bundle's JSON with its origins and slug swapped for the serving site's."""
    for old, new in (
        (_origin(stored.start_url), _origin(site.start_url)),
        (_origin(stored.other_origin), _origin(site.other_origin)),
    ):
        # (?!\d): port 4123 must not match inside port 41234.
        text = re.sub(re.escape(old) + r"(?!\d)", new, text)
    # The slug is 26 random characters: it cannot occur by chance in a recording.
    return text.replace(f"/v/{stored.slug}", f"/v/{site.slug}")


@contextlib.asynccontextmanager
async def _locked(path: Path) -> AsyncIterator[None]:
    """An exclusive lock on ``path`` that waits without blocking the event loop."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # closing releases the lock


async def trial_bundle(
    package: Package, site: RunningSite, folder: Path | None
) -> tuple[list[RecordedSession], SharedBundle]:
    """The trial's recorded bundle: loaded from ``folder`` when an earlier attempt recorded
    it, else recorded now (real Chromium) and stored there before it is judged."""
    from pairbench.studies.attribution_reliability._scripted import record_package

    if folder is None:
        sessions = await record_package(package, site)
        raw = _dump(package, site, sessions)
        return sessions, SharedBundle(None, hashlib.sha256(raw).hexdigest(), reused=False)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / BUNDLE_NAME
    async with _locked(folder / f".{BUNDLE_NAME}.lock"):
        if path.is_file():
            raw = path.read_bytes()
            stored = StoredBundle.model_validate_json(raw)
            if stored.package != package.id:
                raise ValueError(
                    f"{path} holds package {stored.package}, not {package.id}: the "
                    "trial's recording folder is not this trial's; remove it and re-run"
                )
            rebased = StoredBundle.model_validate_json(_rebase(raw.decode(), stored, site))
            digest = hashlib.sha256(raw).hexdigest()
            return list(rebased.sessions), SharedBundle(path, digest, reused=True)
        sessions = await record_package(package, site)
        raw = _dump(package, site, sessions)
        digest = write_atomic(path, raw, overwrite=False)
        return sessions, SharedBundle(path, digest, reused=False)


def _dump(package: Package, site: RunningSite, sessions: list[RecordedSession]) -> bytes:
    stored = StoredBundle(
        package=package.id,
        slug=site.slug,
        start_url=site.start_url,
        other_origin=site.other_origin,
        sessions=sessions,
    )
    return stored.model_dump_json(by_alias=True).encode()


__all__ = ["BUNDLE_NAME", "SharedBundle", "StoredBundle", "recording_folder", "trial_bundle"]
