"""``check-engine``: engines written as their users would (no pairbench imports), each
breaking the contract one way, and one keeping it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers.common import cli_here
from pairbench.studies.attribution_reliability import STUDY

pytestmark = pytest.mark.whole_run

# Seed 1 (C-P01): a report with an extra key and a finding without its claim_scope.
# Seed 2 (C-T01): a valid report that names a user it was never given, uses one finding id
# twice and points at another site. It never opens a site.
WRONG = """
import json, sys
request = json.load(sys.stdin)
if request["model_seed"] == 1:
    report = {"status": "completed", "confidence": 0.9,
              "findings": [{"id": "f1", "headline": "Booking fails"}]}
else:
    start = request["start_url"]
    other_site = start.rsplit("/v/", 1)[0] + "/v/aaaaaaaaaaaaaaaaaaaaaaaaaa/menu"
    finding = {"id": "f1", "claim_scope": "product_behavior", "evidence": {"users": ["u9"]}}
    report = {"status": "completed", "findings": [finding, finding],
              "observations": [{"user": "u1", "step": 1, "page_url": other_site}]}
print(json.dumps(report))
"""
CHATTY = "print('starting the scan...')\nprint('{\"status\": \"completed\"}')\n"
SLOW = "import sys, time\nsys.stdin.read()\ntime.sleep(30)\n"
CRASH = "import sys\nsys.stdin.read()\nsys.stderr.write('KeyError: start_url\\n')\nsys.exit(3)\n"
GOOD = """
import json, sys, urllib.request
request = json.load(sys.stdin)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
with opener.open(request["start_url"], timeout=10) as page:
    page.read()
user = request["personas"][0]["user"]
print(json.dumps({"status": "completed", "users": [{"user": user, "scripted": False}],
                  "observations": [{"user": user, "step": 1, "page_url": request["start_url"]}]}))
"""


def _experiment(tmp_path: Path, engines: dict[str, dict[str, Any]]) -> Path:
    root = tmp_path / "study"
    root.mkdir()
    for name in ("cases.json", "packages.json", "protocol.md"):
        (root / name).write_bytes((STUDY.root / name).read_bytes())
    data = yaml.safe_load((STUDY.root / "experiment.yaml").read_text(encoding="utf-8"))
    if len(engines) > 1:
        data.pop("descriptive", None)
    data["tasks"] = [t for t in data["tasks"] if t["id"] in ("c-p01", "c-t01")]
    (root / "prompts").mkdir()
    for prompt in (STUDY.root / "prompts").iterdir():
        (root / "prompts" / prompt.name).write_bytes(prompt.read_bytes())
    data["arms"] = {
        name: {"agent": {"adapter": "attribution-engine", "settings": {"engine": engine}}}
        for name, engine in engines.items()
    }
    path = root / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _script(tmp_path: Path, name: str, text: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return {"engine": "command", "argv": [sys.executable, str(path)]}


def test_each_contract_problem_of_wrong_engines_is_named_with_its_fix(tmp_path: Path) -> None:
    engines = {
        "wrong": _script(tmp_path, "wrong", WRONG),
        "chatty": _script(tmp_path, "chatty", CHATTY),
        "slow": {**_script(tmp_path, "slow", SLOW), "timeout_s": 1},
        "crash": _script(tmp_path, "crash", CRASH),
        "hosted": {
            "engine": "http",
            "url": "http://127.0.0.1:9",
            "headers": {"Authorization": "Bearer ${env:AR_CHECK_UNSET_TOKEN}"},
        },
        "good": _script(tmp_path, "good", GOOD),
    }
    experiment = _experiment(tmp_path, engines)
    done = cli_here(
        "study", "attribution-reliability", "check-engine", str(experiment), cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout
    arms = {}
    for block in said.split("arm ")[1:]:
        arms[block.split(" ", 1)[0]] = block
    wrong = arms["wrong"]
    assert (
        "C-P01: extra key 'confidence' in the report (an unknown key voids the report). "
        "Fix: remove it; write exactly the fields of engines/schema/report-1.json" in wrong
    )
    assert "C-P01: missing field 'findings.0.claim_scope' in the report. Fix: add it" in wrong
    assert "C-T01: 'findings.0.evidence.users' names user 'u9', who is neither" in wrong
    assert "C-T01: finding id 'f1' is used twice. Fix: give each finding its own id" in wrong
    assert "C-T01: 'observations.0.page_url' names another site" in wrong
    assert wrong.count("the engine never opened the site") == 2
    assert "answered text that is not JSON" in arms["chatty"]
    assert "Fix: write on stdout exactly one JSON object (logs go to stderr)" in arms["chatty"]
    assert arms["slow"].count("did not answer within 1 s") == 2
    assert arms["slow"].count("Fix: answer within users x budget.seconds_per_user + 60 s") == 2
    assert (
        "C-P01: the engine ended with exit code 3: KeyError: start_url. Fix: exit 0"
        in (arms["crash"])
    )
    assert (
        "C-P01: engine.headers.Authorization: 'Bearer ${env:AR_CHECK_UNSET_TOKEN}' reads the "
        "runner's AR_CHECK_UNSET_TOKEN, which is not set. Fix: export AR_CHECK_UNSET_TOKEN=..."
        in arms["hosted"]
    )
    assert "C-T01" not in arms["hosted"]  # a set-up problem is named once, not per case
    assert "C-P01: ok (0 finding(s), 0 set aside, 1 page request(s))" in arms["good"]
    assert "Fix:" not in arms["good"]
    assert "contract problem(s)" in done.stderr


def test_a_conformant_engine_exits_0(tmp_path: Path) -> None:
    experiment = _experiment(tmp_path, {"good": _script(tmp_path, "good", GOOD)})
    done = cli_here(
        "study", "attribution-reliability", "check-engine", str(experiment), "--arm", "good",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "arm good (command engine):",
        "  C-P01: ok (0 finding(s), 0 set aside, 1 page request(s))",
        "  C-T01: ok (0 finding(s), 0 set aside, 1 page request(s))",
        "conformant: every report kept the contract",
    ]


def test_an_unknown_arm_is_named(tmp_path: Path) -> None:
    experiment = _experiment(tmp_path, {"good": _script(tmp_path, "good", GOOD)})
    done = cli_here(
        "study", "attribution-reliability", "check-engine", str(experiment), "--arm", "mine",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0
    assert "no arm named mine (arms: good)" in done.stdout + done.stderr
