"""Checks of an experiment's secrets: declared names, ``${env:NAME}`` values, lengths.

What the models cannot check alone: a ``secrets`` name must be a variable some arm's agent
sets or inherits, a ``${env:NAME}`` reference must be the whole value, and a secret value
must be long enough to be told apart from ordinary text. With the runner's environment
given (``check``, and every run at its start), each referenced variable must be set.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from pairbench._errors import SpecError
from pairbench.spec._models import MIN_SECRET_CHARS, Experiment, env_ref
from pairbench.spec._yaml import Found, Part, Problem, _get, format_path, load_yaml_with_lines

_SHORT = f"shorter than {MIN_SECRET_CHARS} characters, too short to find and redact reliably"


def _agents(data: dict[str, Any]) -> list[tuple[tuple[Part, ...], dict[str, Any]]]:
    """(where, agent) of every agent an arm runs: an arm's own, or the experiment's."""
    raw = data.get("arms")
    arms: dict[str, Any] = raw if isinstance(raw, dict) else {}
    found: list[tuple[tuple[Part, ...], Any]] = []
    if not arms or any(_get(arm, ("agent",)) is None for arm in arms.values()):
        found.append((("agent",), data.get("agent")))
    found += [(("arms", a, "agent"), _get(arm, ("agent",))) for a, arm in arms.items()]
    return [(where, agent) for where, agent in found if isinstance(agent, dict)]


def _env(agent: dict[str, Any]) -> dict[str, Any]:
    env = agent.get("env")
    return env if isinstance(env, dict) else {}


def _allow(agent: dict[str, Any]) -> list[Any]:
    allow = agent.get("env_allow")
    return allow if isinstance(allow, list) else []


def _server_refs(data: dict[str, Any]) -> Iterator[tuple[tuple[Part, ...], str]]:
    """(where, value) of every MCP server header and bearer value, in every arm."""
    raw = data.get("arms")
    arms: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for arm_name, arm in arms.items():
        mcp = _get(arm, ("tools", "mcp"))
        for name, server in mcp.items() if isinstance(mcp, dict) else []:
            if not isinstance(server, dict):
                continue
            where: tuple[Part, ...] = ("arms", arm_name, "tools", "mcp", name)
            headers = server.get("headers")
            for header, value in headers.items() if isinstance(headers, dict) else []:
                if isinstance(value, str):
                    yield (*where, "headers", str(header)), value
            if isinstance(server.get("bearer"), str):
                yield (*where, "bearer"), server["bearer"]


def _server_problems(data: dict[str, Any], environ: Mapping[str, str] | None) -> Iterator[Found]:
    """A header or bearer that reads an unset runner variable, or one too short."""
    for where, value in _server_refs(data):
        ref = env_ref(value)
        if ref is None or environ is None:
            continue
        if ref not in environ:
            yield (
                where,
                f"'{value}' reads the runner's {ref}, which is not set",
                f"export {ref}=... before running (its value is sent to the server and never "
                "stored)",
            )
        elif len(environ[ref]) < MIN_SECRET_CHARS:
            yield (
                where,
                f"the runner's {ref} (read by '{value}') is {_SHORT}",
                f"use a secret of at least {MIN_SECRET_CHARS} characters",
            )


def secret_problems(data: dict[str, Any], environ: Mapping[str, str] | None) -> Iterator[Found]:
    """Every problem with the experiment's secrets, on the raw data (or a model dump).

    ``environ`` is the runner's environment; None skips what depends on it (``load`` and
    ``freeze`` need no secret set, only ``check`` and a run do).
    """
    agents = _agents(data)
    declared = {str(k) for _, a in agents for k in _env(a)}
    declared |= {str(n) for _, a in agents for n in _allow(a)}
    raw = data.get("secrets")
    listed: list[Any] = raw if isinstance(raw, list) else []
    for i, name in enumerate(listed):
        if isinstance(name, str) and name not in declared:
            yield (
                ("secrets", i),
                f"secret '{name}' is not a variable of any arm's agent (in 'env' or "
                "'env_allow'), so there is no value to keep secret",
                f"set it in an agent's 'env' (e.g. {name}: ${{env:{name}}}) or list it in "
                "'env_allow', or remove it from 'secrets'",
            )
    yield from _server_problems(data, environ)
    names = {str(n) for n in listed}
    names |= {str(k) for _, a in agents for k, v in _env(a).items() if _is_ref(v)}
    for where, agent in agents:
        for key, value in _env(agent).items():
            if isinstance(value, str):
                yield from _value(where, str(key), value, str(key) in names, environ)
        for j, allowed in enumerate(_allow(agent)):
            value = None if environ is None else environ.get(str(allowed))
            if allowed in names and value is not None and len(value) < MIN_SECRET_CHARS:
                yield (
                    (*where, "env_allow", j),
                    f"the runner's {allowed} is secret and {_SHORT}",
                    f"use a value of at least {MIN_SECRET_CHARS} characters, or remove "
                    f"'{allowed}' from 'secrets'",
                )


def _is_ref(value: Any) -> bool:
    return isinstance(value, str) and env_ref(value) is not None


def _value(
    where: tuple[Part, ...], key: str, value: str, secret: bool, environ: Mapping[str, str] | None
) -> Iterator[Found]:
    at = (*where, "env", key)
    ref = env_ref(value)
    if ref is None and "${env:" in value:
        yield (
            at,
            f"'{value}' reads a variable in part of the value; only a whole value can be "
            "'${env:NAME}'",
            "write the value as ${env:NAME} alone, and put the whole value (e.g. "
            "'Bearer ...') in the runner's variable",
        )
    elif ref is None and secret and len(value) < MIN_SECRET_CHARS:
        yield (
            at,
            f"the value of secret '{key}' is {_SHORT}",
            f"use a secret of at least {MIN_SECRET_CHARS} characters, or remove '{key}' "
            "from 'secrets'",
        )
    elif ref is not None and environ is not None and ref not in environ:
        yield (
            at,
            f"'{value}' reads the runner's {ref}, which is not set",
            f"export {ref}=... before running (its value is read when the run starts and "
            "is never stored), or write the value in the experiment",
        )
    elif ref is not None and environ is not None and len(environ[ref]) < MIN_SECRET_CHARS:
        yield (
            at,
            f"the runner's {ref} (read by '{value}') is {_SHORT}",
            f"use a secret of at least {MIN_SECRET_CHARS} characters",
        )


def require_secrets(
    experiment: Experiment, path: str, environ: Mapping[str, str] | None = None
) -> None:
    """Raise ``SpecError`` (file, line, field, fix) when a run cannot start with the
    runner's ``environ`` (default ``os.environ``): a ``${env:NAME}`` it reads is unset, or
    a secret is too short.

    The file is read again only for the lines of the problems found.
    """
    env = os.environ if environ is None else environ
    found = list(secret_problems(experiment.model_dump(mode="json"), env))
    if not found:
        return
    lines = None
    with contextlib.suppress(SpecError, OSError):
        lines = load_yaml_with_lines(path).lines
    problems = [
        Problem(path, lines.line(format_path(p)) if lines else None, format_path(p), m, f)
        for p, m, f in found
    ]
    raise SpecError([str(p) for p in problems])
