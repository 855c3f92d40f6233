"""AR-001's acceptance (argv[1]: a copy of the final workspace): timeout 60, nothing else
changed."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

EXPECTED = {
    "server": {"host": "127.0.0.1", "port": 8080, "timeout_s": 60},
    "logging": {"level": "info"},
}


def main(workspace: Path) -> int:
    """0 when the config is exactly the expected one."""
    config = tomllib.loads((workspace / "config.toml").read_text(encoding="utf-8"))
    return 0 if config == EXPECTED else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
