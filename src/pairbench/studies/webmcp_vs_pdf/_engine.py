"""Random-effects meta-analysis (REML) and Egger's regression test, following metafor.

The conventions are those of metafor's ``rma()`` and ``regtest()`` (see the study's
``methods.md``): REML by Fisher scoring from the Hedges (HE) start, stopped when the
change in tau^2 falls under 1e-5, tau^2 truncated at 0; Wald (normal) intervals and p
values; I^2 with the "typical" within-study variance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import stats

Vector = NDArray[np.float64]
EggerVariant = Literal["classic", "rma"]

_THRESHOLD = 1e-5  # metafor's control$threshold
_MAX_ITER = 100  # metafor's control$maxiter
_Z_975 = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class RandomEffectsFit:
    """An intercept-only random-effects model fitted by REML (metafor's ``rma(method="REML")``)."""

    k: int
    estimate: float
    se: float
    z: float
    p: float
    ci_lower: float
    ci_upper: float
    tau2: float
    I2: float
    """Percent, 0..100."""
    Q: float
    """Cochran's Q (the fixed-effect residual heterogeneity statistic, metafor's ``QE``)."""
    Q_p: float
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True)
class EggerTest:
    """One variant of Egger's regression test for funnel-plot asymmetry."""

    variant: EggerVariant
    z_or_t: float
    """The test statistic: t for ``classic``, z for ``rma``."""
    p: float
    df: int | None
    """Residual degrees of freedom of the t test; None for the z test."""
    method: str


@dataclass(frozen=True)
class _Reml:
    beta: Vector
    vcov: NDArray[np.float64]
    tau2: float


def default_labels(k: int) -> tuple[str, ...]:
    """The dataset's record names for ``k`` records: ``s01``, ``s02``, ..."""
    return tuple(f"s{i + 1:02d}" for i in range(k))


def _vectors(
    yi: Iterable[float], vi: Iterable[float], labels: Sequence[str] | None, exclude: Iterable[str]
) -> tuple[Vector, Vector, tuple[str, ...]]:
    y = np.asarray(list(yi), dtype=np.float64)
    v = np.asarray(list(vi), dtype=np.float64)
    if y.shape != v.shape or y.ndim != 1:
        raise ValueError(f"yi and vi must be equal-length vectors (got {y.shape} and {v.shape})")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise ValueError("yi must be finite and vi finite and positive")
    names = tuple(labels) if labels is not None else default_labels(len(y))
    if len(names) != len(y):
        raise ValueError(f"{len(names)} labels for {len(y)} records")
    dropped = tuple(dict.fromkeys(exclude))  # de-duplicated, order kept
    unknown = [name for name in dropped if name not in names]
    if unknown:
        raise ValueError(f"unknown record(s) {unknown}; records are {names[0]}..{names[-1]}")
    keep = np.array([name not in dropped for name in names])
    return y[keep], v[keep], dropped


def _reml(y: Vector, v: Vector, x: NDArray[np.float64]) -> _Reml:
    """metafor's REML Fisher scoring for ``rma.uni`` with design matrix ``x``."""
    k, p = x.shape
    if k <= p:
        raise ValueError(f"need more than {p} records to fit this model (got {k})")
    # Hedges (HE) start: OLS residual sum of squares minus its expectation under tau^2 = 0.
    p_ols = np.eye(k) - x @ np.linalg.solve(x.T @ x, x.T)
    rss = float(y @ p_ols @ y)
    tau2 = max(0.0, (rss - float(np.trace(p_ols @ np.diag(v)))) / (k - p))
    change, iteration = _THRESHOLD + 1.0, 0
    while change > _THRESHOLD:
        iteration += 1
        if iteration > _MAX_ITER:
            # metafor stops here too ("Fisher scoring algorithm did not converge"); the
            # step can oscillate when one precise record disagrees with many vague ones.
            raise ArithmeticError(f"REML Fisher scoring did not converge in {_MAX_ITER} iterations")
        w = np.diag(1.0 / (v + tau2))
        proj = w - w @ x @ np.linalg.solve(x.T @ w @ x, x.T @ w)
        pp = proj @ proj
        adj = (float(y @ pp @ y) - float(np.trace(proj))) / float(np.trace(pp))
        # Step-halving keeps tau^2 at or above its lower bound 0, as metafor does.
        while tau2 + adj < 0.0:
            adj /= 2.0
        old, tau2 = tau2, tau2 + adj
        change = abs(old - tau2)
    tau2 = max(0.0, tau2)
    if tau2 > 0.0 and _restricted_loglik(y, v, x, 0.0) > _restricted_loglik(y, v, x, tau2):
        # metafor's ll0check: Fisher scoring can stall at a positive value below the
        # likelihood at the boundary; it then reports tau^2 = 0.
        tau2 = 0.0
    w = np.diag(1.0 / (v + tau2))
    vcov: NDArray[np.float64] = np.asarray(np.linalg.inv(x.T @ w @ x), dtype=np.float64)
    beta = vcov @ x.T @ w @ y
    return _Reml(beta=beta, vcov=vcov, tau2=tau2)


def _restricted_loglik(y: Vector, v: Vector, x: NDArray[np.float64], tau2: float) -> float:
    w = np.diag(1.0 / (v + tau2))
    xtwx = x.T @ w @ x
    beta = np.linalg.solve(xtwx, x.T @ w @ y)
    resid = y - x @ beta
    _, logdet = np.linalg.slogdet(xtwx)
    return float(-0.5 * (np.sum(np.log(v + tau2)) + logdet + resid @ w @ resid))


def fit_random_effects(
    yi: Iterable[float],
    vi: Iterable[float],
    *,
    exclude: Iterable[str] = (),
    labels: Sequence[str] | None = None,
) -> RandomEffectsFit:
    """Fit the REML random-effects model, optionally without the named records.

    Records are named by ``labels`` (default ``s01``, ``s02``, ..., the dataset's ``record``
    column); an unknown name in ``exclude`` raises ``ValueError``.

    **Usage**::

        fit = fit_random_effects(yi, vi)                    # all records
        fit = fit_random_effects(yi, vi, exclude=["s04"])   # refit without s04
        fit.estimate, fit.ci_lower, fit.ci_upper, fit.p, fit.tau2, fit.I2
    """
    y, v, dropped = _vectors(yi, vi, labels, exclude)
    k = len(y)
    x = np.ones((k, 1))
    fit = _reml(y, v, x)
    estimate = float(fit.beta[0])
    se = float(np.sqrt(fit.vcov[0, 0]))
    z = estimate / se
    w = 1.0 / v
    fixed = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - fixed) ** 2))
    typical = (k - 1) * np.sum(w) / (np.sum(w) ** 2 - np.sum(w**2))
    return RandomEffectsFit(
        k=k,
        estimate=estimate,
        se=se,
        z=z,
        p=float(2.0 * stats.norm.sf(abs(z))),
        ci_lower=estimate - _Z_975 * se,
        ci_upper=estimate + _Z_975 * se,
        tau2=fit.tau2,
        I2=float(100.0 * fit.tau2 / (fit.tau2 + typical)),
        Q=q,
        Q_p=float(stats.chi2.sf(q, k - 1)),
        excluded=dropped,
    )


def egger_test(
    yi: Iterable[float], vi: Iterable[float], variant: EggerVariant = "classic"
) -> EggerTest:
    """Egger's regression test with the variant named (the study registers ``classic``).

    ``classic``: weighted least squares of yi on sqrt(vi), weights 1/vi, residual variance
    estimated (multiplicative dispersion), t test with k-2 df; metafor's
    ``regtest(x, model="lm")``. ``rma``: mixed-effects meta-regression on the standard
    error fitted by REML, z test; metafor's default ``regtest(rma(yi, vi))``.

    **Usage**::

        egger_test(yi, vi).p              # the registered classic test
        egger_test(yi, vi, "rma").z_or_t  # metafor's default, for comparison
    """
    y, v, _ = _vectors(yi, vi, None, ())
    k = len(y)
    x = np.column_stack([np.ones(k), np.sqrt(v)])
    if np.ptp(x[:, 1]) == 0.0:
        # With one common standard error the slope on it is not identified.
        raise ValueError("Egger's test needs records with different sampling variances")
    if variant == "classic":
        if k < 3:
            raise ValueError("the classic Egger test needs at least 3 records")
        w = 1.0 / v
        xtwx = x.T @ (w[:, None] * x)
        beta = np.linalg.solve(xtwx, x.T @ (w * y))
        resid = y - x @ beta
        df = k - 2
        dispersion = float(np.sum(w * resid**2) / df)
        with np.errstate(divide="ignore", invalid="ignore"):
            # A perfect fit (zero dispersion) gives t = +-inf or NaN, as R's lm does.
            t = float(beta[1] / np.sqrt(dispersion * np.linalg.inv(xtwx)[1, 1]))
        return EggerTest(
            variant="classic",
            z_or_t=t,
            p=float(2.0 * stats.t.sf(abs(t), df)),
            df=df,
            method="weighted regression of yi on sqrt(vi), weights 1/vi, "
            "multiplicative dispersion, t test (metafor regtest model='lm')",
        )
    if variant == "rma":
        fit = _reml(y, v, x)
        z = float(fit.beta[1] / np.sqrt(fit.vcov[1, 1]))
        return EggerTest(
            variant="rma",
            z_or_t=z,
            p=float(2.0 * stats.norm.sf(abs(z))),
            df=None,
            method="mixed-effects meta-regression on the standard error (REML), z test "
            "(metafor regtest default)",
        )
    raise ValueError(f"unknown Egger variant {variant!r}; use 'classic' or 'rma'")
