"""Reference engines for tests: they bound what the scorer can read, never registered.

``OracleEngine`` knows the answers (it reads the manifests), ``AlwaysBlameEngine`` blames
everything and ``NeverBlameEngine`` nothing; a scorer that cannot tell them apart is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairbench.studies.attribution_reliability._manifest import (
    CASES_FILE,
    PACKAGES_FILE,
    Case,
    Package,
    load_cases,
    load_packages,
)
from pairbench.studies.attribution_reliability.engines._models import (
    EngineReport,
    EngineRequest,
    Evidence,
    Finding,
    Quote,
    SetAside,
)


def _users(request: EngineRequest) -> list[str]:
    return [p.user for p in request.personas]


class OracleEngine:
    """Publishes one supported finding on a PRODUCT case and sets aside everything else.

    It finds the case by the first persona's goal (scan: a case's goal; judge: a scripted
    user's goal) and, in judge mode, keeps valid planted sentences and drops the rest.

    **Usage**::

        engine = OracleEngine({"cases": "study/cases.json", "packages": "study/packages.json"})
        report = engine.scan(request)
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._cases = load_cases(Path(settings.get("cases", CASES_FILE)))
        self._packages = load_packages(Path(settings.get("packages", PACKAGES_FILE)))

    def scan(self, request: EngineRequest) -> EngineReport:
        goal = request.personas[0].goal
        case = next((c for c in self._cases.values() if c.goal == goal), None)
        return self._answer(request, case, [])

    def judge(self, request: EngineRequest) -> EngineReport:
        goal = request.personas[0].goal
        package = next(
            (p for p in self._packages.values() if any(u.goal == goal for u in p.users)), None
        )
        quotes: list[Quote] = []
        if package is not None:
            by_user = {u.user for u in package.users}
            user = next(iter(sorted(by_user)))
            quotes = [
                Quote(user=user, text=s.text, status="kept" if s.planted == "valid" else "dropped")
                for s in package.sentences
                if s.planted is not None
            ]
        return self._answer(request, package, quotes)

    def _answer(
        self, request: EngineRequest, item: Case | Package | None, quotes: list[Quote]
    ) -> EngineReport:
        users = _users(request)
        if item is None or item.truth != "PRODUCT":
            aside = SetAside(summary="no product problem", users=users, reason="out_of_scope")
            return EngineReport(status="completed", set_aside=[aside], quote_pool=quotes)
        term = item.target_terms[0]
        finding = Finding(
            id="f1",
            headline=f"{term} does not work",
            evidence=Evidence(text=f"The user tried {term}.", users=users),
            claim_scope=item.allowed_scopes[0],
        )
        return EngineReport(status="completed", findings=[finding], quote_pool=quotes)


class AlwaysBlameEngine:
    """One ``product_behavior`` finding on every case.

    **Usage**::

        AlwaysBlameEngine({}).scan(request).findings  # one finding
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = dict(settings)

    def scan(self, request: EngineRequest) -> EngineReport:
        finding = Finding(
            id="f1",
            headline="The product failed the user",
            evidence=Evidence(text="The user could not finish.", users=_users(request)),
            claim_scope="product_behavior",
        )
        return EngineReport(status="completed", findings=[finding])

    def judge(self, request: EngineRequest) -> EngineReport:
        return self.scan(request)


class NeverBlameEngine:
    """Publishes nothing and sets nothing aside.

    **Usage**::

        NeverBlameEngine({}).scan(request).findings  # []
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = dict(settings)

    def scan(self, request: EngineRequest) -> EngineReport:
        return EngineReport(status="completed")

    def judge(self, request: EngineRequest) -> EngineReport:
        return self.scan(request)
