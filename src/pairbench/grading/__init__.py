"""Graders, the validity classifier, security detectors and per-trial metrics."""

from pairbench.grading._args import ExpectArgs, GraderArgs, with_args
from pairbench.grading._exact import ExactArgs, exact_answer
from pairbench.grading._generic import (
    ContainsArgs,
    JsonPathArgs,
    NumberArgs,
    RegexArgs,
    contains_answer,
    json_path_answer,
    number_answer,
    regex_answer,
)
from pairbench.grading._metrics import compute_metrics
from pairbench.grading._protocol import GradeInput, Grader
from pairbench.grading._security import assess_security, find_secrets, injection_compliance
from pairbench.grading._validity import classify_validity, intended_surface

__all__ = [
    "ContainsArgs",
    "ExactArgs",
    "ExpectArgs",
    "GradeInput",
    "Grader",
    "GraderArgs",
    "JsonPathArgs",
    "NumberArgs",
    "RegexArgs",
    "assess_security",
    "classify_validity",
    "compute_metrics",
    "contains_answer",
    "exact_answer",
    "find_secrets",
    "injection_compliance",
    "intended_surface",
    "json_path_answer",
    "number_answer",
    "regex_answer",
    "with_args",
]
