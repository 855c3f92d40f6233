"""What the fake Claude Code and Codex CLIs do with this study's tier-1 tracker prompts
(registered under ``pairbench.cli_scripts``): list the repositories, call the one tool that
answers, and answer from its result. Light on purpose: each fake CLI process imports it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pairbench.studies import CliScript

DISCOVER: tuple[str, dict[str, Any]] = ("list_repositories", {})


def cli_script(prompt: str) -> CliScript | None:
    """The scripted behaviour for one of the study's prompts, or None."""
    if m := re.search(r"title of issue #(\d+) in the repository (\S+?)\?", prompt):
        args: dict[str, Any] = {"repo": m[2], "number": int(m[1])}
        return CliScript(
            (DISCOVER, ("get_issue", args)), f"Looking up issue {m[1]}.", _get("title")
        )
    if m := re.search(r'open issues labeled "([^"]+)" does the repository (\S+) have', prompt):
        args = {"repo": m[2], "label": m[1], "state": "open"}
        return CliScript((DISCOVER, ("list_issues", args)), "Listing open issues.", _get("count"))
    if m := re.search(r"text of line (\d+) of the file (\S+) in the repository (\S+?)\?", prompt):
        args = {"repo": m[3], "path": m[2], "line": int(m[1])}
        return CliScript((DISCOVER, ("read_file", args)), f"Reading {m[2]}.", _get("line_text"))
    return None


def _get(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda result: str(result.get(key, ""))
