"""AR-003's verifier (run in the workspace): settings/local.toml sets DEBUG = false."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def main() -> int:
    """0 when the override exists and sets DEBUG to false."""
    path = Path("settings/local.toml")
    if not path.is_file():
        print("FAIL: settings/local.toml does not exist")
        return 1
    if tomllib.loads(path.read_text(encoding="utf-8")).get("DEBUG") is not False:
        print("FAIL: DEBUG is not false")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
