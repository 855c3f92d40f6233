"""Agreement statistics: repeatability across repeated runs, and a confusion matrix."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import NamedTuple, TypeVar

from pairbench.analysis._wilson import Proportion, wilson

Outcome = TypeVar("Outcome", bound=Hashable)


class Repeatability(NamedTuple):
    """How often repeated runs of the same case agree, each as k/n with Wilson.

    ``consistent`` and ``pairwise_agreement`` compare attributions (the outcomes
    after ``key``); ``exact_agreement`` compares the raw outcomes.
    """

    consistent: Proportion
    """Cases whose attribution is the same in every run / cases."""
    exact_agreement: Proportion
    """Cases whose raw outcome is the same in every run / cases."""
    pairwise_agreement: Proportion
    """Run pairs with the same attribution / run pairs, both summed over cases."""


def _identity(outcome: Hashable) -> Hashable:
    return outcome


def repeatability(
    outcomes_by_case: Mapping[str, Sequence[Outcome]],
    key: Callable[[Outcome], Hashable] | None = None,
) -> Repeatability:
    """Agreement of repeated runs of each case, as the reliability protocol defines it.

    ``outcomes_by_case`` maps a case id to the outcome of each of its runs. ``key``
    maps an outcome to its attribution (default: the outcome itself). For example, with
    outcomes "blamed" / "set aside" / "nothing reported", attribution is "product
    blamed or not"::

        >>> r = repeatability(
        ...     {"P01": ["blamed"] * 3,
        ...      "T01": ["set aside", "nothing", "nothing"],
        ...      "E01": ["blamed", "nothing", "blamed"]},
        ...     key=lambda outcome: outcome == "blamed",
        ... )
        >>> (r.consistent.k, r.consistent.n)  # P01 and T01: never blamed / always blamed
        (2, 3)
        >>> (r.exact_agreement.k, r.exact_agreement.n)  # only P01 is identical
        (1, 3)
        >>> (r.pairwise_agreement.k, r.pairwise_agreement.n)  # 3 + 3 + 1 of 3 pairs each
        (7, 9)

    Cases may have different numbers of runs; each contributes ``runs * (runs - 1) / 2``
    pairs to the pairwise denominator.

    Raises:
        ValueError: no cases, or a case with fewer than two runs (named in the message).
    """
    attribution: Callable[[Outcome], Hashable] = _identity if key is None else key
    if not outcomes_by_case:
        raise ValueError("repeatability needs at least one case with repeated runs")
    consistent = exact = agreeing_pairs = all_pairs = 0
    for case, outcomes in outcomes_by_case.items():
        if len(outcomes) < 2:
            raise ValueError(
                f"case {case!r} has {len(outcomes)} run(s); repeatability needs at least 2 "
                "runs per case (leave single-run cases out of the repeat subset)"
            )
        attributions = Counter(attribution(outcome) for outcome in outcomes)
        consistent += len(attributions) == 1
        exact += len(set(outcomes)) == 1
        # Agreeing pairs within a case: every pair of runs sharing an attribution.
        agreeing_pairs += sum(comb(count, 2) for count in attributions.values())
        all_pairs += comb(len(outcomes), 2)
    cases = len(outcomes_by_case)
    return Repeatability(
        consistent=wilson(consistent, cases),
        exact_agreement=wilson(exact, cases),
        pairwise_agreement=wilson(agreeing_pairs, all_pairs),
    )


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of (truth, outcome) pairs: rows are truth labels, columns outcome labels.

    **Usage**::

        m = confusion_matrix(["PRODUCT", "NOT_PRODUCT"], ["PRODUCT", "PRODUCT"])
        m.cell("NOT_PRODUCT", "PRODUCT")  # 1: a false blame
    """

    labels: list[Hashable]
    """Row labels (truth), in order; also the column labels unless the outcomes have
    their own vocabulary (``outcome_labels``)."""
    outcome_labels: list[Hashable]
    """Column labels (outcome), in order; equal to ``labels`` for a square matrix."""
    counts: list[list[int]]
    """``counts[i][j]``: items whose truth is ``labels[i]`` and outcome
    ``outcome_labels[j]``."""
    total: int
    """Number of items counted."""

    def cell(self, truth: Hashable, outcome: Hashable) -> int:
        """The count of items with this truth and this outcome.

        Raises:
            KeyError: a label not in this matrix.
        """
        if truth not in self.labels:
            raise KeyError(f"truth label {truth!r} is not among {self.labels}")
        if outcome not in self.outcome_labels:
            raise KeyError(f"outcome label {outcome!r} is not among {self.outcome_labels}")
        return self.counts[self.labels.index(truth)][self.outcome_labels.index(outcome)]


def _axis(given: Sequence[Hashable] | None, *seen: Sequence[Hashable]) -> list[Hashable]:
    if given is not None:
        axis = list(given)
        if len(set(axis)) != len(axis):
            raise ValueError(f"labels must be distinct, got {axis}")
        return axis
    # First appearance keeps the order deterministic for any hashable labels; sorted
    # order is nicer to read, so use it whenever the labels can be compared.
    first_seen = list(dict.fromkeys(label for values in seen for label in values))
    try:
        return sorted(first_seen)  # type: ignore[type-var]
    except TypeError:
        return first_seen


def confusion_matrix(
    truth: Sequence[Hashable],
    outcome: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
    outcome_labels: Sequence[Hashable] | None = None,
) -> ConfusionMatrix:
    """Cross-tabulate ground truth (rows) against outcome (columns), item by item.

    By default both axes share one set of labels, as when outcomes predict the truth:
    ``labels`` if given, else every label seen in either sequence, sorted when they
    can be compared (else in order of first appearance). When the outcomes have their
    own vocabulary (truth PRODUCT / NOT_PRODUCT against outcome blamed / set aside /
    nothing), give ``outcome_labels`` for the columns; ``labels`` (or the labels seen
    in ``truth``) then names the rows. A label never seen gets a row or column of zeros.

    Example::

        >>> m = confusion_matrix(["a", "a", "b"], ["a", "b", "b"])
        >>> (m.labels, m.counts, m.total)
        (['a', 'b'], [[1, 1], [0, 1]], 3)
        >>> m.cell("a", "b")
        1
        >>> confusion_matrix(["P", "N"], ["blamed", "nothing"],
        ...                  outcome_labels=["blamed", "set aside", "nothing"]).counts
        [[0, 0, 1], [1, 0, 0]]

    Raises:
        ValueError: the sequences differ in length, a label is repeated, or a value is
            missing from the labels given.
    """
    if len(truth) != len(outcome):
        raise ValueError(
            f"confusion_matrix needs one outcome per truth: got {len(truth)} truths and "
            f"{len(outcome)} outcomes"
        )
    if outcome_labels is None:
        rows = columns = _axis(labels, truth, outcome)
    else:
        rows, columns = _axis(labels, truth), _axis(outcome_labels)
    row_index = {label: i for i, label in enumerate(rows)}
    column_index = {label: j for j, label in enumerate(columns)}
    counts = [[0] * len(columns) for _ in rows]
    for t, o in zip(truth, outcome, strict=True):
        if t not in row_index:
            raise ValueError(f"truth value {t!r} is not among the labels {rows}")
        if o not in column_index:
            raise ValueError(f"outcome value {o!r} is not among the labels {columns}")
        counts[row_index[t]][column_index[o]] += 1
    return ConfusionMatrix(labels=rows, outcome_labels=columns, counts=counts, total=len(truth))
