"""Around each attempt of a run with ``proxy:``: the server's preflight, its ``/metrics``
against what the proxy forwarded (a direct client is interference), and a start-up 503 that
makes the attempt infra, kept and replaced. Real subprocess runtimes, the Chat Completions
double's llama.cpp endpoints on loopback."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pairbench import start_run
from pairbench._errors import RunRefused
from pairbench.report.summary._build import summarize
from pairbench.store import load_table
from pairbench.testing.chat_double import start_chat_double

pytestmark = pytest.mark.whole_run  # whole runs against real loopback servers

# One chat request through the proxy; with an argument, one more straight to that server.
RUNTIME = """
import json, os, sys, urllib.request
sys.stdin.read()
def ask(base):
    body = {"model": "m", "max_tokens": 4, "temperature": 1.0,
            "messages": [{"role": "user", "content": "hi"}]}
    request = urllib.request.Request(base + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).read()
ask(os.environ["RUNTIME_BASE_URL"])
if len(sys.argv) > 1:
    ask(sys.argv[1] + "/v1")
print("ok")
"""
LLAMA = {"llama_cpp": True, "timings": True}


def _experiment(
    root: Path, upstream: str, extra: dict[str, list[str]], *, campaign: bool = False
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "p.md").write_text("Go.\n", encoding="utf-8")
    (root / "runtime.py").write_text(RUNTIME, encoding="utf-8")

    def agent(arm: str) -> str:
        argv = ["python3", str(root / "runtime.py"), *extra.get(arm, [])]
        return json.dumps({"adapter": "command", "settings": {"command": argv}})

    tasks = ("t0", "t1") if campaign else ("t0",)
    listed = "\n".join(
        f"  - {{id: {t}, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}"
        for t in tasks
    )
    order = "order: {block: campaign}\n" if campaign else "trials: 1\n"
    path = root / "experiment.yaml"
    path.write_text(
        f"id: window\nversion: '1'\n{order}budget: {{concurrency: 1}}\n"
        f'proxy: {{upstream: "{upstream}", env: RUNTIME_BASE_URL}}\n'
        f"agent: {agent('a')}\narms:\n  a: {{agent: {agent('a')}}}\n  b: {{agent: {agent('b')}}}\n"
        f"tasks:\n{listed}\n",
        encoding="utf-8",
    )
    return path


def _lines(run_dir: Path) -> dict[str, dict[str, Any]]:
    text = (run_dir / "proxy" / "interference.jsonl").read_text(encoding="utf-8")
    return {line["label"]: line for line in map(json.loads, text.splitlines())}


def test_a_client_calling_the_model_server_directly_mid_scenario_is_interference(
    tmp_path: Path,
) -> None:
    with start_chat_double(LLAMA) as double:
        exp = _experiment(tmp_path / "exp", double.url, {"b": [double.url]})
        run = start_run(exp, tmp_path / "runs", run_seed=2)
    assert run.status == "complete"
    verdicts = _lines(run.run_dir)
    assert verdicts["a/t0/0#1"]["status"] == "clean"
    assert len(verdicts["a/t0/0#1"]["host_load"]) == 3  # the machine's load, beside it
    assert verdicts["b/t0/0#1"]["status"] == "interference"
    assert "but the proxy forwarded" in verdicts["b/t0/0#1"]["reason"]
    assert run.interference == {"clean": 1, "interference": 1}
    transcript = run.run_dir / "transcripts" / "b" / "t0" / "0.jsonl"
    events = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    [event] = [e for e in events if e["kind"] == "interference"]
    assert event["status"] == "interference" and event["label"] == "b/t0/0#1"


def test_a_start_up_503_is_infra_kept_replaced_and_the_views_differ(tmp_path: Path) -> None:
    with start_chat_double({**LLAMA, "unavailable_on": [1]}) as double:
        exp = _experiment(tmp_path / "exp", double.url, {}, campaign=True)
        run = start_run(exp, tmp_path / "runs", stage="screening", run_seed=1)
    assert run.status == "complete"
    [kept] = list((run.run_dir / "infra").rglob("*.json"))
    record = json.loads(kept.read_text(encoding="utf-8"))
    arm = record["arm"]
    assert (record["task"], record["attempt"], record["outcome"]) == ("t0", 1, "infra")
    assert "503" in record["reason"]
    assert kept.with_suffix(".jsonl").is_file()  # its transcript is kept with it
    assert {r.outcome for r in run.results} == {"passed"}  # the retry replaced it
    assert {r.attempt for r in run.results if (r.arm, r.task) == (arm, "t0")} == {2}
    loaded = load_table(run.run_dir, use_cache=False)
    summary = summarize(loaded.info, loaded.table, bootstrap_reps=200)
    arms = {a["arm"]: a for a in summary["arms"]}
    assert (arms[arm]["success"]["k"], arms[arm]["success"]["n"]) == (2, 2)
    assert arms[arm]["success_without_replacements"]["k"] == 1  # the infra first attempt
    other = "b" if arm == "a" else "a"
    assert arms[other]["success_without_replacements"]["k"] == 2
    assert summary["replaced_attempts"] == 1


def test_a_server_failing_its_preflight_refuses_the_run_before_anything_is_made(
    tmp_path: Path,
) -> None:
    with start_chat_double({**LLAMA, "slots": 2}) as double:
        exp = _experiment(tmp_path / "exp", double.url, {})
        with pytest.raises(RunRefused, match="total_slots is 2"):
            start_run(exp, tmp_path / "runs", run_seed=2)
        assert double.exchanges == []
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_scripted_model_servers_counters_tell_a_direct_client(tmp_path: Path) -> None:
    from pairbench.proxy import RecordingProxy, interference, preflight, read_metrics
    from pairbench.studies.runtime_revision_ab import serve_model

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "AR-001"}]})

    def ask(base: str) -> None:
        headers = {"Content-Type": "application/json"}
        request = urllib.request.Request(base + "/chat/completions", body.encode(), headers)
        urllib.request.urlopen(request, timeout=30).read()

    with serve_model() as server:
        upstream = server.base_url.removesuffix("/v1")
        assert preflight(upstream).ok
        with RecordingProxy(upstream, tmp_path / "exchanges.jsonl") as proxy:
            before = read_metrics(upstream)
            ask(proxy.url + "/v1")
            assert interference(before, read_metrics(upstream), proxy.records()).status == "clean"
            before = read_metrics(upstream)
            ask(proxy.url + "/v1")
            ask(server.base_url)  # around the proxy
            verdict = interference(before, read_metrics(upstream), proxy.records())
    assert verdict.status == "interference"
    assert "prompt_tokens_total rose by" in verdict.reason
