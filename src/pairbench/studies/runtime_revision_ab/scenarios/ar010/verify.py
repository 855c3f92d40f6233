"""AR-010's verifier (run in the workspace): out/code.txt holds the server's code."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    """0 when out/code.txt is 7319."""
    path = Path("out/code.txt")
    value = path.read_text(encoding="utf-8").strip() if path.is_file() else None
    if value != "7319":
        print(f"FAIL: out/code.txt is {value!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
