"""The machine-only scorer (version 1.0): pure functions over the held-out manifests and
per-session records, as the protocol's §5 defines them. A manual-review note is shown
beside the score and never read by any rule here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from pairbench._errors import SpecError
from pairbench.studies.attribution_reliability._manifest import REPEAT_SUBSET, Case, Package
from pairbench.studies.attribution_reliability._score_metrics import (
    class_results,
    confusion,
    cost_summary,
    latency_summary,
    metrics,
    misses,
    package_results,
)
from pairbench.studies.attribution_reliability._score_models import (
    ManifestSource,
    Scorecard,
    SessionFailure,
    SessionRecord,
    SessionScore,
)
from pairbench.studies.attribution_reliability._score_text import met_target, supported
from pairbench.studies.attribution_reliability._score_visit import (
    DEFAULT_STUFFING_SHARE,
    evidence_stats,
    site_met_target,
)
from pairbench.studies.attribution_reliability.engines._identity import EngineIdentity

Key = tuple[str, str, int]


def score(
    records: Iterable[SessionRecord],
    cases: Mapping[str, Case],
    packages: Mapping[str, Package],
    *,
    engine: str,
    engine_identity: EngineIdentity | None = None,
    manual_review: Mapping[str, str] | None = None,
    run: RunMeta | None = None,
    evidence_stuffing_share: float = DEFAULT_STUFFING_SHARE,
) -> Scorecard:
    """Score one arm's held-out run.

    Only held-out manifest entries are scored; a record naming a calibration case, an
    unknown id, a repeat trial outside the repeat subset, or the same session twice is
    refused (``SpecError``), so calibration can never leak into a result. A held-out
    session with no record scores as not run. ``run`` names the run, its lock, sitting
    and the manifests read; ``evidence_stuffing_share`` lists findings that pasted a page
    (beside the score: it changes no number).

    **Usage**::

        card = score(records, load_cases(), load_packages(), engine="heuristic",
                     manual_review=load_manual_review(run_dir / "manual_review.json"))
    """
    held_cases = {k: c for k, c in cases.items() if c.set == "held-out"}
    held_packages = {k: p for k, p in packages.items() if p.set == "held-out"}
    repeat = [c for c in REPEAT_SUBSET if c in held_cases]
    by_key = _index(records, cases, packages, set(repeat))

    expected: list[Key] = [(c, "e2e", 0) for c in held_cases]
    expected += [(c, "e2e", t) for t in (1, 2) for c in repeat]
    expected += [(p, "package", 0) for p in held_packages]
    filled = {key: by_key.get(key) or _not_run(key) for key in expected}
    items: dict[tuple[str, str], Case | Package] = {
        **{(k, "e2e"): c for k, c in held_cases.items()},
        **{(k, "package"): p for k, p in held_packages.items()},
    }
    sessions = {
        key: score_session(rec, items[key[0], key[1]], evidence_stuffing_share)
        for key, rec in filled.items()
    }
    meta = run or RunMeta()

    first = [sessions[(c, "e2e", 0)] for c in held_cases]
    pkgs = [sessions[(p, "package", 0)] for p in held_packages]
    return Scorecard(
        engine=engine,
        engine_identity=engine_identity,
        run_id=meta.run_id,
        lock_sha256=meta.lock_sha256,
        sitting=meta.sitting,
        manifests=list(meta.manifests),
        evidence_stuffing_share=evidence_stuffing_share,
        metrics=metrics(filled, sessions, held_cases, held_packages, repeat),
        per_class=class_results(first),
        confusion=confusion(first),
        packages=package_results(pkgs),
        sessions=list(sessions.values()),
        misses=misses(filled, sessions, items, held_packages),
        cost=cost_summary(filled.values()),
        latency=latency_summary(filled.values()),
        manual_review=dict(manual_review or {}),
        flagged=[
            f"{s.case} ({s.kind}, trial {s.trial}): not run, scored as nothing"
            for s in sessions.values()
            if s.status == "not_run"
        ],
        not_run=sum(s.status == "not_run" for s in sessions.values()),
        **_flags(sessions.values()),
    )


class RunMeta(NamedTuple):
    """Which run a scorecard scores (results.json names it)."""

    run_id: str | None = None
    lock_sha256: str | None = None
    sitting: int | None = None
    manifests: tuple[ManifestSource, ...] = ()


def _flags(sessions: Iterable[SessionScore]) -> dict[str, list[str]]:
    never, over, stuffed = [], [], []
    for s in sessions:
        where = f"{s.case} ({s.kind}, trial {s.trial})"
        if s.never_visited:
            never.append(f"{where}: the engine sent the site no request; {s.published} "
                         "finding(s) published")  # fmt: skip
        if s.over_budget:
            over.append(f"{where}: {'; '.join(s.over_budget)}")
        stuffed += [
            f"{where} {e.finding}: evidence of {e.chars} characters holds "
            f"{100 * e.share:.0f}% of the {e.page_words} words of {e.page}"
            for e in s.evidence
            if e.stuffing
        ]
    return {"never_visited": never, "over_budget": over, "evidence_stuffing": stuffed}


def score_session(
    record: SessionRecord,
    item: Case | Package,
    evidence_stuffing_share: float = DEFAULT_STUFFING_SHARE,
) -> SessionScore:
    """One session against its manifest entry."""
    report = record.report
    findings = report.findings if report is not None else []
    n_supported = sum(supported(f, item) for f in findings)
    if findings:
        outcome = "blamed"
    elif report is not None and report.set_aside:
        outcome = "set_aside"
    else:
        outcome = "nothing"
    met: bool | None = None
    claimed: bool | None = None
    hits: list[str] = []
    if isinstance(item, Case):
        seen, hits = site_met_target(record, item)
        if item.truth == "PRODUCT":
            met = seen
            claimed = report is not None and met_target(report.observations, item)
    visit = record.visit
    return SessionScore(
        case=record.case,
        kind=record.kind,
        trial=record.trial,
        truth=item.truth,
        case_class=item.case_class if isinstance(item, Case) else None,
        status=record.status,
        runtime_failure=record.runtime_failure,
        outcome=outcome,
        published=len(findings),
        supported=n_supported,
        met_target=met,
        met_target_claimed=claimed,
        audit_hits=hits,
        never_visited=None if visit is None else visit.never_visited,
        site_requests=None if visit is None else visit.requests,
        site_actions=None if visit is None else visit.actions,
        site_pages=[] if visit is None else visit.pages,
        last_request_s=None if visit is None else visit.last_s,
        over_budget=[] if visit is None else visit.over_budget,
        evidence=evidence_stats(findings, visit, evidence_stuffing_share),
    )


def write_results(card: Scorecard, path: Path) -> Path:
    """``results.json``: the scorecard with its scorer and protocol versions."""
    path.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def read_results(path: Path) -> Scorecard:
    """A ``results.json`` written by ``write_results`` (refused if it does not validate)."""
    return Scorecard.model_validate_json(path.read_text(encoding="utf-8"))


def load_manual_review(path: Path) -> dict[str, str]:
    """``manual_review.json`` (``{"<case id>": "note"}``); a missing file is no notes."""
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SpecError([f"{path}: cannot read manual review ({exc}). Fix: valid JSON"]) from exc
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise SpecError([f'{path}: not {{"<case id>": "note"}}. Fix: string notes by case id'])
    return dict(raw)


def _index(
    records: Iterable[SessionRecord],
    cases: Mapping[str, Case],
    packages: Mapping[str, Package],
    repeat: set[str],
) -> dict[Key, SessionRecord]:
    out: dict[Key, SessionRecord] = {}
    problems: list[str] = []
    for rec in records:
        key: Key = (rec.case, rec.kind, rec.trial)
        item: Case | Package | None = (cases if rec.kind == "e2e" else packages).get(rec.case)
        where = f"{rec.case} ({rec.kind}, trial {rec.trial})"
        if item is None:
            problems.append(f"{where}: no such {rec.kind} in the manifest")
        elif item.set != "held-out":
            problems.append(f"{where}: a calibration record is never scored as a result")
        elif rec.trial and rec.case not in repeat:
            problems.append(f"{where}: only the repeat subset has trials 1 and 2")
        elif key in out:
            problems.append(f"{where}: recorded twice")
        else:
            out[key] = rec
    if problems:
        raise SpecError([f"{p}. Fix: score only the held-out run's records" for p in problems])
    return out


def _not_run(key: Key) -> SessionRecord:
    case, kind, trial = key
    return SessionRecord(
        case=case,
        kind="e2e" if kind == "e2e" else "package",
        trial=0 if trial == 0 else 1 if trial == 1 else 2,
        status="not_run",
        failure=SessionFailure(kind="no_record", message="no session record in the run"),
        cost_provenance="not_applicable",
    )
