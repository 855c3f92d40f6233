"""``proxy:`` in a run: the runtime's model requests go through pairbench's recording proxy;
each attempt's seeding is proven from the bodies sent (a seed dropped on one retry is an
unseeded trial, named), sampling is ``sent`` or ``server_default`` per parameter, and run.json
holds the server's identity. Against the Chat Completions double with llama.cpp's endpoints,
and against the real llama-server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.common import cli, cli_here, skip_outside_ci
from pairbench import start_run
from pairbench._errors import RunRefused, SlotInUse
from pairbench.testing.chat_double import start_chat_double

# A runtime: two chat requests to $RUNTIME_BASE_URL; with `drop` the second lacks the seed,
# with `cold` no temperature is sent.
RUNTIME = """
import json, os, sys, urllib.request
sys.stdin.read()
mode = sys.argv[1]
seed = int(os.environ["PAIRBENCH_MODEL_SEED"])
for turn in (1, 2):
    body = {"model": "m", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}
    if not (mode == "drop" and turn == 2):
        body["seed"] = seed
    if mode != "cold":
        body["temperature"] = 1.0
    request = urllib.request.Request(
        os.environ["RUNTIME_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
        {"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).read()
print("ok")
"""


def _experiment(root: Path, upstream: str, modes: tuple[str, str], concurrency: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "p.md").write_text("Go.\n", encoding="utf-8")
    (root / "runtime.py").write_text(RUNTIME, encoding="utf-8")
    path = root / "experiment.yaml"
    run = f"adapter: command, settings: {{command: [python3, {root / 'runtime.py'}"
    path.write_text(
        f"""id: proxied
version: "1"
trials: 1
budget: {{concurrency: {concurrency}}}
proxy: {{upstream: "{upstream}", env: RUNTIME_BASE_URL, require: {{temperature: 1.0}}}}
agent: {{{run}, x]}}}}
arms:
  a: {{agent: {{{run}, {modes[0]}]}}}}}}
  b: {{agent: {{{run}, {modes[1]}]}}}}}}
tasks:
  - {{id: t1, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
""",
        encoding="utf-8",
    )
    return path


def _proxy_event(run_dir: Path, arm: str) -> dict[str, Any]:
    path = run_dir / "transcripts" / arm / "t1" / "0.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (found,) = [e for e in events if e["kind"] == "model_proxy"]
    assert isinstance(found, dict)
    return found


def test_seeding_and_sampling_come_from_the_bodies_the_runtime_sent(tmp_path: Path) -> None:
    with start_chat_double({"llama_cpp": True}) as double:
        exp = _experiment(tmp_path / "exp", double.url, ("send", "drop"))
        run = start_run(exp, tmp_path / "runs", run_seed=2)
        received = len(double.exchanges)
    results = {r.arm: r for r in run.results}
    assert results["a"].seeding is not None and results["a"].seeding.status == "seeded"
    dropped = results["b"].seeding
    assert dropped is not None and dropped.status == "unseeded"
    assert (dropped.requests, dropped.requests_with_seed) == (2, 1)
    a, b = _proxy_event(run.run_dir, "a"), _proxy_event(run.run_dir, "b")
    assert a["requests"] == b["requests"] == 2
    assert a["sampling"]["temperature"] == "sent" and a["sent"]["temperature"] == 1.0
    assert a["sampling"]["seed"] == "sent" and b["sampling"]["seed"] == "mixed"
    assert a["violations"] == []
    # Every request went through the proxy, labelled with its attempt.
    lines = (run.run_dir / "proxy" / "exchanges.jsonl").read_text(encoding="utf-8").splitlines()
    labels = [json.loads(line)["label"] for line in lines]
    assert sorted(labels) == ["a/t1/0#1", "a/t1/0#1", "b/t1/0#1", "b/t1/0#1"]
    assert received == 4
    ident = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))["identities"]
    assert ident["model_endpoint"]["total_slots"] == 1
    assert "taken_at" not in ident["model_endpoint"]  # when it was read is no identity


def test_an_omitted_temperature_is_server_default_and_a_named_violation(tmp_path: Path) -> None:
    with start_chat_double({"llama_cpp": True}) as double:
        exp = _experiment(tmp_path / "exp", double.url, ("send", "cold"))
        run = start_run(exp, tmp_path / "runs", run_seed=2)
    cold = _proxy_event(run.run_dir, "b")
    assert cold["sampling"]["temperature"] == "server_default"
    (violation,) = cold["violations"]
    assert violation["name"] == "temperature" and len(violation["requests"]) == 2


def test_a_proxy_run_needs_one_attempt_at_a_time(tmp_path: Path) -> None:
    exp = _experiment(tmp_path / "exp", "http://127.0.0.1:9", ("send", "send"), concurrency=2)
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode != 0
    assert "budget.concurrency: a run with a 'proxy' runs one attempt at a time" in done.stderr
    ok = _experiment(tmp_path / "ok", "http://127.0.0.1:9", ("send", "send"))
    with pytest.raises(RunRefused, match="--concurrency 2"):
        start_run(ok, tmp_path / "runs", run_seed=1, concurrency=2)
    remote = ok.read_text(encoding="utf-8").replace("127.0.0.1:9", "example.org")
    ok.write_text(remote, encoding="utf-8")
    done = cli_here("check", str(ok), cwd=tmp_path)
    assert done.returncode != 0 and "is not a loopback http URL" in done.stderr


@pytest.mark.whole_run
def test_with_the_real_llama_server_run_json_names_the_model_and_its_build(
    tmp_path: Path,
) -> None:
    from pairbench.model import LlamaServer
    from pairbench.model._build import cached_build
    from pairbench.model._weights import installed_model

    model = installed_model()
    if cached_build() is None or model is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
        return
    server = LlamaServer.start()
    try:
        exp = _experiment(tmp_path / "exp", server.url, ("send", "cold"))
        run = start_run(exp, tmp_path / "runs", run_seed=2)
    finally:
        server.stop()
    endpoint = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))["identities"][
        "model_endpoint"
    ]
    assert endpoint["build_info"] == "b0-unknown" and endpoint["total_slots"] == 1
    assert endpoint["gguf"]["sha256"] == model.sha256
    cold = _proxy_event(run.run_dir, "b")
    assert cold["sampling"]["temperature"] == "server_default"
    assert _proxy_event(run.run_dir, "a")["sampling"]["temperature"] == "sent"
    assert {r.seeding.status for r in run.results if r.seeding} == {"seeded"}


def test_a_runtime_that_reports_nothing_gets_the_usage_the_proxy_measured(
    tmp_path: Path,
) -> None:
    # The runtime prints no usage at all; the double answers the run's third request
    # without one, so one arm's tokens are measured and the other's say their coverage.
    with start_chat_double({"llama_cpp": True, "omit_usage_on": [3]}) as double:
        exp = _experiment(tmp_path / "exp", double.url, ("send", "send"))
        run = start_run(exp, tmp_path / "runs", run_seed=2)
        usage = [e.usage for e in double.exchanges]
    metrics = [r.metrics for r in run.results]
    assert all(m is not None for m in metrics)
    # The arm that ran first sent exchanges 1 and 2 (usage on both), the other 3 and 4.
    assert usage[2] is None and None not in (usage[0], usage[1], usage[3])
    first = [u for u in usage[:2] if u is not None]
    whole, partial = sorted(
        (m for m in metrics if m is not None), key=lambda m: m.input_tokens.provenance
    )
    assert whole.input_tokens.provenance == "measured"
    assert whole.input_tokens.source == "server usage via pairbench's proxy"
    assert whole.input_tokens.value == sum(u["prompt_tokens"] for u in first)
    assert whole.total_tokens.provenance == "measured"
    assert partial.input_tokens.provenance == "missing"
    assert partial.input_tokens.reason == (
        "1 of 2 model responses reported usage (pairbench's proxy)"
    )
    for m in (whole, partial):
        assert m.turns.value == 2
        assert m.turns.source == "model requests via pairbench's proxy"
    done = cli_here("report", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (run.run_dir / "report.md").read_text(encoding="utf-8")
    assert "no model usage reported" not in text
    assert "1 of 2 model responses reported usage" in text
    assert "not priced: the proxied server reports tokens, not money" in text


def test_a_run_on_a_leased_server_spelled_otherwise_is_refused_leaving_no_folder(
    tmp_path: Path,
) -> None:
    # The motivated operator: a second run on the one-slot server, its URL spelled otherwise.
    from pairbench.model._cache import cache_root
    from pairbench.proxy import SlotLease

    with start_chat_double({"llama_cpp": True}) as double:
        port = double.url.rsplit(":", 1)[1].split("/")[0]
        exp = _experiment(tmp_path / "exp", f"http://localhost:{port}", ("send", "send"))
        runs = tmp_path / "runs"
        with SlotLease(f"http://127.0.0.1:{port}/v1", cache_root() / "leases"):
            with pytest.raises(SlotInUse, match=f"loopback:{port}"):
                start_run(exp, runs, run_seed=2)
            done = cli("run", str(exp), "--runs-dir", str(runs), cwd=tmp_path)
            assert done.returncode != 0 and f"loopback:{port}" in done.stderr, done.stderr
            assert "Traceback" not in done.stderr
        assert not runs.exists() or list(runs.iterdir()) == []  # no half-made run folder
        run = start_run(exp, runs, run_seed=2)  # the lease released: it runs
        assert [r.outcome for r in run.results] == ["passed", "passed"]
