"""AR-009's verifier, the failing test (run in the workspace): mean() of a few lists."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

CASES = (([1.0, 2.0, 3.0], 2.0), ([4.0], 4.0), ([1.0, 2.0], 1.5))


def main() -> int:
    """0 when every case holds."""
    sys.path.insert(0, str(Path.cwd()))
    try:
        mean = importlib.import_module("mathx").mean
        failed = [(xs, want, mean(xs)) for xs, want in CASES if mean(xs) != want]
    except Exception as exc:  # a broken module is a failing test, not a crash
        print(f"FAIL: {type(exc).__name__}: {exc}")
        return 1
    for xs, want, got in failed:
        print(f"FAIL: mean({xs}) == {got}, expected {want}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
