"""The proxy's tests: a llama.cpp-shaped chat double with a recording proxy in front."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.proxy import Rig, rig_for


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    """The double as llama-server (``/props``, ``/slots``, ``/metrics``, ``timings``)."""
    with rig_for({"llama_cpp": True, "timings": True}, tmp_path) as running:
        yield running
