"""AR-002's verifier (run in the workspace): order_total exists, is used, and calc_total is
gone."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    """0 when the rename is complete and the report still works."""
    sys.path.insert(0, str(Path.cwd()))
    problems = []
    for path in sorted(Path("shop").glob("*.py")):
        if "calc_total" in path.read_text(encoding="utf-8"):
            problems.append(f"{path} still mentions calc_total")
    try:
        pricing = importlib.import_module("shop.pricing")
        report = importlib.import_module("shop.report")
        if pricing.order_total([10.0]) != 12.0:
            problems.append("order_total([10.0]) is not 12.0")
        if report.report([10.0]) != "total: 12.00":
            problems.append("report([10.0]) is not 'total: 12.00'")
    except Exception as exc:  # the verifier reports any failure, it does not crash
        problems.append(f"{type(exc).__name__}: {exc}")
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
