"""``protected:`` folders: evidence no run may write (a historical campaign's results).

Before a run, and again before a resume, each declared folder is hashed whole (every
file, hidden ones too: relative path, mode and SHA-256 of its bytes, symlinks by their
target). A runs folder inside one is refused, so a run can never write there; the hashes
go into run.json (``identities.protected``), and a resume whose folder hashes differ from
them is refused naming the folder: the evidence the run was set beside has changed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pairbench._atomic import sha256_file
from pairbench._errors import ResumeRefused, RunRefused


def protected_sha256(root: Path) -> str:
    """SHA-256 over ``path\\0mode\\0sha256\\n`` of every entry under ``root``, sorted by path.

    A symlink counts by its target text (never followed), so a link out of the folder
    cannot make the hash read another tree.
    """
    digest = hashlib.sha256()
    entries: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in [*files, *(d for d in dirs if Path(folder, d).is_symlink())]:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            mode = os.lstat(path).st_mode
            if path.is_symlink():
                entries.append((rel, f"{mode:o}\0link:{os.readlink(path)}"))
            else:
                entries.append((rel, f"{mode:o}\0{sha256_file(path)}"))
    for rel, value in sorted(entries):
        digest.update(f"{rel}\0{value}\n".encode())
    return digest.hexdigest()


def _folders(declared: list[str], experiment_file: Path) -> dict[str, Path]:
    base = experiment_file.absolute().parent
    out: dict[str, Path] = {}
    for rel in declared:
        path = (base / rel).resolve()
        if not path.is_dir():
            raise RunRefused(
                f"protected folder {rel!r} ({path}) is not a folder: 'protected' names "
                "folders of evidence next to the experiment file; fix the path or remove it"
            )
        out[rel] = path
    return out


def check_protected(declared: list[str], experiment_file: Path, runs_dir: Path) -> dict[str, str]:
    """Each protected folder's hash; refuse a runs folder inside one.

    **Usage**::

        hashes = check_protected(["historical"], Path("experiment.yaml"), Path("runs"))
        hashes   # {'historical': '3f0c...'}

    Raises:
        RunRefused: a protected folder is missing, or ``runs_dir`` lies inside one.
    """
    folders = _folders(declared, experiment_file)
    runs = runs_dir.absolute().resolve()
    for rel, path in folders.items():
        if runs == path or runs.is_relative_to(path):
            raise RunRefused(
                f"the runs folder {runs_dir} is inside protected folder {rel!r}: a run never "
                "writes protected evidence; pass another --runs-dir"
            )
    return {rel: protected_sha256(path) for rel, path in folders.items()}


def check_protected_unchanged(
    recorded: dict[str, str], declared: list[str], experiment_file: Path, run_dir: Path
) -> None:
    """Refuse a resume when a protected folder's bytes differ from run.json's hash.

    Raises:
        ResumeRefused: naming each changed folder.
    """
    if not recorded and not declared:
        return
    now = {rel: protected_sha256(p) for rel, p in _folders(declared, experiment_file).items()}
    changed = [
        f"{rel} (sha256 {recorded.get(rel)} then, {now.get(rel)} now)"
        for rel in sorted(set(recorded) | set(now))
        if recorded.get(rel) != now.get(rel)
    ]
    if changed:
        raise ResumeRefused(
            f"refusing to resume {run_dir.name}: protected folder(s) changed since the run "
            f"started: {'; '.join(changed)}. Protected evidence is never written: restore it "
            "from its original copy, or start a new run"
        )
