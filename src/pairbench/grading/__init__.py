"""Graders, the validity classifier, security detectors and per-trial metrics."""

from pairbench.grading._exact import exact_answer
from pairbench.grading._metrics import compute_metrics
from pairbench.grading._protocol import GradeInput, Grader
from pairbench.grading._security import assess_security, find_secrets, injection_compliance
from pairbench.grading._validity import classify_validity, intended_surface

__all__ = [
    "GradeInput",
    "Grader",
    "assess_security",
    "classify_validity",
    "compute_metrics",
    "exact_answer",
    "find_secrets",
    "injection_compliance",
    "intended_surface",
]
