"""Records an incomplete campaign's replacement superseded: kept under ``replaced/``.

A campaign the runner stopped in is never finished piecemeal: ``resume`` re-runs it whole,
so its final records would stand beside the replacement's at the same ``results/`` paths.
They move instead, bytes unchanged, to ``replaced/<arm>/<task>/<trial>.<attempt>.json``
(transcripts beside them), announced first by a ``campaign_incomplete`` journal line that
names every move. Readers of the journal (the trial table, ``verify``) read the line that
committed such a record as if it had named the kept place and row from the start.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pairbench._atomic import fsync_dir
from pairbench.store._events import AttemptFinished, CampaignIncomplete, MovedRecord

REPLACED = "replaced"
"""The folder of superseded final records."""


def superseded(events: Iterable[object]) -> dict[tuple[str, int], MovedRecord]:
    """Every moved record of the journal's ``campaign_incomplete`` lines, by (key, attempt).

    >>> superseded([])
    {}
    """
    out: dict[tuple[str, int], MovedRecord] = {}
    for event in events:
        if isinstance(event, CampaignIncomplete):
            for moved in event.moved:
                out[(moved.key, moved.attempt)] = moved
    return out


def as_kept(event: AttemptFinished, moved: dict[tuple[str, int], MovedRecord]) -> AttemptFinished:
    """``event`` as readers take it: naming the kept place and row if its record moved."""
    found = moved.get((event.key, event.attempt))
    if found is None or event.result != found.result_from:
        return event
    return event.model_copy(
        update={"result": found.result, "transcript": found.transcript, "row": found.row}
    )


def apply_moves(run_dir: Path, event: CampaignIncomplete) -> None:
    """Move what ``event`` names, once: a move already done (a resume after a crash in
    between) is skipped, and nothing is overwritten."""
    folders: set[Path] = set()
    for moved in event.moved:
        pairs = [(moved.result_from, moved.result)]
        if moved.transcript_from is not None and moved.transcript is not None:
            pairs.append((moved.transcript_from, moved.transcript))
        for source, target in pairs:
            old, new = run_dir / source, run_dir / target
            if old.is_file() and not new.exists():
                new.parent.mkdir(parents=True, exist_ok=True)
                os.rename(old, new)
                folders.update({old.parent, new.parent})
    for folder in sorted(folders):
        fsync_dir(folder)
