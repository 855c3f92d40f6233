"""``pin`` and ``pairbench source pin``: a ref becomes the commit ``git rev-parse`` names, and
a ref that names none is one clear error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.revision import minirt
from pairbench.cli import app
from pairbench.source import SourceError, pin

runner = CliRunner()


def test_a_branch_and_a_tag_resolve_as_git_rev_parse_does(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    repo.git("tag", "-a", "v1", "-m", "annotated: its object is a tag, not the commit")
    repo.write("minirt/loop.py", "x = 2\n")
    head = repo.commit("second")
    assert pin(repo.path, "main") == head == repo.git("rev-parse", "main")
    assert pin(repo.path, "v1") == base == repo.git("rev-parse", "v1^{commit}")
    assert pin(repo.path, "main~1") == base
    assert pin(repo.path, base[:10]) == base


def test_an_unknown_ref_is_an_error_naming_the_repo_and_ref(tmp_path: Path) -> None:
    repo, _ = minirt(tmp_path / "minirt")
    with pytest.raises(SourceError, match=r"minirt: 'no-such-branch' does not name a commit"):
        pin(repo.path, "no-such-branch")
    with pytest.raises(SourceError, match="is not a ref"):
        pin(repo.path, "--all")


def test_a_folder_that_is_not_a_repository_is_named(tmp_path: Path) -> None:
    repo, _ = minirt(tmp_path / "minirt")
    inside = repo.path / "docs"  # inside a repository, but not its top folder
    with pytest.raises(SourceError, match="not a git repository"):
        pin(inside, "main")
    with pytest.raises(SourceError, match="no such folder"):
        pin(tmp_path / "missing", "main")


def test_cli_prints_the_commit_and_json(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    done = runner.invoke(app, ["source", "pin", "main", "--repo", str(repo.path)])
    assert done.exit_code == 0, done.output
    assert done.stdout == f"{base}\n"
    done = runner.invoke(app, ["source", "pin", "main", "--repo", str(repo.path), "--json"])
    assert json.loads(done.stdout) == {"repo": str(repo.path), "ref": "main", "commit": base}


def test_cli_a_bad_ref_is_one_line_naming_it_and_a_non_zero_exit(tmp_path: Path) -> None:
    repo, _ = minirt(tmp_path / "minirt")
    done = runner.invoke(app, ["source", "pin", "nope", "--repo", str(repo.path)])
    assert done.exit_code == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'nope' does not name a commit" in lines[0], done.stderr
    assert "Traceback" not in done.output
