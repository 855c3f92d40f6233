"""AR-006's verifier (run in the workspace): out/build.txt holds the build number."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    """0 when out/build.txt is 4711."""
    path = Path("out/build.txt")
    value = path.read_text(encoding="utf-8").strip() if path.is_file() else None
    if value != "4711":
        print(f"FAIL: out/build.txt is {value!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
