"""The study's site, in process and without a browser: seeded pages per trial, a store and
an audit log in the attempt's fixture dir, and nothing one trial does seen by another."""

from __future__ import annotations

import contextvars
import json
import subprocess
import sys
from pathlib import Path

import httpx

from pairbench.studies.mcp_transports_playwright import SITE_FIXTURE, generate
from pairbench.studies.mcp_transports_playwright._fixture import read_files

CHROMIUM_HEADERS = {
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/156.0.0.0 Safari/537.36",
    "sec-fetch-mode": "navigate",
}
"""What Chromium sends with every request (the site counts these as the browser's)."""


def test_content_is_seeded_and_each_attempt_gets_its_own_url() -> None:
    assert generate(5) == generate(5)
    assert generate(5) != generate(6)
    first = contextvars.copy_context().run(SITE_FIXTURE.content, 5)
    second = contextvars.copy_context().run(SITE_FIXTURE.content, 5)
    # Both arms of a pair (and a retry) see the same shop, at URLs of their own.
    assert {k: v for k, v in first.items() if k != "site"} == generate(5)
    assert first["site"]["url"] != second["site"]["url"]
    assert first["site"]["url"].startswith("http://127.0.0.1:")
    assert first["site"]["url"].endswith(f"/t/{first['site']['token']}/")


def test_pages_serve_the_seeded_values_escaped() -> None:
    content = SITE_FIXTURE.content(21)
    base = content["site"]["url"]
    with httpx.Client(headers=CHROMIUM_HEADERS) as client:
        home = client.get(base).text
        catalog = client.get(base + "catalog").text
        news = client.get(base + "news").text
        account = client.get(base + "account").text
        assert client.get(base + "nope").status_code == 404
        assert client.get(base.replace(content["site"]["token"], "0-0")).status_code == 404
    assert f"<title>{content['target']['title']}</title>" in home
    cell = content["target"]
    assert f'<tr data-sku="{cell["cell_sku"]}">' in catalog
    assert content["lure"]["marker"] in catalog
    assert content["injection"]["marker"] in news
    assert content["canary"]["value"] in account
    assert "<script" not in home + catalog + news + account


def test_a_submission_lands_in_its_own_trials_store_and_audit(tmp_path: Path) -> None:
    mine, theirs = contextvars.copy_context(), contextvars.copy_context()
    content = mine.run(SITE_FIXTURE.content, 3)
    other = theirs.run(SITE_FIXTURE.content, 3)
    form = content["target"]["form"]
    with httpx.Client(headers=CHROMIUM_HEADERS, follow_redirects=True) as client:
        sent = client.post(content["site"]["url"] + "contact", data=form)
    assert sent.status_code == 200 and "received as #1" in sent.text  # after the 303
    state = mine.run(SITE_FIXTURE.read_state, tmp_path / "mine")
    assert state.store["submissions"] == [{**form, "browser": True}]
    assert [e.tool for e in state.audit] == ["submit_contact"]
    assert state.audit[0].arguments["browser"] is True
    # The files are in the attempt's fixture dir, and the same seed's other trial is clean.
    assert read_files(tmp_path / "mine") == state
    assert json.loads((tmp_path / "mine" / "store.json").read_text("utf-8"))["submissions"]
    untouched = theirs.run(SITE_FIXTURE.read_state, tmp_path / "theirs")
    assert untouched.store["submissions"] == [] and untouched.audit == []
    # A request after binding is appended to the same files.
    with httpx.Client(headers=CHROMIUM_HEADERS) as client:
        client.get(other["site"]["url"] + "reward")
    assert read_files(tmp_path / "theirs").store["reward_claims"] == 1


def test_a_request_that_is_not_the_browsers_is_marked_off_surface(tmp_path: Path) -> None:
    ctx = contextvars.copy_context()
    content = ctx.run(SITE_FIXTURE.content, 4)
    httpx.get(content["site"]["url"] + "account")
    (entry,) = ctx.run(SITE_FIXTURE.read_state, tmp_path).audit
    assert entry.arguments["browser"] is False
    assert entry.arguments["user_agent"].startswith("python-httpx")
    assert "off_surface" in entry.arguments


def test_read_state_without_a_trial_reads_the_folder_only(tmp_path: Path) -> None:
    state = contextvars.Context().run(SITE_FIXTURE.read_state, tmp_path)
    assert state.store == {} and state.audit == []


def test_the_site_runs_as_a_module_and_prints_its_trial_url(tmp_path: Path) -> None:
    url_file = tmp_path / "url"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench.studies.mcp_transports_playwright.site", "--seed", "7"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PAIRBENCH_URL_FILE": str(url_file), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith(url_file.read_text("utf-8") + "/t/")
        page = httpx.get(url, headers=CHROMIUM_HEADERS, timeout=10).text
        assert generate(7)["target"]["title"] in page
    finally:
        proc.terminate()
        proc.wait(timeout=10)
