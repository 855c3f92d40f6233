"""The view in Debian's Chromium, driven by Playwright: click through a real demo run, its
report, the trial browser, a transcript and a comparison; hostile text never runs; a live
run reloads itself; ``pairbench view`` serves from the command line.

Screenshots go to ``$PAIRBENCH_TEST_ARTIFACTS/view`` when that is set, else to a temporary
folder. Slow (tests/conftest.py): a browser and a real demo run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright

from helpers.common import edit_experiment, study_copy, task_named
from helpers.view_runs import PAYLOADS, ViewRuns, build_view_runs, snapshot, write_run
from pairbench import start_run, write_report
from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable
from pairbench.view import serving

pytestmark = pytest.mark.browser

NO_XSS = "typeof window.__xss === 'undefined'"
"""True in a page where no hostile payload ran (each sets ``window.__xss``)."""
MARKUP = "img[src=x], [onerror], [onload], script:not([src])"
"""What a payload would be if it became markup instead of text."""


@dataclass(frozen=True)
class Site:
    """A RUNS_DIR with a real demo run among the others, served for the whole module."""

    url: str
    runs: ViewRuns
    demo: str
    """The demo run's id: the mcp-transports study, two tasks, one trial each."""
    shots: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("view-browser")
    runs = build_view_runs(root)
    experiment = study_copy(root)
    tasks = [
        task_named(experiment, "read-issue-title"),
        task_named(experiment, "injection-summary"),
    ]
    edit_experiment(experiment, trials=1, tasks=tasks)
    demo = start_run(experiment, runs.runs, run_seed=11).run_dir
    write_report(demo)  # as `pairbench demo` does at the end
    artifacts = os.environ.get("PAIRBENCH_TEST_ARTIFACTS")
    shots = Path(artifacts) / "view" if artifacts else tmp_path_factory.mktemp("view-shots")
    shots.mkdir(parents=True, exist_ok=True)
    # A thread, not a process: the suite's guard fails a test that leaves a child running.
    with serving(runs.runs) as url:
        yield Site(url.rstrip("/"), runs, demo.name, shots)


@dataclass
class Watched:
    """A page with everything that would show a problem collected as it happens."""

    page: Page
    errors: list[str] = field(default_factory=list)
    """Console errors and uncaught exceptions (a CSP violation is a console error)."""
    dialogs: list[str] = field(default_factory=list)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_load_state("load")

    def shot(self, site: Site, name: str) -> None:
        self.page.screenshot(path=str(site.shots / f"{name}.png"), full_page=True)

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.dialogs == [], self.dialogs


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        launched = pw.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen = Watched(page)

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen.errors.append(f"console: {message.text} at {message.location}")

    def dialog(opened: Dialog) -> None:
        seen.dialogs.append(opened.message)
        opened.dismiss()

    page.on("console", console)
    page.on("pageerror", lambda exc: seen.errors.append(f"pageerror: {exc}"))
    page.on("dialog", dialog)
    yield seen
    page.close()


def test_click_through_a_demo_run(site: Site, watched: Watched) -> None:
    before = snapshot(site.runs.runs)
    page = watched.page
    watched.open(site.url + "/")
    assert page.locator("h1").inner_text() == "Runs"
    watched.shot(site, "01-runs")

    page.locator(f'a[href="/runs/{site.demo}"]').click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text() == site.demo
    report = page.frame_locator("iframe.report")
    assert "pairbench report: mcp-transports" in report.locator("h1").first.inner_text()
    watched.shot(site, "02-run")

    page.get_by_role("link", name="Browse all trials").click()
    page.wait_for_load_state("load")
    assert page.locator("#matched").inner_text().startswith("6 of 6 trials")
    with page.expect_navigation():  # view.js submits the filter as soon as it changes
        page.locator('select[name="arm"]').select_option("local-stdio")
    assert re.search(r"arm=local-stdio", page.url)
    assert page.locator("#matched").inner_text().startswith("2 of 6 trials")
    watched.shot(site, "03-trials-filtered")

    page.locator('table.trials a[href$="/local-stdio/injection-summary/0"]').first.click()
    page.wait_for_load_state("load")
    assert page.locator(".timeline .kind", has_text="tool_call").count() == 2
    assert page.get_by_role("heading", name="Fixture audit log").count() == 1
    assert page.get_by_role("heading", name="Tool calls and latencies").count() == 1
    watched.shot(site, "04-transcript")

    watched.open(f"{site.url}/runs/{site.demo}")
    page.locator('form.compare-form select[name="b"]').select_option(site.runs.hostile.run_id)
    page.get_by_role("button", name="Compare").click()
    page.wait_for_load_state("load")
    assert page.get_by_role("heading", name=re.compile("Invalid comparison")).count() == 1
    assert page.locator("table.mismatches tbody tr").count() > 0
    watched.shot(site, "05-compare-invalid")

    a, b = site.runs.tiny
    watched.open(f"{site.url}/compare?a={a}&b={b}")
    assert page.get_by_role("heading", name=re.compile("Paired comparison")).count() == 1
    watched.shot(site, "06-compare-paired")
    watched.clean()
    after = snapshot(site.runs.runs)
    assert after == before, sorted(
        k for k in after.keys() | before.keys() if after.get(k) != before.get(k)
    )


def _hostile_pages(site: Site) -> list[str]:
    run = site.runs.hostile.run_id
    base = f"{site.url}/runs/{run}"
    pages = [f"{site.url}/", base, f"{base}/report", f"{base}/trials"]
    pages += [f"{base}/trials?outcome={o}" for o in ("infra", "interrupted", "agent_error")]
    pages += [
        f"{base}/trials/{arm}/{task}/{trial}"
        for arm in "ab"
        for task in ("t1", "t2")
        for trial in (0, 1)
    ]
    pages.append(f"{site.url}/compare?a={run}&b={site.demo}")
    pages.append(f"{site.url}/compare?a={run}&b={site.runs.hostile.run_id}")
    return pages


def test_hostile_text_never_runs_on_any_page(site: Site, watched: Watched) -> None:
    before = snapshot(site.runs.runs)
    page = watched.page
    for index, url in enumerate(_hostile_pages(site)):
        watched.open(url)
        for frame in page.frames:  # the report's frame too
            frame.wait_for_load_state("load")
            assert frame.evaluate(NO_XSS), (url, frame.url)
            # Shown as text: none of the payloads became an element.
            assert frame.locator(MARKUP).count() == 0, (url, frame.url)
        if "/trials/" in url:
            assert PAYLOADS[0] in page.locator("main").inner_text(), url
        watched.shot(site, f"xss-{index:02d}")
    watched.clean()  # a payload that became markup is also a CSP violation: an error
    assert snapshot(site.runs.runs) == before


def test_a_live_run_reloads_itself_when_it_moves_on(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    # A RUNS_DIR of its own: this test writes to its run, as the runner would.
    live = write_run(tmp_path / "runs", "live-20261201T120000Z-cccccc", live=True, text="x")
    with serving(tmp_path / "runs") as url:
        page = watched.page
        watched.open(f"{url}runs/{live.run_id}")
        assert page.locator("body").get_attribute("data-poll") is not None
        arm_b = page.locator("table.counts tbody tr").nth(1)  # arms a, then b
        assert arm_b.locator("a.o-agent_error").count() == 0
        # view.js polls the run's status and reloads once the journal has moved on.
        with page.expect_navigation(timeout=30_000):
            _finish_in_flight_attempt(live.path)
        arm_b = page.locator("table.counts tbody tr").nth(1)
        assert arm_b.locator("a.o-agent_error").count() == 1
        watched.shot(site, "07-live-reloaded")
        watched.clean()


def _finish_in_flight_attempt(run: Path) -> None:
    """What the runner does when the in-flight attempt ends: its record, then its line."""
    import hashlib

    from pairbench.store import TrialResult, trial_row
    from pairbench.store._events import AttemptFinished
    from pairbench.store._journal import Journal

    record = TrialResult(
        run_id=run.name,
        experiment="hostile",
        arm="b",
        task="t2",
        trial=1,
        seed=101,
        model_seed=7,
        attempt=1,
        start_order=1,
        outcome="agent_error",
        reason="model API 500",
        agent="scripted",
    )
    (run / "results/b/t2").mkdir(parents=True, exist_ok=True)
    (run / "results/b/t2/1.json").write_text(record.model_dump_json(indent=2), encoding="utf-8")
    genesis = hashlib.sha256((run / "run.json").read_bytes()).hexdigest()
    journal = Journal(run / "journal.jsonl", genesis)
    journal.append(
        AttemptFinished(
            key="b/t2/1",
            attempt=1,
            outcome="agent_error",
            result="results/b/t2/1.json",
            row=trial_row(record, kept=False),
        )
    )
    journal.close()


def test_pairbench_view_serves_from_the_command_line(site: Site, watched: Watched) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "pairbench", "view", str(site.runs.runs), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, (line, server.stderr.read() if server.stderr else "")
        watched.open(found[0])
        assert watched.page.locator(f'a[href="/runs/{site.demo}"]').count() == 1
        watched.shot(site, "08-cli")
        watched.clean()
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C
        out, _ = server.communicate(timeout=30)
    assert server.returncode == 0 and "stopped" in out
