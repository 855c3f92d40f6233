"""The ``python`` adapter's worker: ``python -m <this module> module:Class``.

It reads ``{"settings": {...}, "request": {...}}`` on stdin, builds the class with the
settings, calls ``scan`` or ``judge`` and prints the report as JSON on stdout. Whatever the
engine prints goes to stderr, so it cannot corrupt the report. A failure ends the process
with a code the adapter reads, and a last stderr line (``PREFIX`` + what went wrong):

- ``EXIT_RAISED`` (70): the engine raised;
- ``EXIT_NOT_A_REPORT`` (65): it returned something that is not a report;
- ``EXIT_NO_ENGINE`` (78): the target could not be imported or built.

Anything else (``os._exit``, a signal) is the engine's own crash.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from typing import Any

PREFIX = "pairbench-worker: "
EXIT_RAISED = 70
EXIT_NOT_A_REPORT = 65
EXIT_NO_ENGINE = 78


def _fail(code: int, message: str) -> int:
    print(PREFIX + message, file=sys.stderr, flush=True)
    return code


def _build(target: str, settings: dict[str, Any]) -> Any:
    module_name, _, qualname = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found(settings)


def main(argv: list[str]) -> int:
    from pairbench.studies.attribution_reliability.engines._models import (
        EngineReport,
        EngineRequest,
    )

    # The report owns fd 1: the engine's prints (and its children's) go to stderr.
    report_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    target = argv[0]
    payload = json.loads(sys.stdin.read())
    request = EngineRequest.model_validate(payload["request"])
    try:
        engine = _build(target, dict(payload.get("settings") or {}))
    except Exception as exc:
        traceback.print_exc()
        return _fail(EXIT_NO_ENGINE, f"could not build {target}: {type(exc).__name__}: {exc}")
    try:
        result = getattr(engine, request.mode)(request)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are the engine's too
        traceback.print_exc()
        return _fail(EXIT_RAISED, f"{target}.{request.mode} raised {type(exc).__name__}: {exc}")
    if isinstance(result, EngineReport):
        text = json.dumps(result.wire())
    elif isinstance(result, dict):
        try:
            text = json.dumps(result)  # validated by the adapter, like any engine's answer
        except (TypeError, ValueError) as exc:
            return _fail(
                EXIT_NOT_A_REPORT,
                f"{target}.{request.mode} returned a dict that is not JSON ({exc})",
            )
    else:
        return _fail(
            EXIT_NOT_A_REPORT,
            f"{target}.{request.mode} returned {type(result).__name__}, not an EngineReport",
        )
    report_out.write(text)
    report_out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
