"""A synthetic held-out manifest with the protocol's class sizes (40 E2E + 20 packages, plus
calibration entries), and small builders for records, for the scorer's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pairbench.studies.attribution_reliability._manifest import Case, Package
from pairbench.studies.attribution_reliability._score_models import SessionRecord
from pairbench.studies.attribution_reliability._visit import SiteVisit
from pairbench.studies.attribution_reliability.engines._models import (
    EngineReport,
    Evidence,
    Finding,
    Quote,
)

CLASSES = {"P": "product_failure", "T": "tester_trap", "E": "environment", "X": "epistemic"}
PACKAGE_PRODUCT = ("K10", "K14", "K15", "K16")


def make_case(cid: str, case_set: str = "held-out") -> Case:
    letter = cid.removeprefix("C-")[0]
    truth = "PRODUCT" if letter == "P" else "NOT_PRODUCT"
    absent = cid.endswith(("P10", "X05"))
    data: dict[str, Any] = {
        "id": cid,
        "set": case_set,
        "class": CLASSES[letter],
        "truth": "INCONCLUSIVE_EXPECTED" if cid.endswith("X05") else truth,
        "description": f"synthetic {cid}",
        "goal": f"You want to finish errand {cid}.",
        "fixture": f"fx_{cid}",
        "target_terms": [f"Widget {cid}", f"Gadget {cid}"],
        "allowed_scopes": ["product_absence"] if absent else ["product_behavior"],
        "allows_finding": cid.endswith("X05"),
        "target_exists": not absent,
        "encounter_terms": [f"Control {cid}"],
        "encounter_paths": ["/checkout*"],
    }
    return Case.model_validate(data)


def make_package(pid: str, case_set: str = "held-out") -> Package:
    truth = "PRODUCT" if pid in PACKAGE_PRODUCT else "NOT_PRODUCT"
    return Package.model_validate(
        {
            "id": pid,
            "set": case_set,
            "kind": "synthetic",
            "description": f"synthetic {pid}",
            "fixture": f"fx_{pid}",
            "truth": truth,
            "target_terms": [f"Widget {pid}"],
            "allowed_scopes": ["product_behavior"],
            "target_exists": pid != "K06",
            "users": [{"user": "u1", "goal": f"You want to try {pid}.", "steps": [{"do": "goto"}]}],
            "sentences": [
                {
                    "sid": "s1",
                    "text": f"I placed order {pid} fine.",
                    "after_step": 0,
                    "planted": "unsupported",
                    "anchors": [f"order #{pid}58213"],
                },
                {
                    "sid": "s2",
                    "text": f"The page for {pid} looked calm.",
                    "after_step": 0,
                    "planted": "valid",
                },
                {"sid": "s3", "text": "Hmm.", "after_step": 0},
            ],
        }
    )


def held_out_ids() -> list[str]:
    return [f"{c}{i:02d}" for c in "PTEX" for i in range(1, 11)]


def manifest() -> tuple[dict[str, Case], dict[str, Package]]:
    """40 held-out cases (10 per class; X05 inconclusive; P10, X05 absent), 2 calibration;
    20 held-out packages (4 PRODUCT), 1 calibration."""
    cases = {c: make_case(c) for c in held_out_ids()}
    cases |= {c: make_case(c, "calibration") for c in ("C-P01", "C-T01")}
    packages = {f"K{i:02d}": make_package(f"K{i:02d}") for i in range(1, 21)}
    packages["C-K01"] = make_package("C-K01", "calibration")
    return cases, packages


def write_manifest(tmp: Path) -> dict[str, str]:
    """The manifest as files; returns the oracle's settings."""
    cases, packages = manifest()
    (tmp / "cases.json").write_text(
        json.dumps({"cases": [c.model_dump(mode="json", by_alias=True) for c in cases.values()]})
    )
    (tmp / "packages.json").write_text(
        json.dumps({"packages": [p.model_dump(mode="json") for p in packages.values()]})
    )
    return {"cases": str(tmp / "cases.json"), "packages": str(tmp / "packages.json")}


def finding(
    scope: str = "product_behavior", users: tuple[str, ...] = ("u1",), **text: str
) -> Finding:
    evidence = Evidence(text=text.pop("evidence", ""), users=list(users))
    return Finding.model_validate(
        {"id": "f1", "claim_scope": scope, "evidence": evidence.model_dump(), **text}
    )


def report(*findings: Finding, set_aside: bool = False, **extra: Any) -> EngineReport:
    aside = [{"summary": "s", "users": ["u1"], "reason": "environment"}] if set_aside else []
    return EngineReport.model_validate(
        {
            "status": "completed",
            "findings": [f.model_dump() for f in findings],
            "set_aside": aside,
            **extra,
        }
    )


def quote(text: str, status: str = "kept", user: str = "u1") -> Quote:
    return Quote.model_validate({"user": user, "text": text, "status": status})


def record(case: str, rep: EngineReport | None, trial: int = 0, **extra: Any) -> SessionRecord:
    kind = "package" if case.startswith(("K", "C-K")) else "e2e"
    status = extra.pop("status", "ran" if rep is not None else "not_run")
    return SessionRecord.model_validate(
        {
            "case": case,
            "kind": kind,
            "trial": trial,
            "status": status,
            "report": rep.model_dump(by_alias=True) if rep else None,
            **extra,
        }
    )


def quiet_run() -> list[SessionRecord]:
    """Every held-out session, each reporting nothing."""
    cases, packages = manifest()
    from pairbench.studies.attribution_reliability._manifest import REPEAT_SUBSET

    out = [record(c, report()) for c, v in cases.items() if v.set == "held-out"]
    out += [record(c, report(), trial=t) for t in (1, 2) for c in REPEAT_SUBSET]
    out += [record(p, report()) for p, v in packages.items() if v.set == "held-out"]
    return out


def visit(*pages: tuple[str, str], mode: str = "scan") -> dict[str, Any]:
    """A site visit (as JSON) in which the engine loaded each (path, words shown) page."""
    hits = [
        {"t_s": float(i), "method": "GET", "path": path, "status": 200, "kind": "page"}
        for i, (path, _) in enumerate(pages)
    ]
    texts = [{"path": path, "by": "engine", "text": text} for path, text in pages if text]
    return SiteVisit.model_validate(
        {"mode": mode, "users": 1, "budget": {}, "requests": len(hits), "pairbench_requests": 1,
         "actions": len(hits), "pages": [p for p, _ in pages], "hits": hits, "texts": texts}
    ).model_dump(mode="json")  # fmt: skip
