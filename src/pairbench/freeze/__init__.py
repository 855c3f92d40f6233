"""Pre-registration: the lock, identities, and verification of experiments and runs."""

from pairbench.freeze._identity import run_identities
from pairbench.freeze._lock import Lock, build_lock, read_lock, write_lock
from pairbench.freeze._verify import Mismatch, diff_locks, verify_experiment
from pairbench.freeze._verify_run import PARTIAL, RunCheck, check_run_integrity, verify_run

__all__ = [
    "PARTIAL",
    "Lock",
    "Mismatch",
    "RunCheck",
    "build_lock",
    "check_run_integrity",
    "diff_locks",
    "read_lock",
    "run_identities",
    "verify_experiment",
    "verify_run",
    "write_lock",
]
