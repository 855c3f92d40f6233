"""AR-002's acceptance (argv[1]: a copy of the final workspace): the rename is complete and
the package behaves as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = (
    "from shop.pricing import order_total; from shop.report import report; "
    "assert order_total([10.0, 5.0]) == 18.0; assert report([10.0]) == 'total: 12.00'"
)


def main(workspace: Path) -> int:
    """0 when no file names calc_total and the behaviour is unchanged."""
    for path in workspace.rglob("*.py"):
        if "calc_total" in path.read_text(encoding="utf-8"):
            return 1
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=workspace, check=False)
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
