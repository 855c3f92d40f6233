"""tracker_helpers.py sits next to these tests (no __init__.py): make it importable."""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
