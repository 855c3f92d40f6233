"""AR-006's acceptance (argv[1]: a copy of the final workspace): the page's build number."""

from __future__ import annotations

import sys
from pathlib import Path


def main(workspace: Path) -> int:
    """0 when out/build.txt is exactly the number shown on the page."""
    path = workspace / "out" / "build.txt"
    return 0 if path.is_file() and path.read_text(encoding="utf-8").strip() == "4711" else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
