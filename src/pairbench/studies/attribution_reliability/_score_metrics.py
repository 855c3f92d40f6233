"""The seven metrics and what is reported beside them, from scored sessions.

Metrics 1–6 read the held-out first runs (trial 0) only; repeat rounds enter metric 7 and
nothing else, so they can never move the others.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from pairbench.studies.attribution_reliability._manifest import Case, Package
from pairbench.studies.attribution_reliability._score_models import (
    CONFUSION_COLUMNS,
    ClassResult,
    ConfusionCell,
    ConfusionColumn,
    ConfusionRow,
    CostSummary,
    LatencySummary,
    Metrics,
    Miss,
    PackageResults,
    Proportion,
    SessionRecord,
    SessionScore,
)
from pairbench.studies.attribution_reliability._score_text import (
    finding_texts,
    founder_facing,
    mentions,
    reaches,
    supported,
)

Key = tuple[str, str, int]
TRUTHS = ("PRODUCT", "NOT_PRODUCT", "INCONCLUSIVE_EXPECTED")


def metrics(
    records: Mapping[Key, SessionRecord],
    sessions: Mapping[Key, SessionScore],
    cases: Mapping[str, Case],
    packages: Mapping[str, Package],
    repeat: Sequence[str],
) -> Metrics:
    first = [sessions[(c, "e2e", 0)] for c in cases]
    product = [s for s in first if s.truth == "PRODUCT"]
    not_product = [s for s in first if s.truth == "NOT_PRODUCT"]
    met = [s for s in product if s.met_target]
    claimed = [s for s in product if s.met_target_claimed]
    candidates = [s for s in first if s.truth != "PRODUCT" and s.outcome != "nothing"]
    rejection, removed, valid = _sentences(records, packages)
    runs = [[sessions[(c, "e2e", t)] for t in (0, 1, 2)] for c in repeat]
    # Repeatability asks whether three runs agree: a case with a run that never happened
    # has nothing to agree with (scored as nothing, three not-run rounds would "agree").
    done = [r for r in runs if all(s.status != "not_run" for s in r)]
    left_out = len(runs) - len(done)
    flags = [[s.outcome == "blamed" for s in r] for r in done]
    both = [
        (r[a], r[b])
        for r in runs
        for a, b in ((0, 1), (0, 2), (1, 2))
        if r[a].status != "not_run" and r[b].status != "not_run"
    ]
    pairs = [(a.outcome == "blamed", b.outcome == "blamed") for a, b in both]
    nr_first = _not_run(first)
    nr_pkgs = _not_run(sessions[(p, "package", 0)] for p in packages)
    target = [(c, "e2e", 0) for c, case in cases.items() if case.target_exists]
    target += [(p, "package", 0) for p, pkg in packages.items() if pkg.target_exists]
    return Metrics(
        precision=Proportion.of(
            sum(s.supported for s in first), sum(s.published for s in first), nr_first
        ),
        false_blame=Proportion.of(
            _count(s.outcome == "blamed" for s in not_product),
            len(not_product),
            _not_run(not_product),
        ),
        recall=Proportion.of(
            _count(s.supported > 0 for s in product), len(product), _not_run(product)
        ),
        recall_met_target=Proportion.of(
            _count(s.supported > 0 for s in met), len(met), _not_run(product)
        ),
        recall_met_target_claimed=Proportion.of(
            _count(s.supported > 0 for s in claimed), len(claimed), _not_run(product)
        ),
        abstention=Proportion.of(
            _count(s.published == s.supported for s in candidates),
            len(candidates),
            _not_run(s for s in first if s.truth != "PRODUCT"),
        ),
        rejection=rejection.model_copy(update={"not_run": nr_pkgs}),
        removed_from_pool=removed.model_copy(update={"not_run": nr_pkgs}),
        valid_kept=valid.model_copy(update={"not_run": nr_pkgs}),
        false_absence=_false_absence(records, cases, packages).model_copy(
            update={"not_run": _not_run(sessions[k] for k in target)}
        ),
        repeatability=Proportion.of(_count(len(set(f)) == 1 for f in flags), len(flags), left_out),
        exact_agreement=Proportion.of(
            _count(len({s.outcome for s in r}) == 1 for r in done), len(done), left_out
        ),
        pairwise_agreement=Proportion.of(_count(a == b for a, b in pairs), len(pairs), left_out),
    )


def _not_run(group: Iterable[SessionScore]) -> int:
    return sum(1 for s in group if s.status == "not_run")


def _count(flags: Iterable[bool]) -> int:
    return sum(1 for f in flags if f)


def _sentences(
    records: Mapping[Key, SessionRecord], packages: Mapping[str, Package]
) -> tuple[Proportion, Proportion, Proportion]:
    rejected = removed = unsupported = kept_valid = valid = 0
    for pid, package in packages.items():
        report = records[(pid, "package", 0)].report
        shown = founder_facing(report) if report else []
        published = [t for f in report.findings for t in finding_texts(f)] if report else []
        kept = [q.text for q in report.quote_pool if q.status == "kept"] if report else []
        for s in package.sentences:
            in_kept = any(reaches(s.text, s.anchors, t) for t in kept)
            if s.planted == "unsupported":
                unsupported += 1
                rejected += not any(reaches(s.text, s.anchors, t) for t in shown + published)
                removed += not in_kept
            elif s.planted == "valid":
                valid += 1
                kept_valid += in_kept
    return (
        Proportion.of(rejected, unsupported),
        Proportion.of(removed, unsupported),
        Proportion.of(kept_valid, valid),
    )


def _false_absence(
    records: Mapping[Key, SessionRecord],
    cases: Mapping[str, Case],
    packages: Mapping[str, Package],
) -> Proportion:
    keys = [(c, "e2e", 0) for c, case in cases.items() if case.target_exists]
    keys += [(p, "package", 0) for p, pkg in packages.items() if pkg.target_exists]
    hits = 0
    for key in keys:
        report = records[key].report
        hits += report is not None and any(
            f.claim_scope == "product_absence" for f in report.findings
        )
    return Proportion.of(hits, len(keys))


def class_results(first: Sequence[SessionScore]) -> list[ClassResult]:
    out = []
    for name in dict.fromkeys(s.case_class for s in first if s.case_class):
        group = [s for s in first if s.case_class == name]
        out.append(
            ClassResult(
                case_class=name,
                cases=len(group),
                blamed=Proportion.of(_count(s.outcome == "blamed" for s in group), len(group)),
                supported_cases=Proportion.of(_count(s.supported > 0 for s in group), len(group)),
                precision=Proportion.of(
                    sum(s.supported for s in group), sum(s.published for s in group)
                ),
                runtime_failures=_count(s.runtime_failure for s in group),
                not_run=_count(s.status == "not_run" for s in group),
            )
        )
    return out


def confusion(first: Sequence[SessionScore]) -> list[ConfusionRow]:
    rows = [
        _row(t, "truth", [s for s in first if s.truth == t])
        for t in TRUTHS
        if any(s.truth == t for s in first)
    ]
    classes = dict.fromkeys(s.case_class for s in first if s.case_class)
    return rows + [_row(c, "class", [s for s in first if s.case_class == c]) for c in classes]


def _row(label: str, by: str, group: Sequence[SessionScore]) -> ConfusionRow:
    cells: dict[ConfusionColumn, ConfusionCell] = {}
    for col in CONFUSION_COLUMNS:
        here = [s for s in group if s.column == col]
        cells[col] = ConfusionCell(
            count=len(here),
            runtime_failures=_count(s.runtime_failure for s in here),
            not_run=_count(s.status == "not_run" for s in here),
        )
    return ConfusionRow(label=label, by="truth" if by == "truth" else "class", cells=cells)


def package_results(pkgs: Sequence[SessionScore]) -> PackageResults:
    product = [s for s in pkgs if s.truth == "PRODUCT"]
    not_product = [s for s in pkgs if s.truth == "NOT_PRODUCT"]
    return PackageResults(
        precision=Proportion.of(
            sum(s.supported for s in pkgs), sum(s.published for s in pkgs), _not_run(pkgs)
        ),
        recall=Proportion.of(
            _count(s.supported > 0 for s in product), len(product), _not_run(product)
        ),
        false_blame=Proportion.of(
            _count(s.outcome == "blamed" for s in not_product),
            len(not_product),
            _not_run(not_product),
        ),
    )


def misses(
    records: Mapping[Key, SessionRecord],
    sessions: Mapping[Key, SessionScore],
    items: Mapping[tuple[str, str], Case | Package],
    packages: Mapping[str, Package],
) -> list[Miss]:
    """Every miss: scoring misses of first runs, every runtime failure and not-run."""
    out: list[Miss] = []
    for key, s in sessions.items():
        rec, item = records[key], items[key[0], key[1]]
        raw = _raw(rec)

        def add(kind: str, detail: str, s: SessionScore = s, raw: str = raw) -> None:
            out.append(
                Miss.model_validate(
                    {
                        "case": s.case,
                        "kind": s.kind,
                        "trial": s.trial,
                        "miss": kind,
                        "detail": detail,
                        "raw_output": raw,
                    }
                )
            )

        if s.status == "not_run":
            add("not_run", _failure_text(rec) or "not run")
        elif s.runtime_failure:
            add("runtime_failure", _failure_text(rec) or "the engine reported failure")
        if s.trial:
            continue
        if s.truth == "PRODUCT" and not s.supported:
            add("product_not_found", "no supported finding on a product failure")
        if s.truth == "NOT_PRODUCT" and s.outcome == "blamed":
            add("not_product_blamed", f"{s.published} finding(s) on a working product")
        for f in rec.report.findings if rec.report else []:
            if not supported(f, item):
                add(
                    "unsupported_finding",
                    f"{f.id} [{f.claim_scope}] {f.headline}: "
                    f"{_why_unsupported(f.claim_scope, finding_texts(f), item)}",
                )
        if s.kind == "package" and rec.report is not None:
            shown = founder_facing(rec.report)
            shown += [t for f in rec.report.findings for t in finding_texts(f)]
            for sent in packages[s.case].sentences:
                if sent.planted == "unsupported" and any(
                    reaches(sent.text, sent.anchors, t) for t in shown
                ):
                    add("planted_sentence_reached", f"{sent.sid}: {sent.text}")
    return out


def _why_unsupported(scope: str, texts: Sequence[str], item: Case | Package) -> str:
    if item.truth == "NOT_PRODUCT" or (
        item.truth == "INCONCLUSIVE_EXPECTED" and not item.allows_finding
    ):
        return "the product works here"
    if scope not in item.allowed_scopes:
        return f"scope {scope} is not allowed here"
    if not mentions(texts, item.target_terms):
        return "names no target term"
    return "unsupported"


def _raw(rec: SessionRecord) -> str:
    if rec.raw_output:
        return rec.raw_output
    return "" if rec.report is None else rec.report.model_dump_json(by_alias=True, indent=1)


def _failure_text(rec: SessionRecord) -> str:
    if rec.failure:
        return f"{rec.failure.kind}: {rec.failure.message}".rstrip(": ")
    if rec.report and rec.report.errors:
        return "; ".join(f"{e.kind}: {e.message}" for e in rec.report.errors)
    return ""


def cost_summary(records: Iterable[SessionRecord]) -> CostSummary:
    ran = [r for r in records if r.status != "not_run"]
    provenance: dict[str, int] = {}
    for r in ran:
        provenance[r.cost_provenance] = provenance.get(r.cost_provenance, 0) + 1
    if all(r.cost_provenance == "not_applicable" for r in ran):
        return CostSummary(
            status="not_applicable", total_usd=None, by_kind={}, provenance=provenance
        )
    by_kind: dict[str, float] = {}
    for r in ran:
        if r.cost_usd is not None:
            by_kind[r.kind] = by_kind.get(r.kind, 0.0) + r.cost_usd
    missing = any(
        r.cost_provenance == "missing"
        or (r.cost_usd is None and r.cost_provenance != "not_applicable")
        for r in ran
    )
    return CostSummary(
        status="incomplete" if missing else "complete",
        total_usd=sum(by_kind.values()),
        by_kind=by_kind,
        provenance=provenance,
    )


def latency_summary(records: Iterable[SessionRecord]) -> LatencySummary:
    values = [r.latency_ms for r in records if r.status != "not_run" and r.latency_ms is not None]
    return LatencySummary(
        sessions=len(values),
        median_ms=statistics.median(values) if values else None,
        max_ms=max(values) if values else None,
    )
