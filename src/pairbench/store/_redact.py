"""Keeping secret values out of everything a run stores.

A run's secrets are known by name and value: the harness canary (``PAIRBENCH_CANARY``),
the variables an experiment declares secret (``secrets:``, and every ``agent.env`` value
written ``${env:NAME}``), and each ``agent.env_allow`` variable whose value has at least
``MIN_SECRET_CHARS`` characters. A :class:`Redactor` replaces each value with
``[redacted:NAME]`` in transcripts, results and the files an attempt leaves in the run
folder. Detectors and graders see the values first (they run before anything is stored),
so a leak is still found and its verdict is stored in the result.

Where a value is named rather than used (``run.json``'s experiment model, agents and
identities), a literal secret is stored as :func:`stored_secret`:
``{"name": "API_TOKEN", "sha256": "<hex of its UTF-8 bytes>"}``: runs with the same secret
still compare equal, and the value itself is never written.

**Usage**::

    r = Redactor({"API_TOKEN": "tok-12345678"})
    r.redact('key is tok-12345678')   # 'key is [redacted:API_TOKEN]'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pairbench.spec._models import MIN_SECRET_CHARS, env_ref
from pairbench.store._walk import walk_tree

CHUNK_BYTES = 1 << 20
"""How much of a file redaction reads at a time (plus the longest value, carried over)."""

__all__ = ["CHUNK_BYTES", "MIN_SECRET_CHARS", "Redactor", "stored_env", "stored_secret"]


def _forms(value: str) -> list[str]:
    """The spellings a value takes in stored text: as it is, JSON-escaped (as a transcript
    line writes it, with and without ``ensure_ascii``), and escaped twice (JSON text the
    agent printed, inside a transcript line)."""
    once = [json.dumps(value, ensure_ascii=ascii)[1:-1] for ascii in (False, True)]
    twice = [json.dumps(f, ensure_ascii=ascii)[1:-1] for f in once for ascii in (False, True)]
    return list(dict.fromkeys([value, *once, *twice]))


class Redactor:
    """Replaces the values of a run's secrets with ``[redacted:NAME]``.

    Longest value first: a value that contains another is replaced whole, not in pieces.
    An empty value is ignored (it would match everywhere).

    >>> r = Redactor({"A": "secret-value-1", "B": 'quote"inside!'})
    >>> r.redact('x secret-value-1 y')
    'x [redacted:A] y'
    >>> r.redact(json.dumps({"v": 'quote"inside!'}))
    '{"v": "[redacted:B]"}'
    >>> r.redact_data({"secret-value-1": ["secret-value-1", 3]})
    {'[redacted:A]': ['[redacted:A]', 3]}
    """

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.secrets = {name: value for name, value in secrets.items() if value}
        labels: dict[str, str] = {}
        for name, value in sorted(self.secrets.items(), key=lambda kv: -len(kv[1])):
            for form in _forms(value):
                labels.setdefault(form, f"[redacted:{name}]")
        self._labels = labels
        ordered = sorted(labels, key=len, reverse=True)
        # Python's alternation takes the first branch that matches at a position: with the
        # longest first, that is the longest match.
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._bytes = (
            re.compile(b"|".join(re.escape(f.encode("utf-8")) for f in ordered))
            if ordered
            else None
        )
        self._longest = max((len(f.encode("utf-8")) for f in ordered), default=1)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def found(self, text: str) -> bool:
        """Does ``text`` hold any secret value (in any of its spellings)?"""
        return self._text is not None and self._text.search(text) is not None

    def found_bytes(self, data: bytes) -> bool:
        """Does ``data`` (a file's bytes) hold any secret value (in any UTF-8 spelling)?"""
        return self._bytes is not None and self._bytes.search(data) is not None

    def redact(self, text: str) -> str:
        """``text`` with every spelling of every value replaced by its label."""
        if self._text is None:
            return text
        return self._text.sub(lambda m: self._labels[m.group(0)], text)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` (a file's bytes) with the UTF-8 spellings of every value replaced."""
        if self._bytes is None:
            return data
        return self._bytes.sub(
            lambda m: self._labels[m.group(0).decode("utf-8")].encode("utf-8"), data
        )

    def redact_data(self, data: Any) -> Any:
        """JSON-like data with every string (keys too) redacted; other values kept as they
        are, so a record keeps its shape and still validates."""
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, dict):
            return {
                (self.redact(k) if isinstance(k, str) else k): self.redact_data(v)
                for k, v in data.items()
            }
        if isinstance(data, list | tuple):
            return [self.redact_data(item) for item in data]
        return data

    def redact_line(self, event: Mapping[str, Any]) -> str:
        """One transcript event as its JSON line (without the newline), redacted.

        The strings are redacted inside the structure, so the line stays valid JSON; what
        the structure cannot reach (a value inside a number, or an object written with
        ``str``) is then replaced in the text: keeping the value out wins over the shape.
        """
        line = json.dumps(event, ensure_ascii=False, default=str)
        if not self.found(line):
            return line
        redacted = json.dumps(self.redact_data(dict(event)), ensure_ascii=False, default=str)
        return self.redact(redacted)

    def redact_tree(self, folder: Path) -> list[Path]:
        """Rewrite every regular file under ``folder`` that holds a value; return them.

        Symlinks are never followed (an agent may leave one pointing at the harness's own
        files, or at ``/``), however deep the folders nest (``_walk``). Each file is read
        in chunks (:meth:`redact_file`), so a file of any size costs the same memory.
        """
        if self._bytes is None:
            return []
        changed: list[Path] = []
        for entry in walk_tree(folder):
            if entry.kind == "file" and self.redact_file(entry.path):
                changed.append(entry.path)
        return changed

    def redact_file(self, path: Path, chunk: int = CHUNK_BYTES) -> bool:
        """Replace every UTF-8 spelling of every value in the file at ``path``; True if it
        held one. Read ``chunk`` bytes at a time, twice only when a value is found.

        The file is replaced, not written in place, so a hard link an agent made to a file
        outside keeps that file's bytes. A file the harness cannot read is left (it cannot
        store it from here either).
        """
        if self._bytes is None:
            return False
        try:
            handle = path.open("rb")
        except OSError:
            return False
        with handle:
            try:
                if not self._stream(handle, None, chunk):
                    return False
            except OSError:
                return False
            handle.seek(0)
            # A failure from here on (a full disk) is raised: the value must not stay stored.
            _rewrite(path, lambda out: self._stream(handle, out, chunk))
        return True

    def _stream(self, source: BinaryIO, out: BinaryIO | None, chunk: int) -> bool:
        """Search ``source`` chunk by chunk (and, given ``out``, write it there redacted);
        True if a value was found.

        A value may straddle two chunks: the last ``longest - 1`` bytes of each read are
        carried into the next. A match is taken only where it starts at least ``longest``
        bytes before the end of what has been read (or anywhere at the end of the file),
        so the longest-first alternation sees as much as it would in the whole file, and
        replaces the same spans.
        """
        pattern = self._bytes
        assert pattern is not None
        longest = self._longest
        found = False
        carry = b""
        while True:
            block = source.read(max(chunk, longest))
            end = not block
            data = carry + block
            safe = len(data) if end else len(data) - longest + 1
            pos = 0
            for match in pattern.finditer(data, 0, len(data)):
                if match.start() < pos:
                    continue
                if match.start() >= safe:
                    break
                found = True
                if out is None:
                    return True
                out.write(data[pos : match.start()])
                out.write(self._labels[match.group(0).decode("utf-8")].encode("utf-8"))
                pos = match.end()
            keep = max(pos, safe)
            if out is not None:
                out.write(data[pos:keep])
            carry = data[keep:]
            if end:
                return found


def _rewrite(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Replace ``path`` by what ``write`` streams into a temporary file beside it."""
    try:
        _replace_with(path, write)
    except PermissionError:
        # An agent may leave a folder read-only; the harness's user owns it, so it may
        # open it again: a secret must not stay stored because a folder was locked.
        path.parent.chmod(path.parent.stat().st_mode | stat.S_IRWXU)
        _replace_with(path, write)


def _replace_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".redact.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stored_secret(name: str, value: str) -> dict[str, str]:
    """How ``run.json`` records a literal secret: its name and the SHA-256 of its value.

    >>> stored_secret("API_TOKEN", "abc")["sha256"][:12]
    'ba7816bf8f01'
    """
    return {"name": name, "sha256": hashlib.sha256(value.encode("utf-8")).hexdigest()}


def stored_env(env: Mapping[str, Any], names: Collection[str]) -> dict[str, Any]:
    """An environment mapping as stored: the string value of each secret name replaced by
    :func:`stored_secret` (a ``${env:NAME}`` reference holds no value and stays).

    >>> stored_env({"A": "x", "B": "${env:B}", "C": "pinned"}, {"A", "B"})["C"]
    'pinned'
    """
    out: dict[str, Any] = {}
    for key, value in env.items():
        literal = isinstance(value, str) and env_ref(value) is None
        out[key] = stored_secret(key, value) if key in names and literal else value
    return out
