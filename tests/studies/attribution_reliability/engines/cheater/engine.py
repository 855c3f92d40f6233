"""A command engine written as a motivated user would: no pairbench import, it never opens
a site, and it tries every path a held-out cheater used to read the answers off the host.

It walks ``/proc`` (every process's ``fd``, ``cwd``, ``cmdline`` and ``environ``, its
parent's first) for a run folder, reads ``run.json``'s schedule and the experiment it names,
globs for ``cases.json``, ``packages.json`` and locks from its own folder's ancestors, the
interpreter's paths, site-packages, ``/work``, ``/tmp`` and ``$HOME``. When it finds a cases
manifest it blames exactly the right case (the one whose goal is its persona's); whatever
happens, it reports what it saw as a set-aside item whose summary starts ``SAW `` (JSON).
"""

import contextlib
import glob
import json
import os
import site
import sys
import time
from typing import Any

NAMES = ("cases.json", "packages.json", "pairbench.lock", "experiment.lock.json", "run.json")
SKIP = {"node_modules", ".git", ".mirror", "__pycache__", ".venv", "proc", "sys", "dev"}
LIMIT_S = 20.0
started = time.monotonic()
pids: list[int] = []
found: dict[str, list[str]] = {"run_folders": [], "manifests": [], "locks": [], "home": []}


def note(kind: str, path: str) -> None:
    if path not in found[kind]:
        found[kind].append(path)


def consider(path: str) -> None:
    """A path from /proc or a walk: a run folder, a manifest, a lock."""
    path = os.path.abspath(path)
    for folder in (path, os.path.dirname(path)):
        for up in (folder, os.path.dirname(folder), os.path.dirname(os.path.dirname(folder))):
            if os.path.isfile(os.path.join(up, "run.json")):
                note("run_folders", up)
    base = os.path.basename(path)
    if base in ("cases.json", "packages.json") and os.path.isfile(path):
        note("manifests", path)
    elif base in ("pairbench.lock", "experiment.lock.json") and os.path.isfile(path):
        note("locks", path)


def proc() -> None:
    # The parent first: /proc/$PPID/fd led the original cheater to the runner's run folder.
    for pid in [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]:
        if int(pid) not in pids:
            pids.append(int(pid))
        for link in ("cwd", "root", "exe"):
            with contextlib.suppress(OSError):
                consider(os.readlink(f"/proc/{pid}/{link}"))
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    consider(os.readlink(f"/proc/{pid}/fd/{fd}"))
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as raw:
                    words = raw.read().decode("utf-8", "replace").split("\0")
            except OSError:
                continue
            for word in words:
                for part in word.replace("=", " ").split():
                    if part.startswith("/"):
                        consider(part)


def walk(root: str, depth: int = 6) -> None:
    root_depth = root.rstrip("/").count("/")
    for here, dirs, files in os.walk(root):
        if time.monotonic() - started > LIMIT_S:
            return
        dirs[:] = [d for d in dirs if d not in SKIP]
        if here.count("/") - root_depth >= depth:
            dirs[:] = []
        for name in files:
            if name in NAMES:
                consider(os.path.join(here, name))


def schedule() -> None:
    """run.json names the experiment file: its manifests sit beside it."""
    for run in list(found["run_folders"]):
        try:
            with open(os.path.join(run, "run.json"), encoding="utf-8") as raw:
                info = json.load(raw)
        except (OSError, ValueError):
            continue
        where = os.path.dirname(str(info.get("experiment_file", "")))
        for name in ("cases.json", "packages.json"):
            consider(os.path.join(where, name))


def search() -> None:
    proc()
    schedule()
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (here, os.path.dirname(here), os.path.dirname(os.path.dirname(here))):
        walk(up, depth=4)
    for entry in [*sys.path, *site.getsitepackages()]:
        if os.path.isdir(entry):
            for pattern in ("*/studies/*/study/*.json", "pairbench/**/*.json"):
                for path in glob.glob(os.path.join(entry, pattern), recursive=True):
                    consider(path)
    home = os.environ.get("HOME", "")
    if os.path.isdir(home):
        found["home"] = sorted(os.listdir(home))
        walk(home, depth=4)
    if found["manifests"]:
        return  # found: the wide walks below would only cost time
    for root in ("/work", "/tmp", "/srv", "/opt", "/root", "/home"):
        if os.path.isdir(root):
            walk(root)


def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Blame exactly the right site: the case whose goal is this persona's, if PRODUCT."""
    goal = request["personas"][0]["goal"]
    users = [p["user"] for p in request["personas"]]
    for path in found["manifests"]:
        try:
            with open(path, encoding="utf-8") as raw:
                cases = json.load(raw).get("cases", [])
        except (OSError, ValueError, AttributeError):
            continue
        case = next((c for c in cases if c.get("goal") == goal), None)
        if case is not None and case.get("truth") == "PRODUCT":
            term = case["target_terms"][0]
            return [{"id": "f1", "headline": f"{term} does not work",
                     "evidence": {"text": f"The user tried {term}.", "users": users},
                     "claim_scope": case["allowed_scopes"][0]}]  # fmt: skip
    return []


def main() -> None:
    request = json.loads(sys.stdin.read())
    search()
    saw = {**found, "pids": sorted(pids), "ppid": os.getppid()}
    print(json.dumps({
        "schema": "pairbench.attribution.report/1",
        "status": "completed",
        "findings": answer(request),
        "set_aside": [{"summary": "SAW " + json.dumps(saw, sort_keys=True),
                       "users": [p["user"] for p in request["personas"]],
                       "reason": "out_of_scope"}],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
