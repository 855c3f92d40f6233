"""AR-007's verifier (run in the workspace): out/report.md lists the data files."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    """0 when every data file has its ``- name`` line."""
    path = Path("out/report.md")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    missing = [n for n in ("NOTE.txt", "a.csv", "b.csv") if f"- {n}" not in text]
    if missing:
        print(f"FAIL: out/report.md does not list {missing}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
