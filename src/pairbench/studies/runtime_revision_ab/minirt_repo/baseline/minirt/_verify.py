"""The scenario's verifier command, and what the run knows about its latest result."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._text import truncate


@dataclass(frozen=True)
class VerifierRun:
    """One verifier run: exit code, output tail, and the change count it saw."""

    exit_code: int
    output: str
    after_change: int

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass
class Progress:
    """Writes so far and the latest verifier run: what a completion claim rests on."""

    changes: int = 0
    last_run: VerifierRun | None = None

    def fresh_pass(self) -> bool:
        """Whether the latest verifier run passed after the latest change."""
        run = self.last_run
        return run is not None and run.passed and run.after_change == self.changes


def run_verifier(
    argv: list[str], workspace: Path, env: dict[str, str], progress: Progress
) -> VerifierRun:
    """Run ``argv`` in the workspace (60 s at most); the run is recorded in ``progress``."""
    if not argv:
        run = VerifierRun(exit_code=127, output="no verifier configured", after_change=0)
    else:
        try:
            done = subprocess.run(
                argv, cwd=workspace, env=env, capture_output=True, text=True,
                timeout=60, check=False, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            text, _ = truncate((done.stdout + done.stderr)[-4000:], 2000)
            run = VerifierRun(done.returncode, text, progress.changes)
        except subprocess.TimeoutExpired:
            run = VerifierRun(124, "verifier timed out after 60 s", progress.changes)
        except OSError as exc:
            run = VerifierRun(127, f"verifier could not start: {exc}", progress.changes)
    progress.last_run = run
    return run
