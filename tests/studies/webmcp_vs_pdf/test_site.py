"""The study's site: JSON endpoints, and the people's page (Living Evidence from a run store,
local scoring fields) in real headless Chromium, where pasted or stored text never runs.

Browser tests skip loudly outside CI when Chromium >= 156 is missing; under ``CI=true`` they
fail instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import uvicorn
from starlette.testclient import TestClient

from helpers.common import skip_outside_ci
from pairbench.fixtures._webmcp import chromium_problem, launch_chromium
from pairbench.schedule._plan import TrialKey
from pairbench.store import RunDir, TrialResult
from pairbench.studies.webmcp_vs_pdf import reference_answer, score_answer
from pairbench.studies.webmcp_vs_pdf._page import NO_RUNS
from pairbench.studies.webmcp_vs_pdf._people import people_page, protocol_limits
from pairbench.studies.webmcp_vs_pdf.site import bind, create_app

pytestmark = pytest.mark.browser

XSS_IMG = '<img src=x onerror="window.__pwned = 1">'
XSS_SCRIPT = "<script>window.__pwned = 1</script>"


def _reference_text(**changes: object) -> str:
    answer = reference_answer()
    for path, value in changes.items():
        section, field = path.split("__")
        answer[section][field] = value
    return json.dumps(answer)


ANSWERS = [
    _reference_text(),
    "```json\n" + _reference_text() + "\n```",
    _reference_text(overall__estimate=0.0843, bias__rule_outcome="passed"),
    _reference_text(overall__k="19"),
    _reference_text().replace('"p": 0.10505673594797017', '"p": NaN', 1),
    "Here is the answer: " + _reference_text(),
    "not json " + XSS_SCRIPT,
    _reference_text(bias__rule_outcome=XSS_IMG),
    json.dumps({XSS_IMG: 1, "overall": {"k": XSS_SCRIPT}}),
]


def _store_run(runs_dir: Path, run_id: str, outcomes: dict[str, list[str]]) -> None:
    info = {"run_id": run_id, "experiment": {"id": "webmcp-vs-pdf"}, "status": "complete"}
    run = RunDir.create(runs_dir, run_id, {"run.json": RunDir.encode_run_json(info)})
    for arm, per_trial in outcomes.items():
        for trial, outcome in enumerate(per_trial):
            result = TrialResult(
                run_id=run_id, experiment="webmcp-vs-pdf", arm=arm, task="common-prompt",
                trial=trial, seed=1, model_seed=1, attempt=1, start_order=0,
                outcome=outcome, agent="scripted", final_answer=f"{XSS_IMG} {XSS_SCRIPT}",
                reason=f"reason {XSS_IMG}",
            )  # fmt: skip
            run.write_result(TrialKey(arm=arm, task="common-prompt", trial=trial), result)


@pytest.fixture
def people_url(tmp_path: Path) -> Iterator[str]:
    """The people's site, served in this process (a thread) on a port of its own."""
    _store_run(tmp_path / "runs", "webmcp-vs-pdf-1", {"pdf": ["passed", "failed", "parse_failure"]})
    sock = bind(0)
    config = uvicorn.Config(create_app(tmp_path / "runs", people=True), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.02)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)


def _browser_ready() -> None:
    problem = chromium_problem()
    if problem is None:
        return
    skip_outside_ci(f"WebMCP browser tests: {problem}")


def test_endpoints_answer_from_the_engine_and_refuse_bad_input(tmp_path: Path) -> None:
    client = TestClient(create_app())
    fit = client.post("/api/fit_random_effects", json={"exclude": ["s04"]}).json()
    assert fit["k"] == 18 and fit["excluded"] == ["s04"]
    assert client.post("/api/egger_test", json={}).json()["variant"] == "classic"
    assert client.get("/api/dataset").json()["k"] == 19
    for path, body, message in [
        ("/api/fit_random_effects", {"exclude": ["s99"]}, "unknown record"),
        ("/api/fit_random_effects", {"exclude": "s04"}, "list of record ids"),
        ("/api/egger_test", {"variant": "fancy"}, "'classic'"),
        ("/api/egger_test", {"other": 1}, "unknown argument"),
    ]:
        response = client.post(path, json=body)
        assert response.status_code == 400 and message in response.json()["error"]
    assert client.post("/api/egger_test", content=b"{nope").status_code == 400
    assert client.get("/people").status_code == 404  # the trial site has no people's page
    pdf = client.get("/benchmark-baseline.pdf")
    assert pdf.headers["origin-agent-cluster"] == "?1" and pdf.content.startswith(b"%PDF")


def test_the_score_endpoint_is_the_scorer(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path, people=True))
    for answer in ANSWERS:
        got = client.post("/api/score", json={"answer": answer}).json()
        want = score_answer(answer)
        assert (got["label"], got["reason"]) == (want.label, want.reason)
        assert [f["correct"] for f in got["fields"]] == [f.correct for f in want.fields]
    assert not list(tmp_path.iterdir())  # nothing pasted is stored


def test_living_evidence_says_no_runs_until_a_run_exists(tmp_path: Path) -> None:
    for runs_dir in (None, tmp_path / "missing", tmp_path):
        page = people_page(runs_dir)
        assert f'<p id="living-evidence-status">{NO_RUNS}</p>' in page
    _store_run(tmp_path, "webmcp-vs-pdf-2", {"pdf": ["passed", "passed"], "webmcp": ["failed"]})
    page = people_page(tmp_path)
    assert NO_RUNS not in page and "1 run(s) recorded" in page
    assert '<td class="kn">2/2</td>' in page and '<td class="kn">0/1</td>' in page
    assert "0.342 to 1.000" in page  # Wilson 95% for 2/2
    for limit in protocol_limits():
        assert limit.replace("'", "&#39;") in page
    assert XSS_IMG not in page and XSS_SCRIPT not in page  # stored text is escaped
    assert "&lt;img src=x onerror=" in page


def test_pasted_answers_in_the_browser_score_like_the_cli(people_url: str) -> None:
    _browser_ready()

    async def main() -> None:
        async with launch_chromium() as browser:
            page = await (await browser.new_context()).new_page()
            await page.goto(people_url + "/people")
            assert "1 run(s) recorded" in await page.locator("#living-evidence").inner_text()
            form = page.locator("form[data-condition=webmcp]")
            for answer in ANSWERS:
                await form.locator("textarea").fill(answer)
                await form.locator("button").click()
                label = form.locator(".score-label")
                await label.wait_for()
                want = score_answer(answer)
                assert await label.inner_text() == want.label
                assert await form.locator(".score-reason").inner_text() == want.reason
                cells = await form.locator("tbody tr td:last-child").all_inner_texts()
                assert cells == ["yes" if f.correct else "no" for f in want.fields]
                if f'"rule_outcome": {json.dumps(XSS_IMG)}' in answer:
                    assert "onerror" in await form.locator("table").inner_text()
            assert await form.locator("img").count() == 0
            assert await page.locator("#living-evidence img").count() == 0
            assert "onerror" in (await page.locator("#living-evidence").text_content() or "")
            await page.wait_for_timeout(300)  # give any injected handler time to fire
            assert await page.evaluate("window.__pwned") is None

    anyio.run(main)


def test_parse_failure_shows_as_parse_failure_not_zero(people_url: str) -> None:
    _browser_ready()

    async def main() -> None:
        async with launch_chromium() as browser:
            page = await (await browser.new_context()).new_page()
            await page.goto(people_url + "/people")
            form = page.locator("form[data-condition=pdf]")
            await form.locator("textarea").fill('{"overall": {"k": 19},}')
            await form.locator("button").click()
            await form.locator(".score-label").wait_for()
            assert await form.locator(".score-label").inner_text() == "parse failure"
            assert await form.locator("table").count() == 0
            assert "0/13" not in await form.inner_text()

    anyio.run(main)
