"""``--model-server local``: the run's openai agent talks to a llama-server pairbench starts.

The experiment keeps naming where the model is (``agent.settings.base_url``, a loopback URL
with its port); pairbench serves the local model there for the run's length, caps the run's
concurrency at the server's slots, and records the server's identity in run.json.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from pairbench._errors import ModelError
from pairbench.model._serve import LlamaServer, ServeConfig, identity
from pairbench.spec._load import LoadedExperiment

LOOPBACK = {"127.0.0.1", "localhost"}


def served_port(loaded: LoadedExperiment) -> int:
    """The one loopback port the experiment's openai arms name in ``base_url`` (or, for an
    experiment with ``proxy:``, the port of its upstream)."""
    exp = loaded.experiment
    if exp.proxy is not None:
        port = urlsplit(exp.proxy.upstream).port
        if port is None:
            raise ModelError(
                f"{loaded.path}: proxy.upstream {exp.proxy.upstream!r} names no port; "
                "--model-server local serves on one. Fix: http://127.0.0.1:<port>"
            )
        return port
    ports: dict[int, list[str]] = {}
    for arm in exp.arms:
        agent = exp.arm_agent(arm)
        if agent.adapter != "openai":
            continue
        url = urlsplit(str(agent.settings.get("base_url", "")))
        if url.hostname not in LOOPBACK or url.port is None:
            raise ModelError(
                f"{loaded.path}: arm {arm!r}: agent.settings.base_url is {url.geturl()!r}; "
                "--model-server local serves on this machine. Fix: set it to "
                "http://127.0.0.1:<port>/v1"
            )
        ports.setdefault(url.port, []).append(arm)
    if not ports:
        raise ModelError(
            f"{loaded.path}: no arm uses the openai agent, so --model-server local has nothing "
            "to serve. Fix: set agent.adapter: openai with base_url: http://127.0.0.1:<port>/v1"
        )
    if len(ports) > 1:
        named = "; ".join(f"{port}: {', '.join(arms)}" for port, arms in sorted(ports.items()))
        raise ModelError(
            f"{loaded.path}: the openai arms name different ports ({named}); one local server "
            "serves them all. Fix: give every arm the same base_url"
        )
    return next(iter(ports))


@contextmanager
def local_model_server(
    loaded: LoadedExperiment, config: ServeConfig | None = None
) -> Iterator[tuple[LlamaServer, dict[str, Any]]]:
    """The server at the experiment's port, and its identity for run.json; stopped after."""
    with LlamaServer.start(config, port=served_port(loaded)) as server:
        yield server, identity(server)
