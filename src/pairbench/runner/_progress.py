"""The progress display: done / total, passed, infra, elapsed, ETA."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


class RunProgress:
    """A rich progress bar when ``enabled``; silent otherwise (tests, pipes)."""

    def __init__(self, total: int, enabled: bool, console: Console | None = None) -> None:
        self.passed = 0
        self.infra = 0
        self._progress: Progress | None = None
        self._task = None
        if enabled:
            # Imported here: a run without a terminal (pipes, CI, the bench) never draws one.
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]trials"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("passed {task.fields[passed]}  infra {task.fields[infra]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console or Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task("run", total=total, passed=0, infra=0)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance_done(self, outcome: str, already: bool = False) -> None:
        """Count a trial with a final result (``already``: finished before a resume)."""
        if outcome == "passed":
            self.passed += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, passed=self.passed, infra=self.infra)

    def note_infra(self) -> None:
        self.infra += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, infra=self.infra)
