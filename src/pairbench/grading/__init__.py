"""Graders, the validity classifier, security detectors and per-trial metrics."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ContainsArgs": "pairbench.grading._generic",
        "ExactArgs": "pairbench.grading._exact",
        "ExpectArgs": "pairbench.grading._args",
        "GradeInput": "pairbench.grading._protocol",
        "Grader": "pairbench.grading._protocol",
        "GraderArgs": "pairbench.grading._args",
        "JsonPathArgs": "pairbench.grading._generic",
        "NumberArgs": "pairbench.grading._generic",
        "RegexArgs": "pairbench.grading._generic",
        "assess_security": "pairbench.grading._security",
        "classify_validity": "pairbench.grading._validity",
        "compute_metrics": "pairbench.grading._metrics",
        "contains_answer": "pairbench.grading._generic",
        "exact_answer": "pairbench.grading._exact",
        "find_secrets": "pairbench.grading._security",
        "injection_compliance": "pairbench.grading._security",
        "intended_surface": "pairbench.grading._validity",
        "json_path_answer": "pairbench.grading._generic",
        "number_answer": "pairbench.grading._generic",
        "regex_answer": "pairbench.grading._generic",
        "with_args": "pairbench.grading._args",
    },
)

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
