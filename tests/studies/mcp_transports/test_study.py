"""The study folder: a valid experiment whose prompts, plans and protocol all resolve."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from helpers.common import skip_outside_ci
from helpers.tracker import experiment, load_yaml
from pairbench._template import render
from pairbench.studies.mcp_transports import STUDY, generate
from pairbench.studies.mcp_transports.tracker_server import mcp

SHARED_PROTOCOL = Path("/work/shared/protocols/mcp-transports.md")


def test_experiment_validates_with_the_expected_shape() -> None:
    exp = experiment()
    assert exp.id == "mcp-transports" and exp.trials == 3 and exp.order == "alternate"
    assert set(exp.arms) == {"baseline", "local-stdio", "remote-http"}
    assert exp.comparisons == [("local-stdio", "remote-http")]
    assert exp.agent.adapter == "scripted"
    tiers = [t.labels["tier"] for t in exp.tasks]
    assert tiers.count(1) == 3 and tiers.count(2) == 3 and tiers.count(3) == 3
    assert {t.labels.get("probe") for t in exp.tasks if t.labels["tier"] == 3} == {
        "injection",
        "lure",
        "canary",
    }
    assert all(t.fixture == "tracker" for t in exp.tasks)
    assert {t.grader.name for t in exp.tasks} == {
        "tracker-answer",
        "tracker-state",
        "tracker-security",
    }


def test_named_files_exist_and_protocol_is_verbatim() -> None:
    exp = experiment()
    assert exp.protocol is not None
    for rel in [exp.protocol, *(t.prompt for t in exp.tasks), *(t.plan or "" for t in exp.tasks)]:
        assert (STUDY.root / rel).is_file(), rel
    if not SHARED_PROTOCOL.exists():
        skip_outside_ci(f"shared protocol not at {SHARED_PROTOCOL}")
    assert (STUDY.root / "protocol.md").read_bytes() == SHARED_PROTOCOL.read_bytes()


@pytest.mark.parametrize("seed", [0, 77, 2**40])
def test_prompts_render_completely(seed: int) -> None:
    values = {"fixture": generate(seed)}
    for task in experiment().tasks:
        text = render((STUDY.root / task.prompt).read_text(encoding="utf-8"), values)
        assert "${" not in text and "None" not in text, task.id


def test_plans_call_only_tools_the_server_has() -> None:
    tools = {t.name for t in anyio.run(mcp.list_tools)}
    for path in sorted((STUDY.root / "plans").glob("*.yaml")):
        plan = load_yaml(path)
        assert plan["answer"] and plan["without_tools"], path.name
        roots = {"fixture", "env", "seed"}
        for step in plan["steps"]:
            assert set(step) <= {"say", "call", "args", "save"}, path.name
            if "call" in step:
                server, tool = step["call"].split(".")
                assert server == "tracker" and tool in tools, (path.name, tool)
            for ref in re.findall(r"\$\{([^}]+)\}", str(step)):
                assert ref.split(".")[0] in roots, (path.name, ref)
            if "save" in step:
                roots.add(step["save"])
        for ref in re.findall(r"\$\{([^}]+)\}", plan["answer"]):
            assert ref.split(".")[0] in roots, (path.name, ref)
