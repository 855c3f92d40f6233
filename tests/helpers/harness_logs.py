"""Real logs of other harnesses, made in the suite: lm-evaluation-harness against the chat
double, promptfoo with its ``echo`` provider. Both tools are installed by ``make
harness-tools`` (pinned: tools/lm-eval/constraints.txt, tools/promptfoo's lock); a missing
one skips through ``skip_outside_ci`` (fails under CI=true)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

from helpers.common import REPO, skip_outside_ci
from pairbench.testing.chat_double import start_chat_double

LM_EVAL_VERSION = "0.4.13"
LM_EVAL_VENV = Path.home() / ".cache" / "pairbench" / f"lm-eval-{LM_EVAL_VERSION}"
PROMPTFOO = REPO / "tools" / "promptfoo" / "node_modules" / ".bin" / "promptfoo"
DATA = REPO / "tests" / "importers" / "data"
LM_EVAL_DATA = DATA / "lm_eval"
PROMPTFOO_DATA = DATA / "promptfoo"


def lm_eval_python() -> Path:
    """The lm-eval venv's python (``make harness-tools``), or skip loudly."""
    python = Path(os.environ.get("PAIRBENCH_LM_EVAL_VENV", LM_EVAL_VENV)) / "bin" / "python"
    if not os.access(python, os.X_OK):
        skip_outside_ci(f"lm-evaluation-harness is not installed at {python}: make harness-tools")
    return python


def promptfoo_bin() -> Path:
    """The pinned promptfoo CLI (``make harness-tools``), or skip loudly."""
    if not os.access(PROMPTFOO, os.X_OK):
        skip_outside_ci(f"promptfoo is not installed at {PROMPTFOO}: make harness-tools")
    return PROMPTFOO


def _env(home: Path) -> dict[str, str]:
    """A scrubbed environment: no keys of ours, offline, telemetry and update checks off."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "HF_HOME": str(home / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
        "PROMPTFOO_CONFIG_DIR": str(home / "promptfoo"),
        "PROMPTFOO_CACHE_ENABLED": "false",
        "NO_COLOR": "1",
    }


def _docs(task: str, folder: str = "tasks") -> list[dict[str, str]]:
    lines = (LM_EVAL_DATA / folder / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _script(docs: list[dict[str, str]], wrong_every: int) -> dict[str, object]:
    """A double's script: the n-th document (1-based, over ``docs``) answered right unless
    n is a multiple of ``wrong_every``."""
    replies = [
        {
            "match": re.escape(f"Question: {doc['question']}\n"),
            "content": (
                (f"It is {doc['answer']}" if doc["id"].startswith("sub") else doc["answer"])
                if n % wrong_every
                else "I am not sure"
            ),
        }
        for n, doc in enumerate(docs, 1)
    ]
    return {"replies": replies}


class LmEvalLogs(NamedTuple):
    """Each run's results JSON (``results_<time>.json``; its samples files lie beside it)."""

    a: Path
    """model-a on arith_add and arith_mul (misses every 3rd document)."""
    b: Path
    """model-b on the same two tasks (misses every 4th document)."""
    a_again: Path
    """model-a again: an A/A pair with ``a``."""
    other_task: Path
    """model-b on arith_mul only (a log of another task than ``a``'s arith_add)."""
    edited: Path
    """model-b on arith_add whose document add05 has another question and answer."""
    filtered_a: Path
    """model-a on arith_sub, scored under two filters (``whole``, ``number``)."""
    filtered_b: Path
    """model-b on arith_sub."""


def make_lm_eval_logs(root: Path) -> LmEvalLogs:
    """Run the real lm-eval (``data/lm_eval/make_logs.py``) seven times against chat doubles."""
    python = lm_eval_python()
    docs = _docs("arith_add") + _docs("arith_mul") + _docs("arith_sub", "tasks_filtered")
    edited = LM_EVAL_DATA / "tasks_edited"
    filtered = LM_EVAL_DATA / "tasks_filtered"
    with ExitStack() as stack:
        doubles = {
            name: stack.enter_context(start_chat_double(script=_script(docs, k)))
            for name, k in (("model-a", 3), ("model-b", 4))
        }
        runs = [
            ("a", "model-a", LM_EVAL_DATA / "tasks", ["arith_add", "arith_mul"]),
            ("b", "model-b", LM_EVAL_DATA / "tasks", ["arith_add", "arith_mul"]),
            ("a_again", "model-a", LM_EVAL_DATA / "tasks", ["arith_add", "arith_mul"]),
            ("other_task", "model-b", LM_EVAL_DATA / "tasks", ["arith_mul"]),
            ("edited", "model-b", edited, ["arith_add"]),
            ("filtered_a", "model-a", filtered, ["arith_sub"]),
            ("filtered_b", "model-b", filtered, ["arith_sub"]),
        ]
        spec = [
            {
                "model": model,
                "base_url": f"{doubles[model].url}/v1/chat/completions",
                "tasks_dir": str(tasks_dir),
                "tasks": tasks,
                "output": str(root / key),
            }
            for key, model, tasks_dir, tasks in runs
        ]
        (root / "runs.json").write_text(json.dumps(spec, indent=1))
        done = subprocess.run(
            [str(python), str(LM_EVAL_DATA / "make_logs.py"), str(root / "runs.json")],
            env=_env(root / "home"),
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
            start_new_session=True,
        )
    if done.returncode != 0:
        raise AssertionError(f"lm-eval failed ({done.returncode}):\n{done.stderr[-4000:]}")
    found = {key: _results_json(root / key) for key, *_ in runs}
    return LmEvalLogs(**found)


def _results_json(output: Path) -> Path:
    found = sorted(output.glob("*/results_*.json"))
    if len(found) != 1:
        raise AssertionError(f"{output}: expected one results_*.json, found {found}")
    return found[0]


class PromptfooLogs(NamedTuple):
    """``promptfoo eval --output`` files."""

    prompts: Path
    """Two prompts (``guess``, ``alt``) x the echo provider over 20 test cases."""
    providers: Path
    """One prompt x two providers (echo, and echo with a response transform)."""
    repeated: Path
    """``prompts`` run with ``--repeat 2``: every test case twice per arm."""
    errors: Path
    """One prompt x echo and a script provider that errors on 5 of the 20 test cases."""


def make_promptfoo_logs(root: Path) -> PromptfooLogs:
    """Run the real promptfoo twice over ``data/promptfoo``'s configs (echo provider)."""
    binary = promptfoo_bin()
    work = root / "promptfoo"
    shutil.copytree(PROMPTFOO_DATA, work)
    out = {}
    for name, config, extra in (
        ("prompts", "prompts", []),
        ("providers", "providers", []),
        ("repeated", "prompts", ["--repeat", "2"]),
        ("errors", "errors", []),
    ):
        done = subprocess.run(
            [
                str(binary),
                "eval",
                "-c",
                f"{config}.yaml",
                *extra,
                "--output",
                f"{name}.json",
                "--no-cache",
                "--no-progress-bar",
                "--no-table",
                "--no-write",
            ],
            env=_env(root / "home"),
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
        )
        # promptfoo exits 100 when a test case failed, which these configs mean to happen.
        if done.returncode not in (0, 100) or not (work / f"{name}.json").is_file():
            raise AssertionError(f"promptfoo failed ({done.returncode}):\n{done.stderr[-4000:]}")
        out[name] = work / f"{name}.json"
    return PromptfooLogs(**out)


def iter_samples(results_json: Path) -> Iterator[dict[str, object]]:
    """Every sample line of every samples file beside a results JSON (for tests' checks)."""
    stamp = results_json.stem.removeprefix("results_")
    for path in sorted(results_json.parent.glob(f"samples_*_{stamp}.jsonl")):
        for line in path.read_text().splitlines():
            yield json.loads(line)
