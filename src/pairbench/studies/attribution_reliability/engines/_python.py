"""The ``python`` adapter: a ``module:Class`` engine, run in a worker subprocess."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from pairbench.agents._env import scrubbed_env
from pairbench.agents._protocol import RunSignals
from pairbench.studies.attribution_reliability.engines import _worker
from pairbench.studies.attribution_reliability.engines._contain import (
    API_MOUNT,
    engine_api,
    pairbench_module,
    sandbox_program,
    sandboxed,
)
from pairbench.studies.attribution_reliability.engines._env import resolve_refs
from pairbench.studies.attribution_reliability.engines._models import EngineRequest
from pairbench.studies.attribution_reliability.engines._outcome import EngineOutcome
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec
from pairbench.studies.attribution_reliability.engines._subprocess import (
    Exited,
    Verdict,
    exit_verdict,
    run_process,
)

SRC_ROOT = str(Path(__file__).resolve().parents[__name__.count(".")])
"""Where this pairbench is imported from (the folder holding ``pairbench/``, one level up per
dot in this module's name): the worker must run this very code, even when the interpreter's
installed pairbench is another checkout."""


class PythonEngine:
    """Runs ``spec.target`` (an ``AttributionEngine`` class) in ``python -m ..._worker``: an
    exception, a crash (even ``os._exit``), a hang or a return value that is not a report is
    the engine's runtime failure, never the runner's.

    The worker runs in the sandbox (``engines._contain``) unless the spec says ``contained:
    false`` or the target is pairbench's own: it sees the interpreter, its site-packages
    (any ``pairbench`` in them hidden), the spec's ``path`` folders and a copy of the engine
    API alone (``engine_api``: the records, the protocol and the worker), not pairbench.

    **Usage**::

        spec = EngineSpec.parse({"engine": "python", "target": "my_pkg.engine:Engine"})
        outcome = await PythonEngine(spec).run(request, env=os.environ, workdir=w,
                                               timeout_s=600, signals=EngineSignals())
    """

    adapter: ClassVar[str] = "python"

    def __init__(self, spec: EngineSpec, *, hide: Sequence[Path] = ()) -> None:
        assert spec.target, "EngineSpec.parse checks a python engine's target"
        self.spec = spec
        self.target = spec.target
        self.hide = tuple(hide)

    async def run(
        self,
        request: EngineRequest,
        *,
        env: Mapping[str, str],
        workdir: Path,
        timeout_s: float,
        signals: RunSignals,
    ) -> EngineOutcome:
        del signals  # only an http engine's refusals depend on the run's history
        child_env = scrubbed_env(
            workdir, declared=resolve_refs(self.spec.env, env, "env"), source=env
        )
        declared = [child_env["PYTHONPATH"]] if "PYTHONPATH" in child_env else []
        program = sandbox_program(self.spec.contained and not pairbench_module(self.target))
        api = SRC_ROOT if program is None else API_MOUNT
        child_env["PYTHONPATH"] = os.pathsep.join([*self.spec.path, *declared, api])
        payload = {"settings": self.spec.settings, "request": request.wire()}
        argv = [sys.executable, "-m", _worker.__name__, self.target]
        if program is not None:
            argv, child_env = sandboxed(
                argv, child_env, program=program, show=[Path(p) for p in self.spec.path],
                hide=self.hide, api=engine_api(workdir),
            )  # fmt: skip
        return await run_process(
            argv,
            json.dumps(payload).encode("utf-8"),
            env=child_env,
            workdir=workdir,
            timeout_s=timeout_s,
            who=f"the python engine {self.target}",
            explain=self._explain,
        )

    def _explain(self, ended: Exited) -> Verdict:
        lines = ended.stderr.rstrip("\n").splitlines()
        last = lines[-1] if lines else ""
        # The worker's own codes count only with its last words: an engine may exit 70 too.
        if not last.startswith(_worker.PREFIX):
            return exit_verdict(ended)
        said = last.removeprefix(_worker.PREFIX)
        if ended.code == _worker.EXIT_NOT_A_REPORT:
            return Verdict("invalid_report", said)
        if ended.code in (_worker.EXIT_RAISED, _worker.EXIT_NO_ENGINE):
            return Verdict("crash", said)
        return exit_verdict(ended)
