"""Warm servers on every Ray node: an arm's HTTP servers where its attempts run.

A warm server listens on 127.0.0.1, so an attempt can reach only a server on its own
machine. On a cluster the driver's servers are out of reach of every other node; so one
actor pinned to each alive node (``NodeAffinitySchedulingStrategy``, hard) starts the
run's warm servers there, and an attempt uses the URLs of the node it landed on. Each
attempt's transcript says where it ran and whose servers it used (a ``placement`` event),
so a report can show that the pairing held on a cluster too.

``PAIRBENCH_RAY_SHARED_LOOPBACK=1`` turns this off: the driver's servers for every node
(a one-machine cluster whose nodes share the loopback).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

from pairbench.runner._warm import warm_folder, warm_specs
from pairbench.spec._load import LoadedExperiment

__all__ = ["NodeServers", "start_node_servers", "stop_node_servers"]


class NodeServers:
    """A Ray actor's body: the run's warm servers on the node it is pinned to."""

    def __init__(self, loaded: LoadedExperiment, run_dir: str) -> None:
        self._loaded = loaded
        self._run_dir = Path(run_dir)
        self._started: list[Any] = []
        self._tmps: list[Path] = []

    async def start(self) -> tuple[str, dict[str, dict[str, str]]]:
        """(this node's id, arm -> server -> URL); a server failing twice raises."""
        import ray

        from pairbench.fixtures._procs import FixtureError, start_warm_server

        node = str(ray.get_runtime_context().get_node_id())
        root = self._run_dir / "fixtures"
        root.mkdir(parents=True, exist_ok=True)
        urls: dict[str, dict[str, str]] = {}
        for arm, specs in warm_specs(self._loaded).items():
            for name, spec in specs.items():
                folder = self._run_dir / "work" / "_warm" / node[:12] / f"{arm}.{name}"
                env, cwd, tmp = warm_folder(folder, self._run_dir)
                self._tmps.append(tmp)
                try:
                    server = await start_warm_server(name, spec, root, env, cwd=cwd)
                except FixtureError:  # once more, as the driver's warm servers get
                    server = await start_warm_server(name, spec, root, env, cwd=cwd)
                self._started.append(server)
                urls.setdefault(arm, {})[name] = server.url
        return node, urls

    async def stop(self) -> None:
        for server in self._started:
            await server.aclose()
        for tmp in self._tmps:
            shutil.rmtree(tmp, ignore_errors=True)


async def start_node_servers(
    ray: Any, loaded: LoadedExperiment, run_dir: Path
) -> tuple[list[Any], dict[str, dict[str, dict[str, str]]]]:
    """One ``NodeServers`` actor per alive node; (actors, node id -> arm -> name -> URL)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actor_cls = ray.remote(num_cpus=0, max_restarts=0)(NodeServers)
    actors = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
        actors.append(actor_cls.options(scheduling_strategy=strategy).remote(loaded, str(run_dir)))
    by_node: dict[str, dict[str, dict[str, str]]] = {}
    try:
        for actor in actors:
            node, urls = await actor.start.remote()
            by_node[node] = urls
    except BaseException:
        stop_node_servers(ray, actors)
        raise
    return actors, by_node


def stop_node_servers(ray: Any, actors: list[Any], timeout_s: float = 30.0) -> None:
    """Stop every actor's servers, then the actors (a server dies with its actor anyway:
    each is started to die with the process that started it)."""
    if not actors:
        return
    # An actor already gone took its servers with it.
    with contextlib.suppress(Exception):
        ray.get([actor.stop.remote() for actor in actors], timeout=timeout_s)
    for actor in actors:
        ray.kill(actor)
