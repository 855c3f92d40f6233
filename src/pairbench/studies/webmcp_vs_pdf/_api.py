"""The JSON the page's tools and scoring fields receive: the engine and scorer, as payloads.

Pure functions (no I/O), shared by the site server and the CLI, so the page, the CLI and the
reference answers all come from one engine and one scorer.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from pairbench.studies.webmcp_vs_pdf._dataset import BASELINE_VERSION, PDF_SHA256, load_dataset
from pairbench.studies.webmcp_vs_pdf._engine import egger_test
from pairbench.studies.webmcp_vs_pdf._reference import fit_dataset
from pairbench.studies.webmcp_vs_pdf._scorer import score_answer

MAX_ANSWER_CHARS = 200_000


class RequestError(ValueError):
    """A tool or scoring request the engine cannot answer (HTTP 400, with this message)."""


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def dataset_payload(body: dict[str, Any]) -> dict[str, Any]:
    """``get_dataset``: every record, with yi and vi as numbers and as printed."""
    _no_extra(body, set())
    records = load_dataset()
    return {
        "baseline_version": BASELINE_VERSION,
        "pdf_sha256": PDF_SHA256,
        "k": len(records),
        "records": [
            {
                "record": r.record,
                "study": r.study,
                "author": r.author,
                "year": r.year,
                "weeks": r.weeks,
                "setting": r.setting,
                "tester": r.tester,
                "n1i": r.n1i,
                "n2i": r.n2i,
                "yi": r.yi,
                "vi": r.vi,
            }
            for r in records
        ],
    }


def fit_payload(body: dict[str, Any]) -> dict[str, Any]:
    """``fit_random_effects``: the REML fit, optionally without the records in ``exclude``."""
    _no_extra(body, {"exclude"})
    exclude = body.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(x, str) for x in exclude):
        raise RequestError("'exclude' must be a list of record ids such as [\"s04\"]")
    try:
        fit = fit_dataset(tuple(exclude))
    except (ValueError, ArithmeticError) as exc:
        raise RequestError(str(exc)) from exc
    out = asdict(fit)
    out["excluded"] = list(fit.excluded)
    out["method"] = "REML random effects, Wald 95% CI and p (metafor rma method='REML')"
    return {k: _finite(v) if isinstance(v, float) else v for k, v in out.items()}


def egger_payload(body: dict[str, Any]) -> dict[str, Any]:
    """``egger_test``: Egger's regression test on the full dataset (default ``classic``)."""
    _no_extra(body, {"variant"})
    variant = body.get("variant", "classic")
    if variant not in ("classic", "rma"):
        raise RequestError("'variant' must be 'classic' (the registered test) or 'rma'")
    records = load_dataset()
    test = egger_test([r.yi for r in records], [r.vi for r in records], variant)
    return {
        "variant": test.variant,
        "k": len(records),
        "statistic": _finite(test.z_or_t),
        "statistic_name": "t" if test.variant == "classic" else "z",
        "df": test.df,
        "p": _finite(test.p),
        "method": test.method,
    }


def score_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The 13-field score of a pasted raw answer (``{"answer": "..."}``); nothing is kept."""
    _no_extra(body, {"answer", "condition"})
    answer = body.get("answer")
    if not isinstance(answer, str):
        raise RequestError("'answer' must be the raw answer text")
    if len(answer) > MAX_ANSWER_CHARS:
        raise RequestError(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    score = score_answer(answer)
    return {
        "label": score.label,
        "correct": score.correct,
        "total": score.total,
        "parse_failure": score.parse_failure,
        "reason": score.reason,
        "fields": [asdict(f) for f in score.fields],
    }


def _no_extra(body: dict[str, Any], allowed: set[str]) -> None:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    extra = sorted(set(body) - allowed)
    if extra:
        known = ", ".join(sorted(allowed)) or "none"
        raise RequestError(f"unknown argument(s) {extra}; this tool takes: {known}")
