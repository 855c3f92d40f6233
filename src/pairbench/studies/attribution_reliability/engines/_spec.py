"""How an arm names its engine: one frozen record, checked with messages that name the fix."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from pairbench._errors import SpecError
from pairbench._model import Frozen
from pairbench.studies.attribution_reliability.engines._env import template_problems

_PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_BY_ADAPTER: dict[str, frozenset[str]] = {
    "command": frozenset({"argv", "env"}),
    "python": frozenset({"target", "path", "settings", "env"}),
    "http": frozenset({"url", "headers"}),
}
"""The adapter-specific fields each built-in accepts; any other engine name is registered
and takes ``settings`` and ``env`` (it runs through the ``python`` adapter or its own)."""
_SPECIFIC = frozenset({"argv", "target", "path", "url", "headers"})


class EngineSpec(Frozen):
    """An arm's engine: which adapter runs it and with what.

    **Usage**::

        EngineSpec.parse({"engine": "command", "argv": ["./engine", "--json"]})
        EngineSpec.parse({"engine": "python", "target": "my_pkg.engine:Engine",
                          "path": ["src"], "settings": {"depth": 2}})
        EngineSpec.parse({"engine": "http", "url": "http://127.0.0.1:8900",
                          "headers": {"Authorization": "${env:ENGINE_TOKEN}"}})
        EngineSpec.parse({"engine": "heuristic", "timeout_s": 600})
    """

    engine: str = Field(min_length=1)
    """``command``, ``python``, ``http`` or a name registered under ``pairbench.engines``."""
    argv: list[str] | None = None
    """command: the program and its arguments (a leading ``python`` is this interpreter)."""
    target: str | None = None
    """python: ``module:Class`` implementing ``AttributionEngine`` (this package's)."""
    path: list[str] = Field(default_factory=list)
    """python: folders put on the worker's ``sys.path`` (relative to the experiment)."""
    url: str | None = None
    """http: the engine's base URL; pairbench POSTs ``<url>/scan`` or ``<url>/judge``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """http: sent with every request; ``${env:NAME}`` anywhere in a value is read from the
    runner's environment at run time (``Bearer ${env:TOKEN}``; ``$${`` is a literal ``${``)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """python and registered engines: the dict the engine class is built with."""
    env: dict[str, str] = Field(default_factory=dict)
    """command, python, registered: variables the engine gets beyond the scrubbed
    allow-list; a value may be ``${env:NAME}`` (read from the runner's environment)."""
    models: dict[str, str] = Field(default_factory=dict)
    """Declared models by role (``{"master": "openai:gpt-5-mini"}``), recorded in the
    engine's identity; pairbench does not enforce them."""
    efforts: dict[str, str] = Field(default_factory=dict)
    """Declared reasoning efforts by role, recorded like ``models``."""
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """The whole call's limit; default: users x ``seconds_per_user`` + 60 s."""
    contained: bool = True
    """command, python, registered: run the engine's process in the sandbox (bubblewrap:
    no run, experiment or pairbench folder, no other process's ``/proc``, a private
    ``HOME`` and ``TMPDIR``; see ``engines._contain``). ``false`` runs it on the host as is,
    and the report says so at the top; a held-out run is refused when containment is asked
    for and unavailable. pairbench's own engines (``heuristic``, ``openai``) are part of
    the harness and never contained."""

    @model_validator(mode="after")
    def _fits_adapter(self) -> EngineSpec:
        allowed = _BY_ADAPTER.get(self.engine, frozenset({"settings", "env"}))
        for name in sorted((_SPECIFIC | {"settings", "env"}) - allowed):
            if getattr(self, name):
                raise ValueError(
                    f"engine.{name}: the {self.engine!r} engine takes no {name!r}. "
                    f"Fix: remove it (this engine takes: {', '.join(sorted(allowed))})"
                )
        if self.engine == "http" and not self.contained:
            raise ValueError(
                "engine.contained: an http engine runs elsewhere; only a local engine "
                "(command, python, registered) is contained. Fix: remove 'contained'"
            )
        if self.engine == "command" and not self.argv:
            raise ValueError(
                "engine.argv: the command engine needs the program to run. "
                "Fix: argv: [./my-engine, --json]"
            )
        if self.engine == "python" and not (self.target and _TARGET.match(self.target)):
            raise ValueError(
                f"engine.target: {self.target!r} is not 'module:Class'. "
                "Fix: target: my_pkg.engine:MyEngine"
            )
        if self.engine == "http" and not (
            self.url and self.url.startswith(("http://", "https://"))
        ):
            raise ValueError(
                f"engine.url: {self.url!r} is not an http(s) URL. Fix: url: http://127.0.0.1:8900"
            )
        malformed = template_problems(self.headers, "headers")
        if malformed:
            raise ValueError(malformed[0])
        return self

    @classmethod
    def parse(cls, data: Mapping[str, Any], *, known: list[str] | None = None) -> EngineSpec:
        """Validate an arm's ``engine`` block; every problem is a ``SpecError`` naming the
        field and the fix. ``known`` (default: the registry) are the accepted names."""
        try:
            spec = cls.model_validate(dict(data))
        except ValidationError as exc:
            raise SpecError([_problem(err) for err in exc.errors()]) from None
        if known is None:
            from pairbench.studies.attribution_reliability.engines._resolve import engine_names

            known = engine_names()
        if spec.engine not in known:
            raise SpecError(
                [
                    f"engine.engine: no engine named {spec.engine!r} (known: "
                    f"{', '.join(known)}). Fix: use one of those, or install the package "
                    "that registers it under 'pairbench.engines'"
                ]
            )
        return spec

    def resolve(self, base_dir: Path) -> EngineSpec:
        """Relative program (and script, for ``python script.py``) and ``path`` entries
        made absolute against ``base_dir`` (the experiment's folder): an engine runs in its
        attempt's folder, and a run must not depend on the runner's working directory."""
        changes: dict[str, Any] = {}
        if self.argv:
            argv = list(self.argv)
            script = python_script_index(argv)
            for i in (0,) if script is None else (0, script):
                if _is_relative_file(argv[i]) or (i == script and not Path(argv[i]).is_absolute()):
                    argv[i] = str((base_dir / argv[i]).resolve())
            if argv != self.argv:
                changes["argv"] = argv
        if self.path:
            changes["path"] = [str((base_dir / p).resolve()) for p in self.path]
        return self.model_copy(update=changes) if changes else self


def python_script_index(argv: list[str]) -> int | None:
    """Where the script is in a ``python [options] script.py ...`` argv (None: not python,
    or ``-m``/``-c`` instead of a script).

    >>> python_script_index(["python3", "-u", "engine.py", "--json"])
    2
    >>> python_script_index(["python", "-m", "pkg"]) is None
    True
    """
    if not argv or not is_python(argv[0]):
        return None
    for i, arg in enumerate(argv[1:], start=1):
        if arg in ("-m", "-c"):
            return None
        if not arg.startswith("-"):
            return i
    return None


def is_python(program: str) -> bool:
    """Whether ``program`` names a Python interpreter (``python``, ``/usr/bin/python3.11``)."""
    return bool(_PYTHONS.match(Path(program).name))


def _is_relative_file(program: str) -> bool:
    # A bare name ("my-engine") is looked up on PATH; only a path with a slash is a file.
    return "/" in program and not Path(program).is_absolute()


def _problem(err: Any) -> str:
    message = str(err.get("msg", ""))
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    where = ".".join(str(part) for part in err.get("loc", ())) or "(all)"
    if err.get("type") == "extra_forbidden":
        fields = ", ".join(sorted(EngineSpec.model_fields))
        return f"engine.{where}: unknown field. Fix: remove it (fields: {fields})"
    return f"engine.{where}: {message}. Fix: correct it in the arm's engine block"
