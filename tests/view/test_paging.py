"""The trial browser at scale: server-side pages and filters over the run's index, and a
transcript read a part at a time. Through the real app (Starlette's client) on the shared
RUNS_DIR, plus a run with a hostile trial name and one with a transcript too long for a page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from helpers.view_runs import PAYLOADS, PORT, ViewRuns, write_run
from pairbench.store import Journal
from pairbench.store._events import AttemptFinished
from pairbench.store._load_run import read_run_info
from pairbench.store._records import TrialResult
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir
from pairbench.view import create_app
from pairbench.view._index import build_index
from pairbench.view._listing import TrialFilter, trial_listing
from pairbench.view._timeline import MAX_LINE, PART_EVENTS


def test_pages_cover_every_trial_once_in_order(view_runs: ViewRuns) -> None:
    run_dir = RunDir.open(view_runs.hostile.path)
    index = build_index(run_dir, read_run_info(run_dir), ended=True)
    seen = []
    for page in (1, 2, 3):
        listing = trial_listing(index, TrialFilter(page=page), page_size=3)
        assert listing.pages == 3 and listing.total == 8
        seen += [(line.arm, line.task, line.trial) for line in listing.lines]
    assert seen == [(a, t, n) for a in "ab" for t in ("t1", "t2") for n in (0, 1)]


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("page=2", 404, "no page 2: these trials fill 1 page(s)"),
        ("page=abc", 404, "pages are numbered from 1"),
        ("page=-1", 404, "pages are numbered from 1"),
        ("page=99999999999999999999", 404, "pages are numbered from 1"),
        ("q=" + "x" * 201, 404, "at most 200"),
        ("q=no-such-text", 200, "No trial matches."),
        ("outcome=timeout", 200, "0 of 8 trials match"),
    ],
)
def test_paging_past_the_end_a_bad_page_and_a_filter_with_no_match(
    client: TestClient, view_runs: ViewRuns, query: str, status: int, says: str
) -> None:
    page = client.get(f"/runs/{view_runs.hostile.run_id}/trials?{query}")
    assert page.status_code == status and says in page.text


def test_the_text_filter_and_trials_json(client: TestClient, view_runs: ViewRuns) -> None:
    base = f"/runs/{view_runs.live.run_id}/trials.json"
    everything = client.get(base).json()
    assert everything["matched"] == 8 and everything["pages"] == 1  # 7 results and a not_run
    not_run = client.get(base, params={"outcome": "not_run"}).json()["trials"]
    assert [(t["arm"], t["task"], t["trial"]) for t in not_run] == [("b", "t2", 1)]
    by_text = client.get(base, params={"q": "LIVE TEXT", "arm": "a"}).json()
    assert by_text["matched"] == 4 and {t["arm"] for t in by_text["trials"]} == {"a"}
    kept = client.get(base, params={"outcome": "infra"}).json()["trials"]
    assert [(t["arm"], t["task"], t["trial"], t["kept"]) for t in kept] == [
        ("b", "t1", 0, ["infra"])
    ]
    assert kept[0]["url"] == f"/runs/{view_runs.live.run_id}/trials/b/t1/0"


def test_a_hostile_trial_name_is_listed_escaped_and_never_linked(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    written = write_run(runs, "names-20261201T100000Z-aaaaaa", text="x")
    hostile = PAYLOADS[0]
    record = TrialResult.model_validate_json(
        (written.path / "results/a/t1/0.json").read_bytes()
    ).model_copy(update={"task": hostile, "reason": hostile})
    journal = Journal(written.path / "journal.jsonl")
    journal.append(
        AttemptFinished(key=f"a/{hostile}/0", attempt=1, outcome="passed",
                        result="results/a/t1/0.json", row=trial_row(record, kept=False))
    )  # fmt: skip
    journal.close()
    client = TestClient(create_app(runs, port=PORT), base_url=f"http://127.0.0.1:{PORT}")
    for url in (f"/runs/{written.path.name}/trials", f"/runs/{written.path.name}"):
        page = client.get(url, params={"q": hostile[:12]} if url.endswith("trials") else None)
        assert page.status_code == 200
        assert hostile not in page.text  # only its escaped form is
        assert hostile.replace("<", "&lt;").replace(">", "&gt;")[:20] in page.text
    listed = client.get(f"/runs/{written.path.name}/trials.json", params={"task": hostile})
    assert listed.json()["trials"][0]["url"] is None


def test_a_long_transcript_comes_a_part_at_a_time(tmp_path: Path, view_runs: ViewRuns) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(view_runs.hostile.path, runs / view_runs.hostile.run_id)
    run = runs / view_runs.hostile.run_id
    lines = [{"t": 0.0, "kind": "message", "text": "<b>" + "x" * (MAX_LINE + 10)}]
    lines += [{"t": n / 100, "kind": "message", "text": f"event {n}"} for n in range(450)]
    (run / "transcripts/a/t1/0.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    client = TestClient(create_app(runs, port=PORT), base_url=f"http://127.0.0.1:{PORT}")
    base = f"/runs/{run.name}/trials/a/t1/0"
    page = client.get(base).text
    assert page.count('<li class="event') == PART_EVENTS and "event 198" in page
    assert f"a line of {MAX_LINE + 55:,} bytes" in page and "<b>" not in page.split("<main")[-1]
    parts, offset, last_t = 1, None, None
    while (found := _more(page)) is not None:
        offset, last_t = found
        query = {"kind": "final", "attempt": "1", "offset": offset, "t": last_t, "part": "1"}
        page = client.get(f"{base}/transcript", params=query).text
        parts += 1
    assert parts == 3 and "event 449" in page and "<html" not in page
    assert "+0.010" in page  # the first gap of a part counts from the part before
    for bad in ({"kind": "x", "attempt": "1"}, {"kind": "final", "attempt": "2"},
                {"kind": "final", "attempt": "1", "offset": "99999999"}):  # fmt: skip
        assert client.get(f"{base}/transcript", params=bad).status_code == 404


def _more(html: str) -> tuple[str, str] | None:
    import re
    from html import unescape

    found = re.search(r'<a class="more" href="([^"]+)"', html)
    if found is None:
        return None
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(unescape(found[1])).query)
    return query["offset"][0], query["t"][0]
