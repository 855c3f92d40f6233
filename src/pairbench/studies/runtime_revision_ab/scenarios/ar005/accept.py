"""AR-005's acceptance (argv[1]: a copy of the final workspace): exactly the two lines."""

from __future__ import annotations

import sys
from pathlib import Path

EXPECTED = ["errors: 17", "STATUS: degraded (disk quota on node-7)"]


def main(workspace: Path) -> int:
    """0 when out/summary.md is the count and the status line."""
    path = workspace / "out" / "summary.md"
    if not path.is_file():
        return 1
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return 0 if lines == EXPECTED else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
