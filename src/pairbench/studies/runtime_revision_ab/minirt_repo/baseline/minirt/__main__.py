"""``python -m minirt``: run one task; the last stdout line is the JSON result.

Settings come from arguments, else the environment: ``MINIRT_BASE_URL``, ``MINIRT_MODEL``,
``MINIRT_SEED``, ``MINIRT_TEMPERATURE``; ``PAIRBENCH_EVENTS`` names the event file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ._client import Settings
from ._loop import RunConfig, run

EXIT_CODES = {"done": 0, "error": 1, "incomplete": 2, "rejected": 3}
_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the result line; the exit code says what happened."""
    parser = argparse.ArgumentParser(prog="minirt")
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--prompt-file", required=True, type=Path)
    parser.add_argument("--verifier", default="[]", help="JSON list: the verifier's argv")
    parser.add_argument("--deny", action="append", default=[], type=Path)
    parser.add_argument("--base-url", default=os.environ.get("MINIRT_BASE_URL", ""))
    parser.add_argument("--model", default=os.environ.get("MINIRT_MODEL", "local"))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("MINIRT_SEED", "0")))
    parser.add_argument(
        "--temperature", type=float, default=float(os.environ.get("MINIRT_TEMPERATURE", "1.0"))
    )
    parser.add_argument("--max-rounds", type=int, default=16)
    args = parser.parse_args(argv)
    if not args.base_url:
        parser.error("no endpoint: pass --base-url or set MINIRT_BASE_URL")
    verifier = [str(a) for a in json.loads(args.verifier)]
    if verifier and verifier[0] in ("python", "python3"):
        verifier[0] = sys.executable
    env = {k: v for k, v in os.environ.items() if k in _KEEP}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    config = RunConfig(
        workspace=args.workspace,
        prompt=args.prompt_file.read_text(encoding="utf-8"),
        settings=Settings(args.base_url, args.model, args.temperature, args.seed),
        verifier=verifier,
        denied=list(args.deny),
        env=env,
        events_path=os.environ.get("PAIRBENCH_EVENTS") or None,
        max_rounds=args.max_rounds,
    )
    outcome = run(config)
    result = {
        "minirt": "result",
        "status": outcome.status,
        "claimed": outcome.status == "done",
        "rounds": outcome.rounds,
        "detail": outcome.detail,
        "usage": outcome.usage,
    }
    print(json.dumps(result, sort_keys=True, ensure_ascii=False), flush=True)
    return EXIT_CODES.get(outcome.status, 4)


if __name__ == "__main__":
    sys.exit(main())
