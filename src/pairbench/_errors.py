"""Errors a user can cause.

The hierarchy::

    PairbenchError                 one clear message with the fix; the CLI exits non-zero
    ├── SpecError                  experiment.yaml, or its lock, is invalid (every problem found)
    ├── RegistryError              an agent, grader, fixture or study name is not registered
    ├── ImportRefused              another harness's files cannot be imported as asked
    ├── RunDirError                a run directory is missing, corrupt, or would be overwritten
    ├── ResumeRefused              resume asked under a changed experiment
    ├── RunInUse                   another process is writing the run (run, resume or report)
    ├── RunRefused                 pre-registration forbids the run (unverified lock, ...)
    ├── RayExecutorError           the Ray executor cannot run as asked
    ├── ExportError                an export cannot be written as asked (no decision rule, ...)
    ├── ModelError                 the local model server cannot be built, installed or served
    ├── ProxyError                 the recording proxy cannot start or its log cannot be read
    ├── SlotInUse                  another process (or lease) holds a model endpoint's slot
    └── InfraStop                  a trial failed for infrastructure reasons twice
"""

from __future__ import annotations


class PairbenchError(Exception):
    """Base of every error pairbench raises on purpose; the CLI prints it without a traceback."""

    exit_code: int = 1


class SpecError(PairbenchError):
    """The experiment file is invalid; ``problems`` lists every problem found in one pass."""

    exit_code = 2

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class RegistryError(PairbenchError):
    """A name does not resolve to a registered plugin."""

    exit_code = 2


class ImportRefused(PairbenchError):
    """Another harness's files cannot be imported as asked (unreadable, unpaired, a mapping
    naming a missing column, ...); names the file, what is wrong and the fix. Nothing in the
    runs folder is touched."""

    exit_code = 2


class RunDirError(PairbenchError):
    """A run directory cannot be used as asked."""


class ResumeRefused(PairbenchError):
    """``resume`` refuses to continue a run under a different experiment."""


class RunInUse(PairbenchError):
    """Another live process holds the run's writer lock; names its PID and command."""

    exit_code = 75  # EX_TEMPFAIL: nothing is wrong with the run; try again once it is free


class RunRefused(PairbenchError):
    """A run that pre-registration forbids (unverified lock, a second held-out sitting)."""

    exit_code = 3


class RayExecutorError(PairbenchError):
    """The Ray executor cannot run as asked (not installed, unsafe warm servers, ...)."""


class ExportError(PairbenchError):
    """An export cannot be written as asked: a file it would overwrite, an optional
    dependency not installed, a JUnit gate with no declared decision rule, a stale summary."""


class ModelError(PairbenchError):
    """The local model cannot be built, installed or served as asked: a compiler missing, a
    build that failed, a GGUF whose sha256 differs, a server that did not come up."""


class ProxyError(PairbenchError):
    """The recording model proxy cannot run as asked (an upstream that is not an http URL)
    or its exchange log cannot be read (a line edited in the middle)."""


class SlotInUse(PairbenchError):
    """A model endpoint's slot lease is held elsewhere; names the endpoint and the holder's
    PID."""

    exit_code = 75  # EX_TEMPFAIL: try again once the other run has finished


class InfraStop(PairbenchError):
    """The run stopped because a trial failed twice for infrastructure reasons."""
