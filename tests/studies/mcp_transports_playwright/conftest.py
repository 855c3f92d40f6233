"""What the playwright study's tests share: the pinned binary and Debian's Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.common import CLI_BIN, skip_outside_ci


@pytest.fixture
def playwright_mcp() -> Path:
    """The pinned ``@playwright/mcp`` (``make agent-clis``), with Chromium beside it.

    Skips loudly without either; under ``CI=true`` it fails instead.
    """
    binary = CLI_BIN / "playwright-mcp"
    if not binary.exists():
        skip_outside_ci(f"@playwright/mcp is not installed at {binary}: run make agent-clis")
    if not Path(shutil.which("chromium") or "/usr/bin/chromium").exists():
        skip_outside_ci("Debian's chromium is not installed: run make system-deps")
    return binary
