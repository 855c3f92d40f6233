"""AR-005's verifier (run in the workspace): the summary has the error count and status."""

from __future__ import annotations

import sys
from pathlib import Path

EXPECTED = ("errors: 17", "STATUS: degraded (disk quota on node-7)")


def main() -> int:
    """0 when both lines are in out/summary.md."""
    path = Path("out/summary.md")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    missing = [line for line in EXPECTED if line not in text.splitlines()]
    for line in missing:
        print(f"FAIL: out/summary.md lacks the line {line!r}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
