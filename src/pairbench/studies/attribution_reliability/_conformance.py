"""Does an engine keep the contract? Run it on two calibration cases and name every problem.

``check_engine`` serves two calibration sites (C-P01, a product failure; C-T01, a tester
trap) as a run would (the arm's ``sites`` binding, a fresh unguessable slug), sends the
engine a ``scan`` request for each, and lists what breaks the contract in
``docs/engines.md``, each problem with its fix: an engine that cannot start, an unset or
malformed ``${env:NAME}``, a crash, output that is not JSON, a report that breaks the
schema (each field path: extra keys, missing fields, wrong values), a timeout, a report
that says it failed, users or sites the request never named, duplicate finding ids, a
declared model with no usage, and a site never opened.

**Usage**::

    checks = check_engine(spec, binding=SiteBinding(), env=os.environ)
    problems = [p for c in checks for p in c.problems]
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import ValidationError

from pairbench._errors import SpecError
from pairbench.agents._protocol import InfraFailure
from pairbench.studies.attribution_reliability._manifest import Case, load_cases
from pairbench.studies.attribution_reliability.engines import (
    EngineOutcome,
    EngineReport,
    EngineRequest,
    EngineSpec,
    Persona,
    run_engine,
)
from pairbench.studies.attribution_reliability.site import SiteBinding, serve_case

CALIBRATION_CASES = ("C-P01", "C-T01")
SCHEMA_FILE = "report-1.json"
_FIX_SCHEMA = f"write exactly the fields of engines/schema/{SCHEMA_FILE} (docs/engines.md)"


class Problem(NamedTuple):
    """One contract problem: where, what, and the fix."""

    case: str
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.case}: {self.what}. Fix: {self.fix}"


class CaseCheck(NamedTuple):
    """One calibration case: what was sent, what came back, and what breaks the contract."""

    case: str
    request: EngineRequest | None
    outcome: EngineOutcome | None
    pages_opened: int
    problems: list[Problem]


def check_engine(
    spec: EngineSpec,
    *,
    binding: SiteBinding,
    env: Mapping[str, str],
    timeout_s: float | None = None,
    cases: tuple[str, ...] = CALIBRATION_CASES,
) -> list[CaseCheck]:
    """Run ``spec``'s engine on each case in ``cases`` and check what it answered; stops
    after a problem that would repeat on every case (set-up, env references)."""
    manifest = load_cases()
    checks: list[CaseCheck] = []
    for seed, case_id in enumerate(cases, start=1):
        check = _one(spec, manifest[case_id], seed, binding, env, timeout_s)
        checks.append(check)
        if check.outcome is None:
            break
    return checks


def _one(
    spec: EngineSpec,
    case: Case,
    seed: int,
    binding: SiteBinding,
    env: Mapping[str, str],
    timeout_s: float | None,
) -> CaseCheck:
    with (
        serve_case(case.fixture, seed, binding=binding) as site,
        TemporaryDirectory(prefix="pb-check-") as work,
    ):
        request = EngineRequest(
            mode="scan", start_url=site.start_url, model_seed=seed,
            personas=[Persona(user="u1", goal=case.goal)],
        )  # fmt: skip
        try:
            outcome = asyncio.run(
                run_engine(spec, request, env=env, workdir=Path(work), timeout_s=timeout_s)
            )
        except SpecError as exc:
            problems = [Problem(case.id, *_split_fix(p)) for p in exc.problems]
            return CaseCheck(case.id, request, None, 0, problems)
        except InfraFailure as exc:
            fix = (
                "make sure it runs (the program exists and is executable; the http engine "
                "is up and accepts the request's headers)"
            )
            return CaseCheck(case.id, request, None, 0, [Problem(case.id, str(exc), fix)])
        opened = len(site.audit)
        origins = {_origin(site.start_url), _origin(site.other_origin)}
        problems = _outcome_problems(case.id, outcome, spec)
        if outcome.report is not None:
            problems += _report_problems(case.id, outcome.report, request, site.slug, origins)
        if spec.models and outcome.report is not None and not outcome.report.usage:
            problems.append(
                Problem(
                    case.id,
                    f"the arm declares models ({', '.join(sorted(spec.models.values()))}) but "
                    "the report lists no usage",
                    "report usage for each model called (model, tokens, cost_usd, provenance); "
                    "without it the session's cost is unknown",
                )
            )
        if opened == 0:
            problems.append(
                Problem(
                    case.id,
                    "the engine never opened the site (no request reached it)",
                    f"browse start_url ({site.start_url}); a session that never visited is "
                    "flagged in the report",
                )
            )
        return CaseCheck(case.id, request, outcome, opened, problems)


def _outcome_problems(case: str, outcome: EngineOutcome, spec: EngineSpec) -> list[Problem]:
    last = outcome.stderr_tail.splitlines()[-1] if outcome.stderr_tail.strip() else ""
    stderr = f" (stderr: {last})" if last and last not in outcome.message else ""
    match outcome.failure:
        case None:
            return []
        case "timeout":
            return [
                Problem(
                    case,
                    outcome.message,
                    "answer within users x budget.seconds_per_user + 60 s (the request's "
                    "budget), or declare a longer engine.timeout_s",
                )
            ]
        case "crash":
            return [
                Problem(
                    case,
                    outcome.message + stderr,
                    "exit 0 after writing the report; report your own failures as status "
                    "'failed' with errors, not as a crash",
                )
            ]
        case "non_json":
            where = "answer" if spec.engine == "http" else "write on stdout"
            return [
                Problem(
                    case,
                    outcome.message,
                    f"{where} exactly one JSON object (logs go to stderr)",
                )
            ]
        case "invalid_report":
            return _schema_problems(case, outcome)
        case "engine_error":
            return [
                Problem(
                    case,
                    outcome.message,
                    "a session that worked has status 'completed' and no errors; an error "
                    "message starting 'auth:' or 'quota:' is the provider refusing the key "
                    "or quota (infrastructure before any model call succeeded)",
                )
            ]
        case _:
            return [Problem(case, outcome.message, "answer every request with 200 or 202")]


def _schema_problems(case: str, outcome: EngineOutcome) -> list[Problem]:
    try:
        EngineReport.model_validate(json.loads(outcome.raw_stdout))
    except ValidationError as exc:
        found: list[Problem] = []
        for error in exc.errors():
            path = ".".join(map(str, error["loc"])) or "(report)"
            if error["type"] == "extra_forbidden":
                found.append(
                    Problem(
                        case,
                        f"extra key '{path}' in the report (an unknown key voids the report)",
                        f"remove it; {_FIX_SCHEMA}",
                    )
                )
            elif error["type"] == "missing":
                found.append(
                    Problem(case, f"missing field '{path}' in the report", f"add it; {_FIX_SCHEMA}")
                )
            else:
                value = json.dumps(error.get("input"))[:80]
                found.append(Problem(case, f"'{path}' = {value}: {error['msg']}", _FIX_SCHEMA))
        return found
    except ValueError:
        pass  # cut at the size kept (64 KiB): the outcome's own summary stands
    return [Problem(case, outcome.message, _FIX_SCHEMA)]


def _report_problems(
    case: str,
    report: EngineReport,
    request: EngineRequest,
    slug: str,
    origins: set[str],
) -> list[Problem]:
    found: list[Problem] = []
    known = {p.user for p in request.personas} | {u.user for u in report.users}
    named: dict[str, str] = {}
    for i, finding in enumerate(report.findings):
        for user in finding.evidence.users:
            named.setdefault(user, f"findings.{i}.evidence.users")
    for i, item in enumerate(report.set_aside):
        for user in item.users:
            named.setdefault(user, f"set_aside.{i}.users")
    for i, quote in enumerate(report.quote_pool):
        named.setdefault(quote.user, f"quote_pool.{i}.user")
    for i, obs in enumerate(report.observations):
        named.setdefault(obs.user, f"observations.{i}.user")
    for user, where in named.items():
        if user not in known:
            found.append(
                Problem(
                    case,
                    f"'{where}' names user {user!r}, who is neither in the request's personas "
                    f"({', '.join(sorted(p.user for p in request.personas))}) nor in the "
                    "report's users",
                    "name users by the personas' ids; list a follow-up user of your own in users",
                )
            )
    ids = [f.id for f in report.findings]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        found.append(
            Problem(case, f"finding id {dup!r} is used twice", "give each finding its own id")
        )
    for i, obs in enumerate(report.observations):
        parts = urlsplit(obs.page_url)
        on_site = _origin(obs.page_url) in origins
        if on_site and parts.path.startswith("/v/") and not parts.path.startswith(f"/v/{slug}"):
            found.append(
                Problem(
                    case,
                    f"'observations.{i}.page_url' names another site ({obs.page_url})",
                    "report the pages of this request's start_url only",
                )
            )
    return found


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _split_fix(line: str) -> tuple[str, str]:
    what, _, fix = line.partition(". Fix: ")
    return what, fix or "see docs/engines.md"


def summary(check: CaseCheck) -> dict[str, Any]:
    """One line's worth of a conformant case: findings, set-asides, pages opened."""
    report = check.outcome.report if check.outcome is not None else None
    return {
        "findings": len(report.findings) if report else 0,
        "set_aside": len(report.set_aside) if report else 0,
        "pages_opened": check.pages_opened,
    }
