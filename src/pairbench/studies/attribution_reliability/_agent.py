"""``attribution-engine``: the adapter that runs one session of the study per attempt.

For an end-to-end case it serves the case's site for the trial (``site.serve_case``, a
random slug from the trial seed), checks the start page answers 200 (the protocol's
preflight: retried once after 30 s, then infrastructure), and asks the arm's engine to
``scan`` it with the case's one persona. For an evidence package it also records the
package's scripted users in real Chromium first (once per trial: every arm judges the
bundle the trial's first attempt stored, see ``_bundle``), and asks the engine to ``judge``
the bundle while the site stays live. The answer is the session's ``SessionEvidence``, whatever
happened: an engine that crashed, printed no JSON, broke the report schema or timed out is a
runtime failure (``agent_error``: scored on what it published, listed, never re-run).

Only the request reaches the engine: start URL, personas (the goal), budgets, model seed
and, in judge mode, the recording. No manifest value but the goal is ever in it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

import httpx
from pydantic import Field, field_validator

from pairbench._errors import SpecError
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._settings import AdapterSettings
from pairbench.studies.attribution_reliability._manifest import (
    CASES_FILE,
    PACKAGES_FILE,
    Case,
    Package,
    load_cases,
    load_packages,
)
from pairbench.studies.attribution_reliability._score_models import SessionFailure
from pairbench.studies.attribution_reliability._session import SessionEvidence
from pairbench.studies.attribution_reliability._session_output import (
    declared_models,
    provider_refused,
    session_cost,
    session_output,
)
from pairbench.studies.attribution_reliability._visit import site_visit
from pairbench.studies.attribution_reliability.engines._identity import EngineIdentity
from pairbench.studies.attribution_reliability.engines._models import (
    Budget,
    EngineRequest,
    Persona,
)
from pairbench.studies.attribution_reliability.site._binding import SiteBinding

DESKTOP_UA = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
"""The preflight's user agent: an ordinary desktop browser, never gated."""
_RAW_CAP = 20_000


class AttributionSettings(AdapterSettings):
    """``agent: {adapter: attribution-engine, settings: {engine: {...}}}``."""

    example: ClassVar[str] = "{engine: {engine: heuristic}}"
    engine: dict[str, Any] = Field(default_factory=lambda: {"engine": "heuristic"})
    """The arm's engine (``engines.EngineSpec``): a registered name, or
    ``command``/``python``/``http`` with its argv, target or URL."""
    budget: Budget = Field(default_factory=Budget)
    """Per-user budgets sent in the request (the protocol's 10 actions, 130 s)."""
    preflight_retry_s: float = Field(default=30.0, ge=0)
    """How long the preflight waits before its one retry."""
    evidence_stuffing_share: float = Field(default=0.5, gt=0, le=1)
    """The report lists a finding whose evidence holds more than this share of a served
    page's distinct words as evidence stuffing (shown beside the score; no number changes)."""
    cases: str | None = None
    """Another ``cases.json`` (tests); the study's by default."""
    packages: str | None = None
    sites: SiteBinding = Field(default_factory=SiteBinding)
    """Where the case sites listen and the public origins engines are given (a hosted
    engine behind a reverse proxy or tunnel): ``{host, public_url, other_public_url}``."""

    @field_validator("engine")
    @classmethod
    def _engine_spec(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked here too, so `pairbench check` names a bad engine block before a run.
        from pairbench.studies.attribution_reliability.engines import EngineSpec

        try:
            EngineSpec.parse(value)
        except SpecError as exc:
            raise ValueError("; ".join(exc.problems)) from None
        return value


class AttributionAdapter:
    """Registered as ``attribution-engine``."""

    receives: frozenset[str] = frozenset()
    Settings = AttributionSettings
    sleep: ClassVar[Callable[[float], Awaitable[None]]] = asyncio.sleep
    """The preflight's clock (tests replace it, so a 30 s wait costs nothing)."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = AttributionSettings.parse(settings)
        from pairbench.studies.attribution_reliability.engines import EngineSpec

        # Relative programs resolve against the runner's folder (the adapter is not told
        # the experiment's); `lock_code` resolves them against the experiment's.
        self.spec = EngineSpec.parse(self.settings.engine).resolve(Path.cwd())
        # ${env:NAME} site values are read now: an unset one fails the attempt's set-up.
        self.binding = self.settings.sites.resolved(os.environ)

    @classmethod
    def lock_code(
        cls, settings: dict[str, Any], root: Path, arm: str
    ) -> list[tuple[str, str, str]]:
        """What the held-out lock pins beyond pairbench's source and the study's own tree
        (the lock's ``study``): the engine's identity (adapter, program or target, commit,
        source hash, models, pinned env)."""
        from pairbench.studies.attribution_reliability.engines import EngineSpec, engine_identity

        parsed = AttributionSettings.parse(settings)
        spec = EngineSpec.parse(parsed.engine).resolve(root)
        identity = engine_identity(spec, root)
        digest = hashlib.sha256(identity.model_dump_json().encode()).hexdigest()
        return [(f"engines:{arm}", f"{identity.adapter} {identity.engine}", digest)]

    @classmethod
    def check_run(
        cls, settings: dict[str, Any], root: Path, arm: str, case_set: str | None
    ) -> list[str]:
        """The runner's gate, before a run's first session: a held-out run of a local
        engine that is to run contained, on a machine that cannot contain it, is refused
        (``RunRefused`` naming the fix); any other run of it runs uncontained, warned by
        the lines returned."""
        from pairbench._errors import RunRefused
        from pairbench.studies.attribution_reliability.engines import EngineSpec
        from pairbench.studies.attribution_reliability.engines._contain import missing_sandbox

        spec = EngineSpec.parse(AttributionSettings.parse(settings).engine)
        problem = missing_sandbox(spec, arm)
        if problem is None:
            return []
        if case_set == "held-out":
            raise RunRefused(f"refusing a held-out run: {problem}")
        return [f"{problem}. This {case_set or 'calibration'} run runs it uncontained."]

    def _manifests(self, root: Path | None) -> tuple[Path, Path]:
        """The arm's ``cases:`` / ``packages:``, else the experiment's copies (the bytes its
        lock hashed, which the report scores), else the study's."""

        def pick(setting: str | None, name: str, study: Path) -> Path:
            if setting:
                return Path(setting)
            mine = root / name if root is not None else None
            return mine if mine is not None and mine.is_file() else study

        return (
            pick(self.settings.cases, "cases.json", CASES_FILE),
            pick(self.settings.packages, "packages.json", PACKAGES_FILE),
        )

    async def run(self, ctx: AgentContext) -> AgentOutput:
        from pairbench.studies.attribution_reliability.site import serve_case, trial_key

        manifests = self._manifests(ctx.experiment_root)
        cases, packages = load_cases(manifests[0]), load_packages(manifests[1])
        name = ctx.task.upper()
        recording: str | None = None
        entry: Case | Package
        if name in cases:
            entry = cases[name]
        elif name in packages:
            entry = packages[name]
        else:
            return AgentOutput(None, error=f"task {ctx.task!r} names no case or package")
        started = time.monotonic()
        key = trial_key(ctx.shared_dir)
        # The arm salts the slug: with fixed ports (sites.port) two arms of a trial may be
        # served at once by one hub, which tells sites apart by slug only.
        with serve_case(
            entry.fixture, ctx.seed, key=key, binding=self.binding, salt=ctx.arm
        ) as site:
            statuses = await self._preflight(site.start_url)
            if isinstance(entry, Case):
                personas = [Persona(user="u1", goal=entry.goal)]
                request = EngineRequest(
                    mode="scan", start_url=site.start_url, personas=personas,
                    budget=self.settings.budget, model_seed=ctx.model_seed,
                )  # fmt: skip
            else:
                from pairbench.studies.attribution_reliability._bundle import (
                    recording_folder,
                    trial_bundle,
                )

                folder = recording_folder(ctx.shared_dir)
                sessions, shared = await trial_bundle(entry, site, folder)
                recording = shared.sha256
                ctx.transcript.emit(
                    "package_recorded", users=[s.user for s in sessions],
                    sha256=shared.sha256, reused=shared.reused,
                )  # fmt: skip
                personas = [Persona(user=u.user, goal=u.goal) for u in entry.users]
                request = EngineRequest(
                    mode="judge", start_url=site.start_url, personas=personas,
                    budget=self.settings.budget, model_seed=ctx.model_seed, sessions=sessions,
                )  # fmt: skip
            ctx.transcript.emit("engine_request", keys=sorted(request.wire()))
            # Every hit that arrives from here on is the engine's (``_visit``).
            engine_started = time.monotonic()
            outcome = await self._engine(request, ctx, held_out=entry.set == "held-out")
            provider_refused(outcome.report, ctx.signals)
            visit = site_visit(
                site.audit, since=engine_started, slug=site.slug, mode=request.mode,
                budget=request.budget, users=len(personas),
                recording=[
                    (f"recording:{s.user}:{step.step}", step.snapshot)
                    for s in request.sessions or [] for step in s.steps
                ],
            )  # fmt: skip
            audit = [
                ("" if hit.origin == "main" else "other:") + _relative(hit.path, site.slug)
                for hit in site.audit
            ]
        evidence = SessionEvidence(
            case=entry.id,
            kind="e2e" if isinstance(entry, Case) else "package",
            mode=request.mode,
            slug=site.slug,
            report=outcome.report,
            failure=(
                None
                if outcome.failure is None
                else SessionFailure(
                    kind=outcome.failure,
                    message=outcome.message
                    + (f"\nstderr (tail):\n{outcome.stderr_tail}" if outcome.stderr_tail else ""),
                )
            ),
            raw_output=None
            if outcome.report is not None
            else (outcome.raw_stdout or "")[:_RAW_CAP],
            audit_paths=audit,
            visit=visit,
            engine=self._identity(),
            manifests=[str(p.resolve()) for p in manifests],
            preflight=statuses,
            latency_ms=(time.monotonic() - started) * 1000,
            recording_sha256=recording,
            **session_cost(outcome.report, declared_models(self.spec), ctx.worst_cost_usd),
        )
        stored = evidence.model_dump(mode="json", by_alias=True)
        ctx.transcript.emit("session_evidence", evidence=stored)
        return session_output(evidence, json.dumps(stored, sort_keys=True))

    def _identity(self) -> EngineIdentity | None:
        """The engine as it ran this session (results.json names it); ``None`` when its
        program cannot be read (the lock refuses a held-out run before that)."""
        from pairbench.studies.attribution_reliability.engines import engine_identity

        try:
            return engine_identity(self.spec, Path.cwd())
        except SpecError:
            return None

    async def _preflight(self, url: str) -> list[int]:
        """GET the start page as an ordinary browser would, no redirects; one retry."""
        statuses: list[int] = []
        for attempt in range(2):
            if attempt:
                await type(self).sleep(self.settings.preflight_retry_s)
            try:
                async with httpx.AsyncClient(timeout=10.0, follow_redirects=False) as client:
                    response = await client.get(url, headers={"user-agent": DESKTOP_UA})
                statuses.append(response.status_code)
            except httpx.HTTPError:
                statuses.append(0)
            if statuses[-1] == 200:
                return statuses
        raise InfraFailure(
            f"preflight: the start page answered {statuses[0] or 'nothing'} and, "
            f"{self.settings.preflight_retry_s:g} s later, {statuses[1] or 'nothing'}"
        )

    async def _engine(self, request: EngineRequest, ctx: AgentContext, *, held_out: bool) -> Any:
        from pairbench.studies.attribution_reliability.engines import run_engine
        from pairbench.studies.attribution_reliability.engines._contain import missing_sandbox

        # The gate refused such a run before it started; this holds where the gate's
        # machine is not this one (a Ray worker without bubblewrap).
        problem = missing_sandbox(self.spec, ctx.arm) if held_out else None
        if problem is not None:
            raise InfraFailure(problem)

        # run_engine scrubs the environment itself (its allow-list plus the engine spec's
        # declared `env`), from the runner's own, as the engine's process needs it.
        # A short folder outside the run: Chromium's singleton socket lives under TMPDIR,
        # and a unix socket path past 107 bytes (a deep run folder) aborts it at start.
        with tempfile.TemporaryDirectory(prefix="pb-engine-") as short:
            return await run_engine(
                self.spec, request, env=dict(os.environ), workdir=Path(short),
                signals=ctx.signals, hide=_hidden(ctx),
            )  # fmt: skip


def _hidden(ctx: AgentContext) -> list[Path]:
    """What a contained engine must not see even inside its own folder: the experiment's
    folder and the folder of runs (this run's, and every earlier one's)."""
    hidden = [ctx.experiment_root] if ctx.experiment_root is not None else []
    run = next((p for p in ctx.workdir.parents if (p / "run.json").is_file()), None)
    if run is not None:
        hidden.append(run.parent)
    return [p.resolve() for p in hidden]


def _relative(path: str, slug: str) -> str:
    prefix = f"/v/{slug}"
    return path[len(prefix) :] or "/" if path.startswith(prefix) else path
