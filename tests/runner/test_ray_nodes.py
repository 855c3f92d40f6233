"""Warm servers on every node of a (local, two-node) Ray cluster: each attempt uses the
warm server of the node it runs on; with per-node placement off it would not."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pairbench.runner import start_run
from pairbench.runner._ray import SHARED_LOOPBACK_ENV

if os.environ.get("CI") != "true":  # CI installs the dev extra, which has ray: never skip there
    pytest.importorskip("ray", reason="ray is not installed: pip install 'pairbench[ray]'")
import ray
from ray.cluster_utils import Cluster

pytestmark = pytest.mark.ray

SERVER = str(Path(__file__).parents[1] / "fixtures" / "port_server.py")


@pytest.fixture
def two_nodes() -> Iterator[Cluster]:
    # One test, one cluster: its daemons must be gone when the test ends (conftest checks).
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, logging_level=logging.WARNING)
    try:
        cluster.wait_for_nodes()
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]


def _experiment(tmp: Path) -> Path:
    (tmp / "p.md").write_text("Count.\n", encoding="utf-8")
    # Slow steps keep two attempts in flight: with one CPU per node, on both nodes.
    (tmp / "plan.yaml").write_text(
        "steps:\n  - call: s.count\n    save: n\n  - say: thinking\nanswer: '${n}'\n"
        "without_tools: none\n",
        encoding="utf-8",
    )
    server = {"transport": "http", "serve": ["python3", SERVER, "--port", "{port}"]}
    exp = {
        "id": "nodes",
        "version": "1",
        "trials": 3,
        "budget": {"trial_timeout_s": 60, "concurrency": 2},
        "agent": {"adapter": "scripted", "settings": {"step_delay_s": 0.5}},
        "arms": {
            "http": {"tools": {"mcp": {"s": server}}, "resources": {"num_cpus": 1}},
            "other": {"tools": {"mcp": {"s": server}}, "resources": {"num_cpus": 1}},
        },
        "comparisons": [["http", "other"]],
        "tasks": [
            {
                "id": "t",
                "prompt": "p.md",
                "plan": "plan.yaml",
                "grader": {"name": "contains", "args": {"expect": "1"}},
            }
        ],
    }
    path = tmp / "experiment.yaml"
    path.write_text(json.dumps(exp), encoding="utf-8")
    return path


def _placements(run_dir: Path) -> list[dict[str, str]]:
    found = []
    for path in sorted((run_dir / "transcripts").rglob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        found += [e for e in events if e["kind"] == "placement"]
    return found


def test_each_attempt_uses_the_warm_server_of_its_own_node_and_not_without_placement(
    tmp_path: Path, two_nodes: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_LOOPBACK_ENV, raising=False)
    exp = _experiment(tmp_path)
    outcome = start_run(exp, tmp_path / "runs", run_seed=2, executor="ray")
    assert outcome.status == "complete"
    placed = _placements(outcome.run_dir)
    assert len(placed) == 6
    assert len({p["node"] for p in placed}) == 2, "the attempts did not use both nodes"
    assert all(p["warm_node"] == p["node"] for p in placed), placed
    # The control: the same check fails when every node gets the driver's servers.
    monkeypatch.setenv(SHARED_LOOPBACK_ENV, "1")
    shared = start_run(exp, tmp_path / "shared", run_seed=2, executor="ray")
    placed = _placements(shared.run_dir)
    assert placed and any(p["warm_node"] != p["node"] for p in placed), placed
