"""Pre-registration: the lock, identities, and verification of experiments and runs."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench.freeze._identity import run_identities
    from pairbench.freeze._lock import Lock, build_lock, read_lock, write_lock
    from pairbench.freeze._verify import Mismatch, diff_locks, verify_experiment
    from pairbench.freeze._verify_run import PARTIAL, RunCheck, check_run_integrity, verify_run

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Lock": "pairbench.freeze._lock",
        "Mismatch": "pairbench.freeze._verify",
        "PARTIAL": "pairbench.freeze._verify_run",
        "RunCheck": "pairbench.freeze._verify_run",
        "build_lock": "pairbench.freeze._lock",
        "check_run_integrity": "pairbench.freeze._verify_run",
        "diff_locks": "pairbench.freeze._verify",
        "read_lock": "pairbench.freeze._lock",
        "run_identities": "pairbench.freeze._identity",
        "verify_experiment": "pairbench.freeze._verify",
        "verify_run": "pairbench.freeze._verify_run",
        "write_lock": "pairbench.freeze._lock",
    },
)

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
