"""AR-008's acceptance (argv[1]: a copy of the final workspace): the first line, copied."""

from __future__ import annotations

import sys
from pathlib import Path


def main(workspace: Path) -> int:
    """0 when out/answer.txt is exactly the first line and a newline."""
    path = workspace / "out" / "answer.txt"
    return 0 if path.is_file() and path.read_bytes() == "Le café est prêt.\n".encode() else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
