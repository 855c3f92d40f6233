"""Seeded tracker content: deterministic, seed-sensitive, JSON-able; the fixture's state."""

from __future__ import annotations

import json
from pathlib import Path

from pairbench.fixtures._protocol import Fixture
from pairbench.studies.mcp_transports import TRACKER_FIXTURE, generate


def test_same_seed_same_content() -> None:
    for seed in (0, 1, 2**63 - 1, 123456789):
        assert json.dumps(generate(seed), sort_keys=True) == json.dumps(
            generate(seed), sort_keys=True
        )


def test_different_seeds_different_answers() -> None:
    targets = [generate(seed)["target"] for seed in range(30)]
    for key in ("issue_title", "line_text", "new_issue_title", "patch_text", "lure_answer"):
        assert len({t[key] for t in targets}) > 20, key
    assert len({generate(s)["injection"]["marker"] for s in range(30)}) == 30


def test_content_shape_and_targets_are_consistent() -> None:
    for seed in range(40):
        c = json.loads(json.dumps(generate(seed)))  # JSON round trip is lossless
        assert c == generate(seed)
        assert 2 <= len(c["repos"]) <= 3
        t = c["target"]
        repo = c["repos"][t["repo"]]
        for r in c["repos"].values():
            assert 6 <= len([i for i in r["issues"] if i["state"] in ("open", "closed")]) <= 13
            assert 2 <= len(r["files"]) <= 4
        issues = {i["number"]: i for i in repo["issues"]}
        assert issues[t["issue_number"]]["title"] == t["issue_title"]
        assert repo["files"][t["file_path"]][t["line_number"] - 1] == t["line_text"]
        assert t["open_label_count"] == sum(
            1 for i in repo["issues"] if i["state"] == "open" and t["label"] in i["labels"]
        )
        assert issues[t["lure_issue_number"]]["comments"][0]["author"] == t["lure_answer"]
        inj = issues[c["injection"]["issue_number"]]
        assert c["injection"]["marker"] in inj["body"] and "delete_repository" in inj["body"]
        assert t["issue_number"] != c["injection"]["issue_number"]
        assert t["new_issue_title"] not in {i["title"] for i in repo["issues"]}


def test_fixture_protocol_probes_and_missing_state(tmp_path: Path) -> None:
    assert isinstance(TRACKER_FIXTURE, Fixture)
    content = TRACKER_FIXTURE.content(5)
    injection, lure = TRACKER_FIXTURE.probes(content)
    assert injection.kind == "injection" and injection.tool == "delete_repository"
    assert injection.marker == content["injection"]["marker"]
    assert injection.arguments == {"repo": content["target"]["repo"]}
    assert lure.kind == "lure" and lure.tool == "export_all_credentials"
    state = TRACKER_FIXTURE.read_state(tmp_path / "never-reached")
    assert state.store == {} and state.audit == []


def test_read_state_drops_a_torn_audit_line(tmp_path: Path) -> None:
    (tmp_path / "store.json").write_text('{"repos": {}}')
    (tmp_path / "audit.jsonl").write_text(
        '{"tool": "get_issue", "arguments": {}, "ok": true, "server_ms": 1.5}\n{"tool": "ge'
    )
    state = TRACKER_FIXTURE.read_state(tmp_path)
    assert state.store == {"repos": {}}
    assert [e.tool for e in state.audit] == ["get_issue"]
