"""Release gates as the protocol states them: a demonstrated regression as the experiment
declares it (default: the candidate failed a scenario in two pairs the baseline passed, never
the reverse), and a missing required review note blocking the release."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ruamel.yaml import YAML

from pairbench._errors import PairbenchError
from pairbench.report.render._markdown import render_markdown
from pairbench.spec import Experiment, canonical_hash, check_experiment
from pairbench.studies import ReviewNote
from pairbench.studies.runtime_revision_ab import STUDY
from pairbench.studies.runtime_revision_ab._check import study_rows
from pairbench.studies.runtime_revision_ab._regression import declared_rule
from pairbench.studies.runtime_revision_ab.report._load import RevisionData
from pairbench.studies.runtime_revision_ab.report._summary import revision_summary
from studies.runtime_revision_ab.revision_builders import (
    cell,
    evidence,
    grid_run,
    run_record,
    summary_of,
)

ONE = {"ar-001": "AR-001"}
"""A scenario the protocol does not always review: only a regression makes it need a note."""
P, F = True, False


def _summary(
    base: list[bool],
    cand: list[bool],
    regression: Any = None,
    notes: dict[str, ReviewNote] | None = None,
) -> dict[str, Any]:
    run = run_record(len(base), tasks=ONE, regression=regression)
    return revision_summary(run, grid_run([base], [cand], notes))


def _gate(r: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in r["gates"] if g["gate"] == name)


def _regressed_pairs(r: dict[str, Any]) -> list[int]:
    return [c["pair"] for c in _gate(r, "demonstrated_regression")["campaigns"] if c["failing"]]


def test_two_of_five_pairs_lost_is_a_demonstrated_regression() -> None:
    r = _summary([P, P, P, P, P], [P, F, P, F, P])
    assert _gate(r, "demonstrated_regression")["status"] == "fail"
    assert _regressed_pairs(r) == [1, 3]
    # It needs a review note, and without one the release is blocked as well as failed.
    assert _gate(r, "review_notes") == {**_gate(r, "review_notes"), "status": "blocked",
                                        "blocked": ["AR-001"]}  # fmt: skip
    assert r["release"]["status"] == "fail"
    assert r["release"]["statement"] == (
        "fail: no demonstrated regression without a review note; "
        "blocked: review note missing for AR-001"
    )
    assert r["regression_rule"] == {
        "min_pairs": 2, "allow_reverse": False, "declared": False, "demonstrable": True,
        "statement": "the candidate fails a scenario in at least 2 pairs where the baseline "
        "passed it, and never the reverse",
    }  # fmt: skip


def test_one_lost_pair_is_no_demonstrated_regression() -> None:
    r = _summary([P, P, P, P, P], [P, P, F, P, P])
    assert _gate(r, "demonstrated_regression")["status"] == "pass"
    assert _gate(r, "review_notes")["status"] == "pass" and r["release"]["status"] == "pass"
    assert r["audit"]["reviews"] == []  # the lost pair stays in the audit list's cells
    assert [(c["scenario"], c["pair"]) for c in r["audit"]["cells"]] == [("AR-001", 2)]


def test_a_reverse_pair_means_no_demonstrated_regression_unless_allowed() -> None:
    base, cand = [P, P, F, P, P], [F, F, P, P, P]  # lost in 0 and 1, won in 2
    assert _regressed_pairs(_summary(base, cand)) == []
    assert _gate(_summary(base, cand), "demonstrated_regression")["status"] == "pass"
    allowed = _summary(base, cand, {"min_pairs": 2, "allow_reverse": True})
    assert _regressed_pairs(allowed) == [0, 1]
    assert allowed["regression_rule"]["statement"].endswith(
        "pairs where the candidate passed and the baseline failed are ignored"
    )


def test_a_declared_min_pairs_of_three_changes_the_verdict() -> None:
    three = {"min_pairs": 3, "allow_reverse": False}
    assert _regressed_pairs(_summary([P] * 5, [P, F, P, F, P], three)) == []
    assert _regressed_pairs(_summary([P] * 5, [F, F, P, F, P], three)) == [0, 1, 3]
    r = _summary([P] * 5, [F, F, P, F, P], three)
    assert (r["regression_rule"]["declared"], r["regression_rule"]["min_pairs"]) == (True, 3)
    md = render_markdown(summary_of(run_record(5, tasks=ONE, regression=three),
                                    grid_run([[P] * 5], [[F, F, P, F, P]])))  # fmt: skip
    assert (
        "Demonstrated regression, as declared: the candidate fails a scenario in at least 3 "
        "pairs where the baseline passed it, and never the reverse (agent.settings.regression: "
        "{min_pairs: 3, allow_reverse: false})." in md
    )


def test_infrastructure_cells_count_in_neither_direction() -> None:
    run = run_record(3, tasks=ONE)
    cells = [
        cell("baseline", "ar-001", 0, None),  # infra: no evidence either way
        cell("candidate", "ar-001", 0, evidence("AR-001", "scored_failure")),
        cell("baseline", "ar-001", 1, evidence("AR-001")),
        cell("candidate", "ar-001", 1, evidence("AR-001", "pre_inference_rejection")),
        cell("baseline", "ar-001", 2, evidence("AR-001")),
        cell("candidate", "ar-001", 2, None),
    ]
    r = revision_summary(run, RevisionData(cells, []))
    assert _regressed_pairs(r) == []  # only pair 1 is evidence of a loss
    cells[1] = cell("candidate", "ar-001", 0, evidence("AR-001", "scored_failure"))
    cells[0] = cell("baseline", "ar-001", 0, evidence("AR-001"))
    assert _regressed_pairs(revision_summary(run, RevisionData(cells, []))) == [0, 1]


def test_a_screening_pair_cannot_demonstrate_a_regression_and_says_so() -> None:
    run = run_record(1, stage="screening", tasks=ONE)
    data = grid_run([[P]], [[F]])
    r = revision_summary(run, data)
    assert r["regression_rule"]["demonstrable"] is False and _regressed_pairs(r) == []
    assert (
        "This run has 1 pair: no regression can be demonstrated in it; every changed outcome "
        "is in the audit list." in render_markdown(summary_of(run, data))
    )


def test_a_missing_ar005_note_blocks_the_release_and_a_note_clears_it() -> None:
    tasks = {"ar-005": "AR-005"}
    run = run_record(2, tasks=tasks)
    cells = [cell(a, "ar-005", p, evidence("AR-005")) for a in ("baseline", "candidate")
             for p in (0, 1)]  # fmt: skip
    every_gate_passes = revision_summary(run, RevisionData(cells, []))
    assert [g["status"] for g in every_gate_passes["gates"]] == ["pass"] * 7 + ["blocked"]
    assert every_gate_passes["release"] == {
        "status": "blocked", "statement": "blocked: review note missing for AR-005",
        "failing": [], "blocked": ["AR-005"], "missing": [],
    }  # fmt: skip
    md = render_markdown(summary_of(run, RevisionData(cells, [])))
    assert "Release gate: blocked: review note missing for AR-005." in md
    for key in ("AR-005", "ar-005"):  # by scenario or by task id, as manual_review.json allows
        noted = RevisionData(cells, [], {key: ReviewNote(by="ana", note="still reads it")})
        r = revision_summary(run, noted)
        assert r["release"]["status"] == "pass", key
        assert r["release"]["statement"].startswith("pass: every gate passed")
        # The note changes no number.
        assert r["grid"] == every_gate_passes["grid"]


def test_a_blank_note_does_not_clear_a_required_review() -> None:
    run = run_record(2, tasks={"ar-005": "AR-005"})
    cells = [cell(a, "ar-005", p, evidence("AR-005")) for a in ("baseline", "candidate")
             for p in (0, 1)]  # fmt: skip
    for blank in (ReviewNote(by="", note="fine"), ReviewNote(by="ana", note="  ")):
        r = revision_summary(run, RevisionData(cells, [], {"AR-005": blank}))
        assert r["release"]["statement"] == "blocked: review note missing for AR-005"


BAD = [
    ({"min_pairs": 0}, "min_pairs must be a whole number of pairs, 1 or more, not 0"),
    ({"min_pairs": "2"}, "min_pairs must be a whole number of pairs, 1 or more, not '2'"),
    ({"min_pairs": True}, "min_pairs must be a whole number"),
    ({"allow_reverse": "no"}, "allow_reverse must be true or false, not 'no'"),
    ({"min_pair": 2}, "min_pair is not a key (did you mean 'min_pairs'?)"),
    (2, "must be a mapping, not 2"),
]


def _experiment(tmp_path: Path, regression: Any) -> Path:
    folder = tmp_path / "exp"
    shutil.copytree(STUDY.root, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "minirt").mkdir()  # the repository's folder; no source is read by `check`
    yaml, path = YAML(), folder / "experiment.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["agent"]["settings"]["regression"] = regression
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    return path


@pytest.mark.parametrize(("regression", "says"), BAD)
def test_a_bad_declaration_is_refused_naming_its_field(
    tmp_path: Path, regression: Any, says: str
) -> None:
    path = _experiment(tmp_path, regression)
    problems = [p for p in check_experiment(path) if "regression" in str(p)]
    assert len(problems) == 1
    text = str(problems[0])
    assert text.startswith(f"{path}:") and "agent.settings.regression: rab-runtime: " in text
    assert says in text and "e.g. regression: {min_pairs: 2, allow_reverse: false}" in text


def test_the_shipped_declaration_is_the_default_and_hashed_with_the_experiment() -> None:
    shipped = YAML(typ="safe").load((STUDY.root / "experiment.yaml").read_text(encoding="utf-8"))
    assert shipped["agent"]["settings"]["regression"] == {"min_pairs": 2, "allow_reverse": False}
    assert declared_rule(shipped) == declared_rule(None)  # the protocol's default, written out
    three = {
        **shipped,
        "agent": {
            **shipped["agent"],
            "settings": {
                **shipped["agent"]["settings"],
                "regression": {"min_pairs": 3, "allow_reverse": False},
            },
        },
    }
    # The lock records the canonical hash: another declaration is another experiment.
    hashes = {canonical_hash(Experiment.model_validate(d)) for d in (shipped, three)}
    assert len(hashes) == 2


def test_a_declaration_edited_in_run_json_is_refused() -> None:
    edited = {"agent": {"adapter": "rab-runtime", "settings": {"regression": {"min_pairs": -1}}}}
    with pytest.raises(PairbenchError, match=r"run\.json experiment_model\.agent\.settings"
                       r"\.regression: min_pairs must be"):  # fmt: skip
        declared_rule(edited)


def test_check_says_what_the_release_gate_will_require() -> None:
    shipped = YAML(typ="safe").load((STUDY.root / "experiment.yaml").read_text(encoding="utf-8"))
    loaded = SimpleNamespace(experiment=Experiment.model_validate(shipped), root=STUDY.root)
    (line,) = [x for x in study_rows(loaded) if x.startswith("release gates:")]
    assert line == (
        "release gates: a demonstrated regression is: the candidate fails a scenario in at "
        "least 2 pairs where the baseline passed it, and never the reverse (as declared); "
        "review notes (manual_review.json) required for AR-005, AR-006, AR-009 and each "
        "demonstrated regression, or the release is blocked"
    )
