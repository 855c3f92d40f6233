"""Suite-wide guards: no test may leave a child process running."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

_PR_SET_CHILD_SUBREAPER = 36

# pytest-xdist starts its workers with COLUMNS=80, and the CLI's rich consoles, created at
# import, would keep that width for good: tests that pass COLUMNS to one invocation (as a
# user's terminal would) need it read then, as it is in a run without workers.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)


def pytest_configure(config: pytest.Config) -> None:
    # Orphans of a runner a test SIGKILLs would be re-parented to init and escape the guard
    # below; as a subreaper, pytest adopts them instead, so they are seen and reaped.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _alive_children() -> list[psutil.Process]:
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
            else:
                child.wait(0)  # reap
        except (psutil.NoSuchProcess, psutil.TimeoutExpired):
            continue
    return alive


@pytest.fixture(autouse=True)
def no_child_left_behind() -> Iterator[None]:
    """Fail any test that leaves a child process running (after a short grace).

    Children alive before the test (a module fixture's server, set up first) are its
    fixture's to stop, not the test's."""
    before = {child.pid for child in _alive_children()}

    def started_here() -> list[psutil.Process]:
        return [child for child in _alive_children() if child.pid not in before]

    yield
    deadline = time.monotonic() + 5.0
    alive = started_here()
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = started_here()
    if alive:
        described = [f"{p.pid} {' '.join(p.cmdline()[:4])}" for p in alive]
        for proc in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        pytest.fail(f"test left {len(alive)} child process(es) running: {described}")


@pytest.fixture
def server_env() -> dict[str, str]:
    """A scrubbed environment that still lets a child import pairbench from the checkout."""
    from helpers.common import checkout_env

    return checkout_env()


# `make test-fast` runs `pytest -m "not slow"`. A test is slow for a cause, marked where it
# is written (a module's `pytestmark`, or a test's decorator), so a moved module keeps it:
CAUSES = {
    "browser": "drives headless Chromium",
    "cli": "runs the real claude or codex binary",
    "model": "runs the real llama-server and model (pairbench model install)",
    "ray": "starts Ray",
    "r": "calls R for a reference statistic",
    "harness": "runs another harness (lm-evaluation-harness, promptfoo) to make real logs",
    "whole_run": "drives whole runs through real servers and subprocesses (over ~10 s on 2 cores)",
}


# The longest modules, longest first (seconds on 2 cores, `make test`, 2026-12): collected
# first, so xdist (`--dist loadfile --no-loadscope-reorder`, see the Makefile) starts them
# first and the many short modules fill the end of the run. Without it xdist orders modules
# by their number of tests, which puts the one-test minute-long modules last, each then the
# only thing still running. One exception to longest first: the two Ray modules come right
# after the real-model run, on the other worker, because they mostly wait (Ray's daemons
# and workers starting, ~20% CPU) while llama-server wants both cores. A module not listed
# runs after these, in collection order; the list only orders, it selects nothing (a stale
# or missing entry costs time, never a test).
LONGEST_FIRST = [
    "model/test_real_agent.py",
    "studies/attribution_reliability/test_label_free.py",
    "runner/test_ray_nodes.py",
    "runner/test_ray_executor.py",
    "test_real_claude.py",
    "test_no_leftovers.py",
    "cli/test_demo_agents.py",
    "test_end_to_end.py",
    "studies/mcp_transports/test_graders.py",
    "studies/mcp_transports_playwright/test_study.py",
    "test_real_codex.py",
    "runner/test_one_writer.py",
    "fixtures/test_webmcp_bridge.py",
    "studies/mcp_transports_playwright/test_real_agents.py",
    "view/test_browser.py",
    "test_resume.py",
    "runner/test_paths.py",
    "model/test_real_server.py",
    "runner/test_model_proxy.py",
    "testing/test_anthropic_double.py",
    "fixtures/test_mcp_surface.py",
    "studies/webmcp_vs_pdf/test_page.py",
    "freeze/test_compare.py",
    "proxy/test_real_server.py",
    "test_openai_end_to_end.py",
    "agents/test_openai.py",
    "fixtures/test_serve_port.py",
    "freeze/test_lock.py",
    "agents/test_claude_agent.py",
    "studies/webmcp_vs_pdf/test_study.py",
    "test_real_cli_webmcp_vs_pdf.py",
    "cli/test_campaign_cli.py",
    "cli/test_docs.py",
    "freeze/test_server_identity.py",
    "freeze/test_verify_tamper.py",
    "fixtures/test_webmcp_surface.py",
    "test_openai_webmcp_end_to_end.py",
    "test_paired_power_simulation.py",
    "testing/test_responses_double.py",
    "test_hostile_inputs.py",
    "agents/test_codex_agent.py",
    "cli/test_plan_power.py",
    "fixtures/test_real_mcp_servers.py",
    "runner/test_policies.py",
    "studies/mcp_transports_playwright/test_isolation.py",
    "fixtures/test_webmcp_runner.py",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        if any(item.get_closest_marker(cause) for cause in CAUSES):
            item.add_marker(pytest.mark.slow)
    rank = {rel: i for i, rel in enumerate(LONGEST_FIRST)}

    def longest_first(item: pytest.Item) -> int:
        try:
            rel = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(rel, len(rank))

    items.sort(key=longest_first)  # stable: a module's own tests keep their order
