"""The view's pages over real and written runs: what each shows, 404s, and that browsing
every page changes nothing in any run folder."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from httpx2 import Response
from starlette.testclient import TestClient

from helpers.view_runs import PAYLOADS, PORT, ViewRuns, snapshot, write_run
from pairbench._errors import RunDirError
from pairbench.view import create_app


def every_page(view_runs: ViewRuns) -> list[str]:
    """Every page of every run, as a user clicking through the whole view would open them.

    One report page only: rendering a report's plots takes a second or more, and
    ``test_browser`` opens every run's report in Chromium.
    """
    tiny_a, tiny_b = view_runs.tiny
    pages = [
        "/",
        "/compare",
        f"/compare?a={tiny_a}&b={tiny_b}",
        f"/compare?a={tiny_a}&b={view_runs.hostile.run_id}&treatment=arm",
        f"/runs/{tiny_a}/report",
        f"/runs/{view_runs.live.run_id}/report",  # no summary yet: says so
        f"/runs/{view_runs.live.run_id}/trials/b/t2/1",  # in flight: no record yet
    ]
    for run in sorted(p.name for p in view_runs.runs.iterdir() if (p / "run.json").exists()):
        base = f"/runs/{run}"
        pages += [base, f"{base}/status.json", f"{base}/trials"]
        pages += [f"{base}/trials?outcome={o}" for o in ("passed", "infra", "interrupted")]
        pages.append(f"{base}/trials?validity=invalid&arm=a")
        results = sorted((view_runs.runs / run / "results").rglob("*.json"))
        for result in results if run not in view_runs.tiny else results[:1]:
            arm, task, name = result.relative_to(view_runs.runs / run / "results").parts
            pages.append(f"{base}/trials/{arm}/{task}/{name.removesuffix('.json')}")
    return pages


@dataclass(frozen=True)
class Browsed:
    """Every page's response, and the run folders before and after they were browsed."""

    pages: dict[str, Response]
    before: dict[str, tuple[bytes, int]]
    after: dict[str, tuple[bytes, int]]


@pytest.fixture(scope="module")
def browsed(view_runs: ViewRuns) -> Browsed:
    before = snapshot(view_runs.runs)
    client = TestClient(create_app(view_runs.runs, port=PORT), base_url=f"http://127.0.0.1:{PORT}")
    pages = {page: client.get(page) for page in every_page(view_runs)}
    return Browsed(pages, before, snapshot(view_runs.runs))


def test_every_page_answers(browsed: Browsed) -> None:
    failed = {page: r.status_code for page, r in browsed.pages.items() if r.status_code != 200}
    assert failed == {}


def test_browsing_every_page_writes_nothing_into_any_run(browsed: Browsed) -> None:
    assert sorted(browsed.after) == sorted(browsed.before), "files or folders appeared or went"
    changed = [name for name in browsed.before if browsed.before[name] != browsed.after[name]]
    assert changed == []


def test_hostile_text_is_escaped_on_every_page(browsed: Browsed, view_runs: ViewRuns) -> None:
    for page, response in browsed.pages.items():
        text = response.text
        for payload in PAYLOADS:
            if "<" in payload:  # the raw markup never reaches a page
                assert payload not in text, (page, payload)
        # javascript: stays text: no link or source is ever built from agent text.
        assert not re.search(r"(href|src|action)=\"\s*javascript", text, re.I), page
    trial = browsed.pages[f"/runs/{view_runs.hostile.run_id}/trials/b/t1/0"].text
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in trial
    assert "javascript:window.__xss=1" in trial  # shown, as text


def test_the_runs_list_shows_every_run_with_its_status_and_counts(
    client: TestClient, view_runs: ViewRuns
) -> None:
    text = client.get("/").text
    for run in [*view_runs.tiny, view_runs.hostile.run_id, view_runs.live.run_id]:
        assert f'href="/runs/{run}"' in text
    row = re.search(rf"{view_runs.live.run_id}.*?</tr>", text, re.S)
    assert row and "running" in row[0] and "7 / 8" in row[0] and "1 in flight" in row[0]
    row = re.search(rf"{view_runs.tiny[0]}.*?</tr>", text, re.S)
    assert row and "complete" in row[0] and "4 / 4" in row[0] and "passed 4" in row[0]


def test_a_run_page_frames_its_report_and_a_live_run_polls(
    client: TestClient, view_runs: ViewRuns
) -> None:
    done = client.get(f"/runs/{view_runs.tiny[0]}").text
    assert f'<iframe class="report" src="/runs/{view_runs.tiny[0]}/report" sandbox' in done
    assert "data-poll" not in done
    report = client.get(f"/runs/{view_runs.tiny[0]}/report")
    assert "pairbench report" in report.text
    no_summary = client.get(f"/runs/{view_runs.tiny[1]}").text
    assert "<iframe" not in no_summary and "pairbench report" in no_summary
    live = client.get(f"/runs/{view_runs.live.run_id}").text
    poll = f"/runs/{view_runs.live.run_id}/status.json"
    assert f'data-poll="{poll}"' in live and '<meta http-equiv="refresh"' in live
    status = client.get(poll).json()
    assert status["live"] is True and status["version"] in live


def test_the_trial_browser_filters_by_arm_task_outcome_and_validity(
    client: TestClient, view_runs: ViewRuns
) -> None:
    base = f"/runs/{view_runs.hostile.run_id}/trials"

    def rows(query: str) -> list[str]:
        text = client.get(f"{base}?{query}").text
        return re.findall(rf'href="{base}/([^"]+)" class="chip', text)

    assert len(rows("")) == 8
    assert rows("arm=b&task=t1") == ["b/t1/0", "b/t1/1"]
    assert rows("outcome=infra") == ["b/t1/0"]  # its kept attempt
    assert rows("outcome=interrupted") == ["a/t2/1"]
    assert rows("outcome=agent_error") == ["b/t2/1"]
    assert all(row.endswith("/1") for row in rows("validity=invalid"))


def test_a_trial_page_shows_every_attempt_transcript_and_audit_log(
    client: TestClient, view_runs: ViewRuns
) -> None:
    text = client.get(f"/runs/{view_runs.hostile.run_id}/trials/b/t1/0").text
    assert "Final attempt" in text and "Kept infra attempt" in text
    assert "results/b/t1/0.json" in text and "infra/b/t1/0.1.json" in text
    assert "transcripts/b/t1/0.jsonl" in text and "infra/b/t1/0.1.jsonl" in text
    assert "fixtures/b/t1/0.2/audit.jsonl" in text and "fixtures/b/t1/0.1/audit.jsonl" in text
    assert text.count('<span class="kind">tool_call</span>') == 4  # two per transcript
    assert '<span class="latency">42.0 ms</span>' in text
    live = client.get(f"/runs/{view_runs.live.run_id}/trials/b/t2/1").text
    assert "Running attempt" in live and "still being written" in live


def test_compare_shows_the_paired_view_or_why_it_is_invalid(
    client: TestClient, view_runs: ViewRuns
) -> None:
    a, b = view_runs.tiny
    valid = client.get(f"/compare?a={a}&b={b}").text
    assert "Paired comparison" in valid and "Invalid comparison" not in valid
    assert re.search(r"<td>a</td><td class=\"num\">2</td>", valid)
    invalid = client.get(f"/compare?a={a}&b={view_runs.hostile.run_id}").text
    assert "Invalid comparison" in invalid and "<code>run_seed</code>" in invalid


@pytest.mark.parametrize(
    "page",
    [
        "/nope",
        "/runs/no-such-run",
        "/runs/no-such-run/trials",
        "/runs/{run}/trials/c/t1/0",
        "/runs/{run}/trials/a/t9/0",
        "/runs/{run}/trials/a/t1/99",
        "/runs/{run}/trials?arm=c",
        "/runs/{run}/trials?outcome=great",
        "/runs/{run}/trials?page=0",
        "/compare?a=no-such-run&b={run}",
        "/compare?a={run}&b={run}&treatment=anything",
        "/static/nope.css",
    ],
)
def test_what_does_not_exist_is_a_404(client: TestClient, view_runs: ViewRuns, page: str) -> None:
    response = client.get(page.format(run=view_runs.hostile.run_id))
    assert response.status_code == 404
    assert "content-security-policy" in response.headers


@pytest.mark.parametrize(
    "page",
    [
        "/runs/%2e%2e",
        "/runs/..%2F..%2Fetc",
        "/runs/%2Fetc",
        "/runs/.hidden",
        "/runs/{run}/trials/..%2F..%2F..%2Frun.json/t1/0",
        "/runs/{run}/trials/a/..%2F..%2Ft1/0",
        "/runs/{run}/trials/a/%2e%2e/0",
        "/static/..%2F_app.py",
        "/static/%2e%2e/_app.py",
    ],
)
def test_a_path_out_of_a_run_is_refused(client: TestClient, view_runs: ViewRuns, page: str) -> None:
    response = client.get(page.format(run=view_runs.hostile.run_id))
    assert response.status_code == 404, response.text[:300]
    assert "def create_app" not in response.text and "run_id" not in response.text


def test_a_symlink_out_of_runs_dir_is_neither_listed_nor_served(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.json").write_text('{"run_id": "x", "experiment": {"id": "x"}}')
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "escape").symlink_to(outside)
    client = TestClient(create_app(runs, port=8765), base_url="http://127.0.0.1:8765")
    assert "escape" not in client.get("/").text
    assert client.get("/runs/escape").status_code == 404


def test_a_missing_runs_dir_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match=r"no such folder\. Fix: pass the folder"):
        create_app(tmp_path / "nope")
    (tmp_path / "file").write_text("")
    with pytest.raises(RunDirError, match="not a folder"):
        create_app(tmp_path / "file")


def test_a_run_folder_given_as_runs_dir_names_its_parent(view_runs: ViewRuns) -> None:
    run = view_runs.runs / view_runs.tiny[0]
    with pytest.raises(RunDirError, match=f"pairbench view {view_runs.runs}"):
        create_app(run)


def test_templates_never_mark_text_safe() -> None:
    templates = Path(__file__).parents[2] / "src" / "pairbench" / "view" / "templates"
    for template in templates.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup", text), template.name


def test_a_damaged_run_is_named_with_its_fix_not_a_traceback(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    torn = write_run(runs, "torn-20261201T100000Z-aaaaaa", text="x").path
    lines = (torn / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (torn / "journal.jsonl").write_bytes(b"".join([lines[0], b"{not json\n", *lines[1:]]))
    bad_record = write_run(runs, "bad-20261201T100000Z-bbbbbb", text="x").path
    (bad_record / "results/a/t1/0.json").write_text("{}", encoding="utf-8")
    (runs / "nojson-20261201T100000Z-cccccc").mkdir()
    (runs / "nojson-20261201T100000Z-cccccc" / "run.json").write_text("[1]", encoding="utf-8")
    client = TestClient(create_app(runs, port=PORT), base_url=f"http://127.0.0.1:{PORT}")
    listing = client.get("/")
    assert listing.status_code == 200
    assert "journal.jsonl:2: not a JSON line" in listing.text
    assert "not a pairbench run.json" in listing.text and "Fix: restore it" in listing.text
    # The browser lists from the journal's rows, the record reports count from: a damaged
    # result file is named on its trial's page; a damaged journal on the browser's.
    assert client.get(f"/runs/{bad_record.name}/trials").status_code == 200
    trials = client.get(f"/runs/{torn.name}/trials")
    assert trials.status_code == 500 and "journal.jsonl:2: not a JSON line" in trials.text
    assert "Traceback" not in trials.text
    trial = client.get(f"/runs/{bad_record.name}/trials/a/t1/0").text
    assert "0.json: not a readable pairbench record" in trial  # the attempt says, the page stands
