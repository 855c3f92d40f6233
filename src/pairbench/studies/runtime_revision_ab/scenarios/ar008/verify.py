"""AR-008's verifier (run in the workspace): out/answer.txt is the first line."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    """0 when out/answer.txt is ``Le café est prêt.``."""
    path = Path("out/answer.txt")
    value = path.read_text(encoding="utf-8").strip() if path.is_file() else None
    if value != "Le café est prêt.":
        print(f"FAIL: out/answer.txt is {value!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
