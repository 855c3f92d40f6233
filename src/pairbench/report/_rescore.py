"""A report never re-scores in silence: the graders' and the study's code against the run's
lock, and the separately named report ``--rescore`` writes when they differ.

A report scores nothing itself, but a study's report part does (the attribution study scores
its sessions when the report is built), and a grader's verdicts are what the records hold.
The run's ``lock.json`` records the hash of each grader's and fixture's code and of the
study's package as they were at the start: when today's code differs, ``pairbench report``
refuses (the report would count the new code's verdicts under the run's name), and
``pairbench report --rescore`` writes ``report-rescored.md``, ``report-rescored.html``,
``summary-rescored.json`` (and the study's files, renamed the same way) with a banner naming
each change, leaving the original report untouched.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from pairbench._errors import PairbenchError

SUFFIX = "-rescored"


class CodeChange(NamedTuple):
    """One piece of scoring code whose hash differs from the run's lock."""

    name: str
    """``graders:<name>``, ``fixtures:<name>`` or ``study:<name>``."""
    where: str
    """The Python package (its folder) the hash covers."""
    old: str
    """The hash the run's lock recorded."""
    new: str
    """The hash of the code installed now."""

    def __str__(self) -> str:
        return f"{self.name} ({self.where}): {self.old} at the run, {self.new} now"


class RescoreRefused(PairbenchError):
    """The scoring code changed since the run and ``--rescore`` was not given."""


def code_changes(run_dir: Path) -> list[CodeChange]:
    """Each grader, fixture and study whose code differs from the run's ``lock.json``
    (``[]``: none, or a run without a lock)."""
    from pairbench import _registry
    from pairbench._errors import SpecError
    from pairbench.freeze._hashing import code_identity
    from pairbench.freeze._lock import read_lock
    from pairbench.freeze._study import study_identity

    path = Path(run_dir) / "lock.json"
    if not path.is_file():
        return []
    try:
        lock = read_lock(path)
    except SpecError:
        return []  # verify names a damaged lock; nothing to compare here
    out: list[CodeChange] = []
    for code in lock.code:
        group, _, name = code.name.partition(":")
        if group not in ("graders", "fixtures"):
            continue  # an adapter's own code is the system under test, not its scoring
        try:
            package, digest = code_identity(_registry.load(group, name))  # type: ignore[arg-type]
        except Exception:
            # Not installed: nothing of it scores today (the report reads the records'
            # verdicts and says what is missing), so nothing is re-scored either.
            continue
        if digest != code.sha256:
            out.append(CodeChange(code.name, f"python:{package}", code.sha256, digest))
    if lock.study is not None:
        try:
            now = study_identity(lock.study.name).sha256
        except Exception:
            return out  # a study gone: its part is "not shown", with what is missing
        if now != lock.study.sha256:
            where = f"python:{lock.study.package}"
            out.append(CodeChange(f"study:{lock.study.name}", where, lock.study.sha256, now))
    return out


def refusal(run_dir: Path, changes: list[CodeChange]) -> RescoreRefused:
    listed = "\n  ".join(str(c) for c in changes)
    return RescoreRefused(
        f"refusing to re-score {run_dir} in silence: scoring code changed since the run\n  "
        f"{listed}\nThe report would count today's code's verdicts under the run's name. Fix: "
        "restore the code the run used (its lock.json has the hashes), or run `pairbench "
        f"report {run_dir} --rescore` for a separately named report (report{SUFFIX}.md, "
        f"report{SUFFIX}.html, summary{SUFFIX}.json) that names the change; the original "
        "report is left untouched"
    )


def rescored_name(name: str) -> str:
    """``report.md`` -> ``report-rescored.md``."""
    stem, dot, ext = name.partition(".")
    return f"{stem}{SUFFIX}{dot}{ext}"


def banner_lines(changes: list[CodeChange]) -> list[str]:
    return [
        "RE-SCORED: this is not the run's report. Scoring code changed since the run, and "
        "these numbers are today's code's verdicts on the run's records:",
        *(f"- {c}" for c in changes),
    ]


def rescored_texts(texts: Mapping[str, str], changes: list[CodeChange]) -> dict[str, str]:
    """The report's texts under their ``-rescored`` names, each with the banner."""
    lines = banner_lines(changes)
    out: dict[str, str] = {}
    for name, text in texts.items():
        if name.endswith(".md"):
            text = "> " + "\n> ".join(lines) + "\n\n" + text
        elif name.endswith(".html"):
            body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
            style = "border:3px solid #b00;padding:8px"
            div = f'<div class="rescored" role="alert" style="{style}">{body}</div>'
            at = text.find(">", text.find("<body")) + 1 if "<body" in text else 0
            text = text[:at] + div + text[at:]
        elif name.endswith(".json"):
            data = json.loads(text)
            if isinstance(data, dict):
                data = {"rescored": [c._asdict() for c in changes], **data}
                text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        out[rescored_name(name)] = text
    return out
