"""``heuristic``: the study's reference engine (offline, deterministic, no model).

It drives real headless Debian Chromium through Playwright. In ``scan`` mode each persona
gets a fresh browser context and at most ``budget.actions_per_user`` actions: controls whose
accessible name shares words with the goal (DOM order breaks ties), fixed valid inputs,
scrolling, opening collapsed sections and hovering menus (``_heuristic_browse``). It
publishes a ``product_behavior`` finding on a 5xx, error text after an action, a valid
input the form refuses, or a submit with no request and no DOM change within
``no_effect_wait_s``; a ``product_absence`` finding only after following a link that
promised the goal and reading at least three pages. It sets aside 403/429, bot walls and
waits over ``slow_wait_s`` (``environment``), other hosts (``out_of_scope``), upload,
email, message, payment and sign-in fields (``safety``: refused, never filled), and goals
it did not reach (``insufficient_evidence``). ``judge`` mode lives in ``_heuristic_judge``.

**Honest limits.** Its rules are fixed and hashed (``RULES_SHA256``): they were written
against the design's calibration mechanisms, not tuned on held-out results. It shows that
the pipeline works and that the metrics discriminate; its scores say nothing about LLM
judges, and reports label it "reference engine". Cost is "not applicable" (``usage=[]``).
``RULES_SHA256`` covers the rule data only; the engine identity must also hash these
``_heuristic*`` sources. It cannot see a link that serves the wrong page, state lost
between pages, a spinner that never ends after a 200, or a page repeated by pagination;
it refuses every email field, so a product failure behind one is set aside (``safety``).
A visit that raises is reported (status ``failed``, an ``internal`` error) with what the
other users found.

**Usage**::

    engine = HeuristicEngine({})
    report = engine.scan(request)           # launches and closes its own Chromium

    with HeuristicEngine({"no_effect_wait_s": 2}) as engine:   # one Chromium, many scans
        first, second = engine.scan(a), engine.scan(b)
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

from pairbench.studies.attribution_reliability._heuristic_browse import UserVisit
from pairbench.studies.attribution_reliability._heuristic_judge import judge_sessions
from pairbench.studies.attribution_reliability._heuristic_outcome import (
    HeuristicSettings,
    merge,
)
from pairbench.studies.attribution_reliability._heuristic_rules import RULES_SHA256
from pairbench.studies.attribution_reliability.engines._models import (
    EngineError,
    EngineReport,
    EngineRequest,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

ENGINE_NAME = "heuristic"
ENGINE_LABEL = "reference engine"


class HeuristicEngine:
    """The offline reference engine (``AttributionEngine``), built with the arm's settings.

    **Usage**::

        report = HeuristicEngine({"no_effect_wait_s": 8}).scan(request)
        report = HeuristicEngine({}).judge(judge_request)
    """

    rules_sha256 = RULES_SHA256

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = HeuristicSettings.model_validate(settings)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None

    def __enter__(self) -> HeuristicEngine:
        self._browser = self._launch()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser a ``with`` block started (a plain ``scan`` closes its own)."""
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._playwright is not None:
            self._playwright.stop()
            self._playwright = None

    def _launch(self) -> Browser:
        from playwright.sync_api import sync_playwright

        from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable

        self._playwright = sync_playwright().start()
        return self._playwright.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )

    def scan(self, request: EngineRequest) -> EngineReport:
        """Browse ``request.start_url`` as each persona, one after another, and report."""
        owned = self._browser is None
        browser = self._launch() if owned else self._browser
        assert browser is not None
        results, errors = [], []
        try:
            for persona in request.personas:
                context = browser.new_context(
                    viewport={"width": 1280, "height": 800}, locale="en-GB", timezone_id="UTC"
                )
                visit = UserVisit(
                    context.new_page(), persona, request.start_url, request.budget, self.settings
                )
                try:
                    results.append(visit.run())
                except Exception as exc:
                    # The engine's own failure: reported (a runtime failure, scored on what
                    # was published), and the other users still browse.
                    errors.append(EngineError(kind="internal", message=f"{persona.user}: {exc}"))
                    results.append(visit.result)
                finally:
                    context.close()
        finally:
            if owned:
                self.close()
        report = merge(results)
        if errors:
            return report.model_copy(update={"status": "failed", "errors": errors})
        return report

    def judge(self, request: EngineRequest) -> EngineReport:
        """Judge the recorded ``request.sessions`` from their snapshots alone (no browser)."""
        return judge_sessions(request.sessions or [])


__all__ = ["ENGINE_LABEL", "ENGINE_NAME", "HeuristicEngine", "HeuristicSettings", "merge"]
