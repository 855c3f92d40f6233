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

from pairbench._errors import PairbenchError
from pairbench.freeze._code_drift import CodeChange
from pairbench.report._write import summary_json

SUFFIX = "-rescored"


class RescoreRefused(PairbenchError):
    """The scoring code changed since the run and ``--rescore`` was not given."""


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
                text = summary_json(data)
        out[rescored_name(name)] = text
    return out
