"""Sites a hosted engine can reach: another address, public origins, fixed ports, and slugs
no one can compute without the trial's key."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from pairbench import start_run
from pairbench._errors import SpecError
from pairbench.studies.attribution_reliability import STUDY
from pairbench.studies.attribution_reliability.site import (
    SiteBinding,
    serve_case,
    slug_for,
    trial_key,
)
from studies.attribution_reliability.hosted import serve_engine, serve_proxy

FIXTURE = "cp01-restaurant-tables"
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _status(url: str) -> int | str:
    try:
        with _DIRECT.open(url, timeout=10) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError as exc:
        return type(exc).__name__


def _free_ports(host: str, count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _problem(**values: object) -> str:
    with pytest.raises(ValueError) as caught:
        SiteBinding.model_validate(values)
    return str(caught.value)


def test_a_binding_that_cannot_be_advertised_is_refused() -> None:
    assert "binds every interface" in _problem(host="0.0.0.0")
    assert "not an IP address" in _problem(host="fixture.local")
    assert "go together" in _problem(public_url="https://a.example.org")
    assert "has a path" in _problem(
        public_url="https://a.example.org/bench", other_public_url="https://b.example.org"
    )
    assert "another origin" in _problem(
        public_url="https://a.example.org", other_public_url="https://a.example.org/"
    )
    assert "port and other_port" in _problem(port=8801)
    SiteBinding(
        host="0.0.0.0", public_url="https://a.example.org", other_public_url="https://b.example.org"
    )


def test_env_references_are_read_when_the_site_starts() -> None:
    binding = SiteBinding(
        public_url="${env:AR_PUBLIC}",
        other_public_url="${env:AR_OTHER}",
        port=8801,
        other_port=8802,
    )
    with pytest.raises(SpecError) as caught:
        binding.resolved({"AR_PUBLIC": "https://a.example.org"})
    assert caught.value.problems == [
        "agent.settings.sites.other_public_url: reads the runner's AR_OTHER, which is not "
        "set. Fix: export AR_OTHER=... before running"
    ]
    env = {"AR_PUBLIC": "https://a.example.org", "AR_OTHER": "https://b.example.org"}
    resolved = binding.resolved(env)
    assert resolved.origins(1, 2) == ("https://a.example.org", "https://b.example.org")
    assert (resolved.port, resolved.other_port) == (8801, 8802)
    with pytest.raises(SpecError, match="has a path"):
        binding.resolved({**env, "AR_OTHER": "https://b.example.org/x"})


def test_the_slug_needs_the_trial_key(tmp_path: Path) -> None:
    # Anyone holding the published experiment knows every trial seed: without the key, the
    # slug of a start URL must not lead back to its trial.
    key = trial_key(tmp_path)
    assert trial_key(tmp_path) == key  # every arm and re-run of the trial reads the same key
    assert trial_key(tmp_path / "other") != key
    assert (tmp_path / ".site-key").stat().st_mode & 0o077 == 0
    slug = slug_for(7, key)
    assert len(slug) == 26 and slug == slug_for(7, key)
    assert slug not in {slug_for(7, b""), slug_for(8, key), slug_for(7, key, "arm-b")}
    with serve_case(FIXTURE, 7) as first, serve_case(FIXTURE, 7) as second:
        assert first.slug != second.slug  # no key given: a fresh one each time


def test_a_second_loopback_address_with_fixed_ports_serves_sites_by_slug() -> None:
    main, other = _free_ports("127.0.0.2", 2)
    binding = SiteBinding(host="127.0.0.2", port=main, other_port=other)
    with serve_case(FIXTURE, 1, binding=binding) as a, serve_case(FIXTURE, 2, binding=binding) as b:
        assert a.start_url.startswith(f"http://127.0.0.2:{main}/v/")
        assert a.other_origin == f"http://127.0.0.2:{other}"
        assert _status(a.start_url) == 200 and _status(b.start_url) == 200
        assert _status(f"http://127.0.0.2:{main}/v/{'a' * 26}") == 404
        assert _status(f"http://127.0.0.1:{main}/v/{a.slug}") == "URLError"  # not on .1
        assert [h.path for h in a.audit] == [f"/v/{a.slug}"]  # each site its own audit
    assert _status(f"http://127.0.0.2:{main}/v/{a.slug}") == "URLError"  # closed after


@pytest.mark.whole_run
def test_a_hosted_engine_reaches_the_sites_only_through_the_public_url(tmp_path: Path) -> None:
    # The sites listen on 127.0.0.2 at fixed ports; a reverse proxy on 127.0.0.3 forwards
    # two ports there and is advertised as the public origins; the engine, on 127.0.0.4,
    # is told only the public URL.
    main, other = _free_ports("127.0.0.2", 2)
    with (
        serve_proxy("127.0.0.3", ("127.0.0.2", main)) as (public, proxied),
        serve_proxy("127.0.0.3", ("127.0.0.2", other)) as (other_public, _),
        serve_engine("127.0.0.4") as (engine_url, seen),
    ):
        sites = {
            "host": "127.0.0.2", "port": main, "other_port": other,
            "public_url": "${env:AR_TEST_PUBLIC_URL}", "other_public_url": other_public,
        }  # fmt: skip
        experiment = _experiment(tmp_path, {"engine": "http", "url": engine_url}, sites)
        monkeypatch = pytest.MonkeyPatch()
        monkeypatch.setenv("AR_TEST_PUBLIC_URL", public)
        try:
            outcome = start_run(experiment, tmp_path / "runs", run_seed=4)
        finally:
            monkeypatch.undo()
    assert outcome.status == "complete", outcome.status
    (request,) = seen.requests
    assert request["start_url"].startswith(f"{public}/v/")
    slug = request["start_url"].rsplit("/", 1)[1]
    assert seen.fetched[0] == (request["start_url"], 200)
    # The preflight and the engine's pages went through the proxy, and reached the site.
    assert proxied.forwarded[0] == f"/v/{slug}"  # the preflight
    assert len(proxied.forwarded) == 1 + len(seen.fetched) >= 3
    assert {status for _, status in seen.fetched} == {200}
    result = json.loads(next((outcome.run_dir / "results").rglob("*.json")).read_bytes())
    evidence = json.loads(result["final_answer"])
    assert evidence["failure"] is None and evidence["slug"] == slug
    assert evidence["audit_paths"][:2] == ["/", "/"]
    assert len(evidence["audit_paths"]) == len(proxied.forwarded)


def _experiment(tmp_path: Path, engine: dict[str, object], sites: dict[str, object]) -> Path:
    data = yaml.safe_load((STUDY.root / "experiment.yaml").read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "c-p01"]
    settings = {"engine": engine, "sites": sites}
    data["agent"] = {"adapter": "attribution-engine", "settings": settings}
    data["budget"].update({"start_stagger_s": 0, "concurrency": 1})
    root = tmp_path / "study"
    root.mkdir()
    for name in ("cases.json", "packages.json", "protocol.md"):
        (root / name).write_bytes((STUDY.root / name).read_bytes())
    (root / "prompts").mkdir()
    for prompt in (STUDY.root / "prompts").iterdir():
        (root / "prompts" / prompt.name).write_bytes(prompt.read_bytes())
    path = root / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
