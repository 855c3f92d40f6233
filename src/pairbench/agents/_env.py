"""The scrubbed environment every agent and fixture process gets."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from pairbench._errors import SpecError
from pairbench.spec._models import env_ref

BASE_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SHELL", "USER", "LOGNAME")
"""Harness variables an agent inherits by default. Everything else must be declared."""


def scrubbed_env(
    workdir: Path,
    *,
    declared: Mapping[str, str] | None = None,
    allow: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
    create: bool = True,
    tmp: Path | None = None,
) -> dict[str, str]:
    """An allow-listed copy of ``source`` (default ``os.environ``) plus ``declared`` values
    (a ``${env:NAME}`` value read from ``source``: see :func:`resolve_declared`).

    ``HOME`` and ``TMPDIR`` point inside ``workdir`` so an agent's config and caches are
    isolated per attempt and never read the harness user's files. ``create=False`` names
    them without making them (for an in-process agent that never starts a process).
    ``tmp`` puts ``TMPDIR`` elsewhere: a short folder (Unix socket paths hold 108 bytes, and
    a browser or server binding one under a deep run folder fails).

    >>> env = scrubbed_env(Path("/tmp/w"), source={"PATH": "/bin", "API_KEY": "x"})
    >>> sorted(env)
    ['HOME', 'PATH', 'TMPDIR']
    """
    base = os.environ if source is None else source
    env = {name: base[name] for name in (*BASE_ALLOW, *allow) if name in base}
    home = workdir / "home"
    tmp = workdir / "tmp" if tmp is None else tmp
    if create:
        home.mkdir(parents=True, exist_ok=True)
        tmp.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(tmp)
    env.update(resolve_declared(declared or {}, base))
    return env


def resolve_declared(declared: Mapping[str, str], source: Mapping[str, str]) -> dict[str, str]:
    """``declared`` with each ``${env:NAME}`` value replaced by ``source[NAME]``.

    The value is read here, as the child's environment is built, and nowhere else: the
    experiment, its hash and run.json hold only the reference. Raises ``SpecError`` when
    ``NAME`` is unset (a run checks that at its start; a resume meets it here).

    >>> resolve_declared({"TOKEN": "${env:MY_TOKEN}", "MODE": "fast"}, {"MY_TOKEN": "t0k"})
    {'TOKEN': 't0k', 'MODE': 'fast'}
    """
    out: dict[str, str] = {}
    for key, value in declared.items():
        name = env_ref(value)
        if name is not None and name not in source:
            raise SpecError(
                [
                    f"agent.env.{key}: '{value}' reads the runner's {name}, which is not set. "
                    f"Fix: export {name}=... before running."
                ]
            )
        out[key] = value if name is None else source[name]
    return out
