"""The ``command`` adapter: any program that reads a request on stdin and prints a report."""

from __future__ import annotations

import errno
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from pairbench._process import resolve_argv
from pairbench.agents._env import scrubbed_env
from pairbench.agents._protocol import RunSignals
from pairbench.studies.attribution_reliability.engines._contain import (
    program_folders,
    sandbox_program,
    sandboxed,
)
from pairbench.studies.attribution_reliability.engines._env import resolve_refs
from pairbench.studies.attribution_reliability.engines._models import EngineRequest
from pairbench.studies.attribution_reliability.engines._outcome import EngineOutcome
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec
from pairbench.studies.attribution_reliability.engines._subprocess import run_process


class CommandEngine:
    """Runs ``spec.argv`` once per call in its own process group with a scrubbed env, in
    the sandbox (``engines._contain``) unless the spec says ``contained: false``; ``hide``
    are folders kept out of it even inside the program's own (the experiment, the runs).

    The request is the JSON object on its stdin (closed after it); the report is the one
    JSON object on its stdout. Anything else (a non-zero exit, other text, a report that
    does not validate, the deadline) is a runtime failure of a named kind.

    **Usage**::

        engine = CommandEngine(EngineSpec.parse({"engine": "command", "argv": ["./eng"]}))
        outcome = await engine.run(request, env=os.environ, workdir=w, timeout_s=600,
                                   signals=EngineSignals())
    """

    adapter: ClassVar[str] = "command"

    def __init__(self, spec: EngineSpec, *, hide: Sequence[Path] = ()) -> None:
        assert spec.argv, "EngineSpec.parse checks a command engine's argv"
        self.spec = spec
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
        assert self.spec.argv is not None
        child_env = scrubbed_env(
            workdir, declared=resolve_refs(self.spec.env, env, "env"), source=env
        )
        argv = resolve_argv(self.spec.argv)
        program = sandbox_program(self.spec.contained)
        if program is not None:
            # bwrap would start and then fail to exec it (a crash); a program that cannot
            # be started is the arm's set-up, as it is uncontained (run_engine: infra).
            if shutil.which(argv[0], path=child_env.get("PATH")) is None:
                raise FileNotFoundError(errno.ENOENT, "no such executable program", argv[0])
            argv, child_env = sandboxed(
                argv, child_env, program=program, show=program_folders(argv), hide=self.hide
            )
        return await run_process(
            argv,
            json.dumps(request.wire()).encode("utf-8"),
            env=child_env,
            workdir=workdir,
            timeout_s=timeout_s,
            who=f"the command engine {self.spec.argv[0]!r}",
        )
