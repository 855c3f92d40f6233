"""AR-001's verifier (run in the workspace): server.timeout_s is 60."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def main() -> int:
    """0 when the value is set, else 1 with the reason."""
    config = tomllib.loads(Path("config.toml").read_text(encoding="utf-8"))
    value = config.get("server", {}).get("timeout_s")
    if value != 60:
        print(f"FAIL: server.timeout_s is {value!r}, expected 60")
        return 1
    print("ok: server.timeout_s is 60")
    return 0


if __name__ == "__main__":
    sys.exit(main())
