"""AR-010's acceptance (argv[1]: a copy of the final workspace): the code, and server.py as
given."""

from __future__ import annotations

import sys
from pathlib import Path


def main(workspace: Path) -> int:
    """0 for the right code."""
    path = workspace / "out" / "code.txt"
    code = path.read_text(encoding="utf-8").strip() if path.is_file() else None
    return 0 if code == "7319" and (workspace / "server.py").is_file() else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
