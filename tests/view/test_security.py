"""The guard: only this machine's Host, only reading methods, and the security headers on
every response, errors included."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from helpers.view_runs import PORT, ViewRuns
from pairbench.view._security import CSP, REPORT_CSP


def test_every_kind_of_response_carries_the_policy_and_nosniff(
    client: TestClient, view_runs: ViewRuns
) -> None:
    run = view_runs.live.run_id
    for page in ("/", f"/runs/{run}", f"/runs/{run}/status.json", "/static/view.js", "/nope"):
        response = client.get(page)
        assert response.headers["content-security-policy"] == CSP, page
        assert response.headers["x-content-type-options"] == "nosniff", page
        assert response.headers["referrer-policy"] == "no-referrer", page
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP


def test_the_report_page_has_its_own_policy_with_no_script_and_a_sandbox(
    client: TestClient, view_runs: ViewRuns
) -> None:
    response = client.get(f"/runs/{view_runs.live.run_id}/report")
    assert response.headers["content-security-policy"] == REPORT_CSP
    assert "script-src" not in REPORT_CSP and REPORT_CSP.endswith("sandbox")
    assert "no summary.json yet" in response.text


def test_static_files_are_served_with_their_types(client: TestClient) -> None:
    assert client.get("/static/view.css").headers["content-type"].startswith("text/css")
    assert "javascript" in client.get("/static/view.js").headers["content-type"]


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        f"evil.example:{PORT}",
        "127.0.0.1",
        f"127.0.0.1:{PORT + 1}",
        f"127.0.0.1.evil.example:{PORT}",
        f"localhost:{PORT}.evil.example",
        f"[::1]:{PORT}",
        f"0.0.0.0:{PORT}",
        "",
    ],
)
def test_a_foreign_host_is_refused(client: TestClient, host: str) -> None:
    # DNS rebinding: evil.example resolved to 127.0.0.1 still says Host: evil.example.
    response = client.get("/", headers={"host": host})
    assert response.status_code == 400
    assert response.headers["content-security-policy"] == CSP
    assert "evil" not in response.text  # the refusal never echoes what was asked for


@pytest.mark.parametrize("host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}"])
def test_this_machines_host_is_served(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_only_reading_methods_are_served(client: TestClient, method: str) -> None:
    response = client.request(method, "/")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


def test_head_is_served(client: TestClient) -> None:
    assert client.head("/").status_code == 200
