"""The runtime event stream's checker (``pairbench study runtime-revision-ab check-events``)
and its generated reference (``EVENTS.md``)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.common import cli_here


def test_check_events_names_each_bad_line_and_passes_a_valid_stream(tmp_path: Path) -> None:
    good = tmp_path / "events.jsonl"
    lines = [
        {"schema": "pairbench.runtime-events/1", "seq": 1, "kind": "request", "round": 1},
        {"schema": "pairbench.runtime-events/1", "seq": 2, "kind": "usage",
         "usage": {"prompt_tokens": 10, "completion_tokens": 2}},
    ]  # fmt: skip
    good.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    done = cli_here("study", "runtime-revision-ab", "check-events", str(good), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "valid pairbench.runtime-events/1" in done.stdout
    bad = tmp_path / "bad.jsonl"
    wrong = [*lines, {"schema": "pairbench.runtime-events/1", "seq": 2, "kind": "request"},
             {"schema": "pairbench.runtime-events/1", "seq": 4, "kind": "thinking"}]  # fmt: skip
    bad.write_text("".join(json.dumps(x) + "\n" for x in wrong) + "not json\n", encoding="utf-8")
    done = cli_here("study", "runtime-revision-ab", "check-events", str(bad), cwd=tmp_path)
    assert done.returncode == 1
    said = done.stdout.splitlines()
    assert said[0] == f"{bad}:3: seq 2 does not rise (after 2)"
    assert said[1].startswith(f"{bad}:4: ") and "kind" in said[1]
    assert said[2].startswith(f"{bad}:5: ")
    assert len(said) == 3


def test_the_events_reference_is_generated_from_the_model() -> None:
    from pairbench.studies.runtime_revision_ab._events_doc import TARGET, events_reference

    # Fix: make docs, and commit EVENTS.md.
    assert TARGET.read_text(encoding="utf-8") == events_reference()
