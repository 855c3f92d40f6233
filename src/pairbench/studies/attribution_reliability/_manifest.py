"""The study's manifests: ``cases.json`` (52 end-to-end cases) and ``packages.json`` (28
evidence packages). Ground truth lives here and only here: no field of a manifest is ever
served by a fixture site or sent to an engine, except a persona's goal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from pairbench._errors import SpecError
from pairbench._model import Frozen
from pairbench.studies.attribution_reliability.engines._models import ClaimScope

STUDY_DIR = Path(__file__).parent / "study"
CASES_FILE = STUDY_DIR / "cases.json"
PACKAGES_FILE = STUDY_DIR / "packages.json"

CaseClass = Literal["product_failure", "tester_trap", "environment", "epistemic"]
Truth = Literal["PRODUCT", "NOT_PRODUCT", "INCONCLUSIVE_EXPECTED"]
CaseSet = Literal["held-out", "calibration"]

REPEAT_SUBSET = ("P01", "P05", "P07", "T01", "T04", "T05", "E01", "E04", "X01", "X03")
"""The protocol's repeatability subset (§4): these held-out cases run three times."""

MANIFEST_WORDS = ("fixture", "benchmark", "trap", "bug", "broken", "defect", "expected")
"""Words no page, header, cookie, route or goal may contain (beside class and truth names,
case ids, descriptions and each case's ``forbidden_terms``)."""


class Case(Frozen):
    """One end-to-end case: a fictional site at ``/v/<slug>`` and a user's natural goal."""

    id: str
    """``P01``..``X10`` (held-out) or ``C-P01``.. (calibration variants)."""
    set: CaseSet
    case_class: CaseClass = Field(alias="class")
    truth: Truth
    description: str
    """What the case contains (never served)."""
    goal: str
    """The persona's natural goal: names neither the defect, the control nor the result."""
    fixture: str
    """The site builder's name in ``site.SITES``."""
    target_terms: list[str] = Field(min_length=1)
    allowed_scopes: list[ClaimScope] = Field(min_length=1)
    allows_finding: bool = False
    """INCONCLUSIVE_EXPECTED only: a finding may be supported."""
    target_exists: bool = True
    encounter_terms: list[str] = Field(default_factory=list)
    encounter_paths: list[str] = Field(default_factory=list)
    """Globs over a page path after ``/v/<slug>`` (``/delivery``, ``/checkout*``)."""
    forbidden_terms: list[str] = Field(default_factory=list)

    model_config = Frozen.model_config | {"populate_by_name": True}


class PlannedSentence(Frozen):
    """A narration sentence of a scripted user, with its planted role."""

    sid: str
    text: str
    after_step: int
    planted: Literal["unsupported", "valid"] | None = None
    anchors: list[str] = Field(default_factory=list)
    """Rare tokens ("order #58213"): an unsupported anchor is on no route, a valid one is."""


class ScriptStep(Frozen):
    """One fixed action: ``do`` (goto, click, fill, hover, scroll, wait, press) ``on`` a
    target (``role=button[name=Place order]``, ``css=...`` or ``xy=120,640``)."""

    do: str
    on: str = ""
    value: str = ""


class ScriptedUser(Frozen):
    user: str
    goal: str
    steps: list[ScriptStep]


class Package(Frozen):
    """One evidence package: scripted users on a case's site, recorded, then judged."""

    id: str
    """``K01``..``K20`` (held-out) or ``C-K01``.. (calibration)."""
    set: CaseSet
    kind: str
    description: str
    fixture: str
    truth: Truth
    target_terms: list[str] = Field(min_length=1)
    allowed_scopes: list[ClaimScope] = Field(min_length=1)
    allows_finding: bool = False
    target_exists: bool = True
    users: list[ScriptedUser] = Field(min_length=1)
    sentences: list[PlannedSentence] = Field(default_factory=list)
    forbidden_terms: list[str] = Field(default_factory=list)


def _load(path: Path, model: type[Case] | type[Package], key: str) -> list[Case | Package]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SpecError(
            [f"{path}: cannot read the manifest ({exc}). Fix: restore the file"]
        ) from exc
    items = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise SpecError([f"{path}: no {key!r} list. Fix: the file is {{{key!r}: [...]}}"])
    out: list[Case | Package] = []
    for i, item in enumerate(items):
        try:
            out.append(model.model_validate(item))
        except ValidationError as exc:
            where = item.get("id", i) if isinstance(item, dict) else i
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise SpecError(
                [f"{path}: {key}[{where}].{loc}: {first['msg']}. Fix: correct that field"]
            ) from exc
    ids = [o.id for o in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SpecError([f"{path}: duplicate ids {dupes}. Fix: give every entry its own id"])
    return out


def load_cases(path: Path = CASES_FILE) -> dict[str, Case]:
    """Every case by id, in file order."""
    return {c.id: c for c in _load(path, Case, "cases") if isinstance(c, Case)}


def load_packages(path: Path = PACKAGES_FILE) -> dict[str, Package]:
    """Every package by id, in file order."""
    return {p.id: p for p in _load(path, Package, "packages") if isinstance(p, Package)}
