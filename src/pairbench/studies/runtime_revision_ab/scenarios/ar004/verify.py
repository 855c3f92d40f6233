"""AR-004's verifier (run in the workspace): out/summary.md has exactly three bullets."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    """0 for three ``- `` lines and nothing else."""
    path = Path("out/summary.md")
    if not path.is_file():
        print("FAIL: out/summary.md does not exist")
        return 1
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(lines) != 3 or not all(line.startswith("- ") for line in lines):
        print(f"FAIL: expected 3 bullet lines, found {lines!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
