"""The mounted-byte proof: which files of an arm's runtime its processes actually loaded,
and whether their bytes are the production manifest's.

A probe (stdlib only, fixed bytes, identity ``PROBE_SHA256``) runs in every Python process
of a trial, children included, and appends each loaded file's SHA-256 to a log; the verdict
catches a shadowing copy on ``sys.path``, an edited worktree file and stale bytecode.

**Usage**::

    probe = install_probe(trial / "probe", Path(tree.path), ["minirt"], trial / "mounted.jsonl")
    env = {**env, **probe_env(probe, trial / "pycache", pythonpath=[tree.path])}
    ...                                                  # run the trial with env
    result = verdict(read_mounted(Path(probe.log_path)), tree.manifest, Path(tree.path),
                     probe.packages)
    require_mounted(result)     # MountMismatch (stops the run) on shadowed or mismatch
    result.mounted_hash, result.coverage                 # "…", "3/5"
"""

from pairbench.proof._errors import MountMismatch, ProofError
from pairbench.proof._install import (
    PROBE_FILES,
    PROBE_SHA256,
    ProbeInstall,
    install_probe,
    probe_env,
    probe_sha256,
)
from pairbench.proof._records import MountedFile, read_mounted
from pairbench.proof._verdict import MountProblem, MountVerdict, require_mounted, verdict

__all__ = [
    "PROBE_FILES",
    "PROBE_SHA256",
    "MountMismatch",
    "MountProblem",
    "MountVerdict",
    "MountedFile",
    "ProbeInstall",
    "ProofError",
    "install_probe",
    "probe_env",
    "probe_sha256",
    "read_mounted",
    "require_mounted",
    "verdict",
]
