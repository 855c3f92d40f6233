"""The trial's site key: what makes a site's slug unguessable.

A slug drawn from the trial seed alone could be recomputed by anyone holding the
pre-registered experiment (its seed and schedule are published), mapping a start URL back to
its trial and so to its case; behind a public proxy it would also let anyone find the sites.
So the slug is an HMAC of the seed under a 256-bit key drawn from the operating system (a
capability, not an experimental draw: the seeded-randomness rule is for what must be
reproducible, and a secret must not be). Every arm and re-run of a trial must serve the
same slug (they judge one recorded package bundle), so the key is stored once per trial in
the trial's shared folder, created by whichever attempt gets there first.
"""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

from pairbench._atomic import write_atomic

KEY_NAME = ".site-key"
KEY_BYTES = 32


def trial_key(folder: Path | None) -> bytes:
    """The trial's key: read from ``folder``, or created there; a fresh one with no folder.

    >>> len(trial_key(None))
    32
    """
    if folder is None:
        return secrets.token_bytes(KEY_BYTES)
    path = folder / KEY_NAME
    if not path.is_file():
        # Another arm's attempt may store it first (FileExistsError): then use theirs.
        with contextlib.suppress(FileExistsError):
            write_atomic(path, secrets.token_bytes(KEY_BYTES).hex().encode(), overwrite=False)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())
