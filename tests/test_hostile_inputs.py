"""Hostile inputs: a command that meets a broken file says so in one line, and never hangs.

Two corpora: broken experiment files (``check`` on every one, ``run`` on the kinds that
used to hang it, ``verify`` and ``run`` on a broken ``experiment.lock.json``) and broken
run folders (``verify``, ``report``, ``resume`` and ``compare``, each run where it reads
the broken file). Every command runs as its own process running what ``python -m
pairbench`` runs, killed past a timeout: no traceback, a non-zero exit, and one line that
names the file and says what is wrong and the fix (or, for ``verify``, what it expected
and found).

The processes run up front, two at a time, in one module fixture; each is forked from an
interpreter that imported pairbench once (``helpers.cli_zygote``: about a hundred invocations
would otherwise spend a second each importing it); the tests read their results.
Damage a reader repairs (a garbage ``trials.npz``, a torn last journal line) must instead
leave ``report`` working.
"""

from __future__ import annotations

import io
import json
import queue
import shutil
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from helpers.cli_zygote import Zygote

pytestmark = pytest.mark.whole_run

TIMEOUT_S = 30.0
"""A hostile input must not hang the CLI: each invocation is killed past this (generous,
so a loaded machine never fails a well-behaved invocation; a hang still fails)."""
AGENT = "import sys; sys.stdin.read(); print('ok')"
VALID = f"""\
id: hostile
version: "1"
trials: 2
agent: {{adapter: command, settings: {{command: [python3, -c, "{AGENT}"]}}}}
arms: {{a: {{}}, b: {{}}}}
tasks:
  - {{id: t, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
"""


def _with(**top: str) -> str:
    """VALID with some top-level keys replaced by the given YAML text (key: text)."""
    kept = [line for line in VALID.splitlines() if line.split(":")[0] not in top]
    if "tasks" in top:
        kept = [line for line in kept if not line.startswith("  - ")]
    return "\n".join([*kept, *(f"{key}: {text}" for key, text in top.items())]) + "\n"


def _laughs(link: Callable[[str], str]) -> str:
    """A billion laughs: 9 anchors, each 9 aliases of the one before (9^9 values)."""
    lines = [VALID, 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} {link(f'*l{i - 1}')}" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


EXPERIMENTS: dict[str, tuple[str | bytes, str]] = {
    # name: (the file's content, a fragment its error line must hold)
    "alias-bomb": (_laughs(lambda a: "[" + ", ".join([a] * 9) + "]"), "expands past"),
    "alias-bomb-merge": (
        _laughs(lambda a: "{" + ", ".join(f"k{j}: {a}" for j in range(9)) + "}"),
        "expands past",
    ),
    "alias-recursive": (VALID + "loop: &loop [1, *loop]\n", "contains it"),
    "nesting-flow-10000": (VALID + "deep: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested"),
    "nesting-block-10000": (VALID + "deep:\n  " + "- " * 10_000 + "x\n", "nested"),
    "nesting-mapping-100": (
        VALID + "".join(" " * i + f"k{i}:\n" for i in range(100)) + " " * 100 + "x: 1\n",
        "nested",
    ),
    "text-5mb": (VALID + "description: " + "lorem ipsum " * 440_000 + "\n", "larger than"),
    "binary-garbage": (bytes(range(256)) * 64, "cannot read it"),
    "control-character": (VALID + "description: bell\x07\n", "not allowed"),
    "empty-file": ("", "empty"),
    "only-comments": ("# an experiment, some day\n", "empty"),
    "list-at-top": ("- id: x\n- version: 1\n", "top level"),
    "syntax-error": (VALID + "oops: [unclosed\n", "invalid YAML"),
    "tab-indent": (VALID.replace("  - {id", "\t- {id"), "tabs"),
    "two-documents": (VALID + "---\nid: other\n", "invalid YAML"),
    "undefined-alias": (VALID + "x: *nowhere\n", "invalid YAML"),
    "bad-int-tag": (_with(trials="!!int many"), "bad-int-tag.yaml:7: invalid YAML: a tagged value"),
    "duplicate-key": (VALID + "trials: 3\n", "duplicate key"),
    "trials-huge": (_with(trials="99999999999999999999999"), "at most 100000"),
    "trials-zero": (_with(trials="0"), "at least 1"),
    "trials-fraction": (_with(trials="2.5"), "integer"),
    "trials-infinite": (_with(trials="1e400"), "finite"),
    "trials-text": (_with(trials="many"), "integer"),
    "task-trials-huge": (
        _with(tasks="[{id: t, prompt: p.md, trials: 1000001, grader: {name: exact-answer}}]"),
        "at most 100000",
    ),
    "plan-too-big": (
        _with(
            trials="100000",
            tasks="["
            + ", ".join(
                f"{{id: t{i}, prompt: p.md, grader: {{name: exact-answer}}}}" for i in range(6)
            )
            + "]",
        ),
        "more than the 1,000,000",
    ),
    "timeout-negative": (_with(budget="{trial_timeout_s: -5}"), "greater than 0"),
    "timeout-a-year": (_with(budget="{trial_timeout_s: 31536000}"), "at most 86400"),
    "timeout-nan": (_with(budget="{trial_timeout_s: .nan}"), "finite"),
    "concurrency-huge": (_with(budget="{concurrency: 1000000}"), "at most 10000"),
    "retries-huge": (_with(infra="{retries: 1000}"), "at most 1"),
    "cost-negative": (_with(budget="{cost_ceiling_usd: -1}"), "at least 0"),
    "cost-infinite": (_with(budget="{cost_per_trial_usd: .inf}"), "finite"),
    "resources-negative": (_with(arms="{a: {resources: {num_cpus: -2}}, b: {}}"), "at least 0"),
    "grader-args-nan": (
        _with(tasks="[{id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: .nan}}}]"),
        "not a finite number",
    ),
    "tasks-empty": (_with(tasks="[]"), "add a task"),
    "tasks-missing": ("\n".join(VALID.splitlines()[:5]) + "\n", "required key 'tasks'"),
    "one-arm": (_with(arms="{a: {}}"), "at least 2 arms"),
    "arms-int-keys": (_with(arms="{1: {}, 2: {}}", comparisons="[[1, 2]]"), "arms"),
    "unknown-key": (VALID + "trails: 3\n", "did you mean 'trials'"),
    "unknown-nested-key": (_with(budget="{timeout: 5}"), "unknown key 'timeout'"),
    "wrong-types-everywhere": (
        "id: [1]\nversion: {a: 1}\ntrials: [2]\nbudget: 3\nagent: 4\narms: 5\ntasks: six\n",
        "id",
    ),
    "task-id-unhashable": (
        _with(tasks="[{id: [1], prompt: p.md, grader: {name: exact-answer}}]"),
        "tasks[0].id",
    ),
    "prompt-name-too-long": (
        _with(tasks="[{id: t, prompt: " + "x" * 300 + ".md, grader: {name: exact-answer}}]"),
        "cannot be a file name",
    ),
    "prompt-outside": (
        _with(tasks="[{id: t, prompt: ../../../etc/passwd, grader: {name: exact-answer}}]"),
        "outside",
    ),
}

RUN_TOO = (
    # `run` loads through the same checks as `check`: the kinds of case that hung or ran it.
    "alias-bomb",
    "nesting-flow-10000",
    "plan-too-big",
    "tasks-empty",
    "text-5mb",
    "trials-huge",
)

LOCKS: dict[str, tuple[str, str]] = {
    # A broken experiment.lock.json beside a valid experiment: `verify` and `run` read it.
    "lock-not-json": ("{not json", "not a pairbench lock"),
    "lock-wrong-types": ('{"experiment": 5, "files": "all"}', "not a pairbench lock"),
    "lock-a-list": ("[]", "not a pairbench lock"),
}


class Folder(NamedTuple):
    """A damage done to a copy of a finished run, and the commands that meet it."""

    damage: Callable[[Path], None]
    commands: tuple[str, ...]
    names: str
    """A fragment of the broken file's path: the error line must hold it."""


def _write(rel: str, data: str | bytes) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        path = run / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    return damage


def _remove(rel: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        path = run / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


def _folder_for(rel: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / rel).unlink()
        (run / rel).mkdir()

    return damage


def _run_json(**changes: object) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        info = json.loads((run / "run.json").read_text(encoding="utf-8"))
        for key, value in changes.items():
            if value is None:
                info.pop(key, None)
            else:
                info[key] = value
        (run / "run.json").write_text(json.dumps(info), encoding="utf-8")

    return damage


def _journal(change: Callable[[list[bytes]], list[bytes]]) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        lines = (run / "journal.jsonl").read_bytes().split(b"\n")
        (run / "journal.jsonl").write_bytes(b"\n".join(change(lines)))

    return damage


def _finished(change: Callable[[dict[str, object]], None]) -> Callable[[list[bytes]], list[bytes]]:
    """Apply ``change`` to the first ``attempt_finished`` event of the journal."""

    def edit(lines: list[bytes]) -> list[bytes]:
        for index, line in enumerate(lines):
            if b'"attempt_finished"' in line:
                event = json.loads(line)
                change(event)
                lines[index] = json.dumps(event).encode()
                break
        return lines

    return edit


def _npz_with_bad_columns(run: Path) -> None:
    """A trials.npz whose journal mark is current but whose columns are nonsense."""
    from pairbench.store import RunDir
    from pairbench.store._load_table import _journal_mark

    meta = {
        "schema_id": "pairbench.trials/1",
        "categories": {"arm": ["a"]},
        **_journal_mark(RunDir(run)),
    }
    arrays: dict[str, Any] = {
        "col.trial": np.arange(3),
        "col.arm": np.array([7]),
        "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
    }
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    (run / "trials.npz").write_bytes(buffer.getvalue())


FOLDERS: dict[str, Folder] = {
    # Each case runs the commands that meet its damage, spread so that every command meets
    # every kind of it (run.json, its schedule, the journal, the records) within the budget.
    "no-run-json": Folder(_remove("run.json"), ("verify", "compare"), "no run.json"),
    "run-json-not-json": Folder(
        _write("run.json", "{not json"), ("verify", "report", "resume", "compare"), "run.json"
    ),
    "run-json-empty": Folder(_write("run.json", ""), ("report",), "run.json"),
    "run-json-binary": Folder(_write("run.json", bytes(range(256))), ("resume",), "run.json"),
    "run-json-a-list": Folder(_write("run.json", "[1, 2, 3]"), ("verify", "resume"), "run.json"),
    "run-json-null": Folder(_write("run.json", "null"), ("compare",), "run.json"),
    "run-json-a-folder": Folder(_folder_for("run.json"), ("report",), "no run.json"),
    "run-json-no-run-id": Folder(_run_json(run_id=None), ("resume",), "run.json"),
    "run-json-arms-a-number": Folder(_run_json(arms=5), ("report",), "run.json"),
    "run-json-tasks-garbage": Folder(_run_json(tasks=[1, 2]), ("compare",), "run.json"),
    "run-json-identities-a-list": Folder(_run_json(identities=[1]), ("report",), "run.json"),
    "schedule-garbage": Folder(
        _run_json(schedule={"pairs": [{"task": 1}]}), ("report", "compare"), "run.json"
    ),
    "schedule-missing": Folder(_run_json(schedule=None), ("resume",), "run.json"),
    "executor-a-string": Folder(_run_json(executor="local"), ("resume",), "run.json"),
    "journal-corrupt-middle": Folder(
        _journal(lambda lines: [*lines[:3], b"{not json", *lines[3:]]),
        ("verify", "report", "resume"),
        "journal.jsonl:4",
    ),
    "journal-binary": Folder(
        _write("journal.jsonl", bytes(range(256)) * 16), ("report",), "journal.jsonl"
    ),
    "journal-not-utf8-line": Folder(
        _journal(lambda lines: [*lines[:2], b'{"event": "\xff\xfe"}', *lines[2:]]),
        ("resume",),
        "journal.jsonl:3",
    ),
    "journal-a-list-line": Folder(
        _journal(lambda lines: [*lines[:2], b"[1, 2]", *lines[2:]]), ("verify",), "journal.jsonl:3"
    ),
    "journal-event-unnamed": Folder(
        _journal(lambda lines: [*lines[:2], b'{"key": "a/t/0"}', *lines[2:]]),
        ("resume",),
        "journal.jsonl:3",
    ),
    "journal-attempt-a-word": Folder(
        _journal(_finished(lambda e: e.update(attempt="first"))), ("verify",), "journal.jsonl"
    ),
    "journal-row-garbage": Folder(
        _journal(_finished(lambda e: e.update(row={"nothing": "here"}))),
        ("report",),
        "journal.jsonl",
    ),
    "journal-a-folder": Folder(_folder_for("journal.jsonl"), ("verify",), "journal.jsonl"),
    "result-not-json": Folder(
        _write("results/a/t/0.json", "{oops"), ("resume", "compare"), "results/a/t/0.json"
    ),
    "result-wrong-shape": Folder(
        _write("results/a/t/0.json", '{"arm": 1}'), ("compare",), "results/a/t/0.json"
    ),
    "result-a-folder": Folder(_folder_for("results/a/t/0.json"), ("resume",), "results/a/t/0.json"),
    "infra-record-garbage": Folder(
        _write("infra/a/t/0.1.json", b"\x00\x01garbage"), ("verify",), "infra/a/t/0.1.json"
    ),
    "transcript-missing": Folder(
        _remove("transcripts/a/t/0.jsonl"), ("verify",), "transcripts/a/t/0.jsonl"
    ),
    "run-lock-not-json": Folder(_write("lock.json", "{nope"), ("verify",), "lock.json"),
    "journal-line-edited": Folder(
        _journal(_finished(lambda e: e.update(outcome="failed"))), ("verify",), "journal.jsonl:"
    ),
    "journal-line-removed": Folder(
        _journal(lambda lines: [*lines[:2], *lines[3:]]), ("verify",), "journal.jsonl:3"
    ),
    "manual-review-trial-a-word": Folder(
        _write("manual_review.json", '{"reviews": [{"arm": "a", "task": "t", "trial": "x"}]}'),
        ("report",),
        "manual_review.json",
    ),
    "summary-json-a-folder": Folder(
        _folder_for("summary.json"), ("report", "verify"), "summary.json"
    ),
    "journal-names-a-file-outside": Folder(
        _journal(_finished(lambda e: e.update(result="../../../../etc/passwd"))),
        ("verify",),
        "etc/passwd",
    ),
}

TOLERATED: dict[str, Callable[[Path], None]] = {
    # Damage a reader repairs: the cache is derived (rebuilt from the journal), and a torn
    # last journal line is what a crash leaves. `report` must still succeed.
    "trials-npz-garbage": _write("trials.npz", b"PK\x03\x04" + bytes(range(256)) * 8),
    "trials-npz-bad-columns": _npz_with_bad_columns,
    "journal-torn-last-line": _journal(lambda lines: [b"\n".join(lines)[:-60]]),
}


class Ran(NamedTuple):
    returncode: int | None
    """None when it did not finish within ``TIMEOUT_S``."""
    stderr: str


def _pairbench(idle: queue.Queue[Zygote], args: tuple[str, ...], cwd: Path) -> Ran:
    """``pairbench ARGS`` in ``cwd``, forked from an idle zygote (see ``helpers.cli_zygote``: a
    hundred invocations pay pairbench's import once, each still its own process)."""
    zygote = idle.get()
    try:
        return Ran(*zygote.run(args, cwd, TIMEOUT_S))
    finally:
        idle.put(zygote)


def _finished_run(root: Path) -> Path:
    """A small finished run (4 trials, command agent), its report written."""
    from pairbench import start_run, write_report

    root.mkdir()
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(VALID, encoding="utf-8")
    run_dir = start_run(root / "experiment.yaml", root / "runs", run_seed=1).run_dir
    write_report(run_dir)  # trials.npz, the cache the table cases damage
    return run_dir


Key = tuple[str, str]
"""(case, command)."""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Mapping[Key, Ran]:
    """Every invocation of every case, run two at a time."""
    root = tmp_path_factory.mktemp("hostile")
    jobs: dict[Key, tuple[tuple[str, ...], Path]] = {}
    for name, (content, _) in EXPERIMENTS.items():
        folder = root / "experiments" / name
        folder.mkdir(parents=True)
        (folder / "p.md").write_text("Answer.\n", encoding="utf-8")
        file = folder / f"{name}.yaml"
        file.write_bytes(content.encode() if isinstance(content, str) else content)
        jobs[name, "check"] = ("check", file.name), folder
        if name in RUN_TOO:
            jobs[name, "run"] = ("run", file.name, "--runs-dir", "runs"), folder
    for name, (lock, _) in LOCKS.items():
        folder = root / "locks" / name
        folder.mkdir(parents=True)
        (folder / "p.md").write_text("Answer.\n", encoding="utf-8")
        (folder / "experiment.yaml").write_text(VALID, encoding="utf-8")
        (folder / "experiment.lock.json").write_text(lock, encoding="utf-8")
        jobs[name, "verify"] = ("verify", "experiment.yaml"), folder
        if name == "lock-not-json":
            jobs[name, "run"] = ("run", "experiment.yaml", "--runs-dir", "runs"), folder
    base = _finished_run(root / "base")
    copies = {**{n: f.damage for n, f in FOLDERS.items()}, **TOLERATED}
    for name, damage in copies.items():
        commands = FOLDERS[name].commands if name in FOLDERS else ("report",)
        for command in commands:
            # A copy per command: resume and report write, and must not change what the
            # next command meets.
            run = root / "folders" / name / command / base.name
            shutil.copytree(base, run, ignore=shutil.ignore_patterns("work"))
            damage(run)
            args = (command, str(run), *([str(base)] if command == "compare" else []))
            jobs[name, command] = args, root
    with Zygote() as first, Zygote() as second, ThreadPoolExecutor(max_workers=2) as pool:
        idle: queue.Queue[Zygote] = queue.Queue()
        idle.put(first)
        idle.put(second)
        futures = {
            key: pool.submit(_pairbench, idle, args, cwd) for key, (args, cwd) in jobs.items()
        }
        return {key: future.result() for key, future in futures.items()}


def _clear(line: str) -> bool:
    """A whole message: an error (with its fix), a problem with its fix, or a mismatch."""
    return line.startswith("error: ") or " Fix: " in line or ": expected " in line


def _assert_one_clear_line(ran: Ran, names: str, says: str) -> None:
    assert ran.returncode is not None, f"no answer within {TIMEOUT_S} s"
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.returncode != 0, ran.stderr
    lines = [line for line in ran.stderr.splitlines() if names in line]
    assert lines, f"no line names {names!r}:\n{ran.stderr}"
    # The file, what is wrong and the fix on one line: a wrapped message would split them.
    assert any(says in line and _clear(line) for line in lines), ran.stderr


@pytest.mark.parametrize(
    ("name", "command"),
    [(n, "check") for n in sorted(EXPERIMENTS)] + [(n, "run") for n in RUN_TOO],
)
def test_a_broken_experiment_is_one_clear_problem(
    results: Mapping[Key, Ran], name: str, command: str
) -> None:
    _assert_one_clear_line(results[name, command], f"{name}.yaml", EXPERIMENTS[name][1])


@pytest.mark.parametrize(
    ("name", "command"), [(n, "verify") for n in sorted(LOCKS)] + [("lock-not-json", "run")]
)
def test_a_broken_lock_is_one_clear_problem(
    results: Mapping[Key, Ran], name: str, command: str
) -> None:
    _assert_one_clear_line(results[name, command], "experiment.lock.json", LOCKS[name][1])


@pytest.mark.parametrize(
    ("name", "command"), [(n, c) for n, f in sorted(FOLDERS.items()) for c in f.commands]
)
def test_a_broken_run_folder_is_one_clear_error(
    results: Mapping[Key, Ran], name: str, command: str
) -> None:
    _assert_one_clear_line(results[name, command], FOLDERS[name].names, "")


@pytest.mark.parametrize("name", sorted(TOLERATED))
def test_damage_a_reader_repairs_still_reports(results: Mapping[Key, Ran], name: str) -> None:
    ran = results[name, "report"]
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr


def test_the_corpus_is_as_big_as_promised() -> None:
    assert len(EXPERIMENTS) + len(LOCKS) >= 40
    assert len(FOLDERS) + len(TOLERATED) >= 20


def test_the_limits_answer_at_once_in_process(tmp_path: Path) -> None:
    """The loader itself (no process start-up): a billion laughs, 10,000 brackets and a
    5 MB file are each refused as one problem, naming its line where there is one."""
    import time

    from pairbench.spec import check_experiment

    for name in ("alias-bomb", "nesting-flow-10000", "text-5mb"):
        path = tmp_path / f"{name}.yaml"
        content = EXPERIMENTS[name][0]
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        started = time.monotonic()
        problems = check_experiment(path)
        assert time.monotonic() - started < 1.0, name
        assert len(problems) == 1, [str(p) for p in problems]
        assert EXPERIMENTS[name][1] in problems[0].message
    # The line of the alias that crosses the limit: the fifth level's anchor.
    where = EXPERIMENTS["alias-bomb"][0]
    assert isinstance(where, str)
    line = where.splitlines().index(next(x for x in where.splitlines() if x.startswith("l4:")))
    assert [p.line for p in check_experiment(tmp_path / "alias-bomb.yaml")] == [line + 1]
