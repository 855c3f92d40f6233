"""The REML engine and Egger's test, pinned to metafor 3.8.1's numbers (see test_metafor.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench.studies.webmcp_vs_pdf import (
    METHODS_PATH,
    egger_test,
    fit_dataset,
    fit_random_effects,
    load_dataset,
)

# rma(yi, vi, data=dat, method="REML") and the refit without s04, printed with %.15g.
FULL = {
    "k": 19,
    "estimate": 0.0837082352826429,
    "se": 0.0516456810589127,
    "ci_lower": -0.0175154395498685,
    "ci_upper": 0.184931910115154,
    "p": 0.10505673594797,
    "tau2": 0.0188263480558419,
    "I2": 41.8570912145439,
    "Q": 35.8295362995928,
    "Q_p": 0.00741931325487901,
}
NO_S04 = {
    "k": 18,
    "estimate": 0.0577387029491223,
    "se": 0.0443494285337524,
    "ci_lower": -0.0291845797119654,
    "ci_upper": 0.14466198561021,
    "p": 0.192949169898565,
    "tau2": 0.00799293105306583,
    "I2": 24.241511524411,
    "Q": 26.7304552778012,
    "Q_p": 0.0621411544493094,
}


def _yv() -> tuple[list[float], list[float]]:
    records = load_dataset()
    return [r.yi for r in records], [r.vi for r in records]


@pytest.mark.parametrize(("exclude", "expected"), [((), FULL), (("s04",), NO_S04)])
def test_fit_matches_metafor_pins(exclude: tuple[str, ...], expected: dict[str, float]) -> None:
    fit = fit_dataset(exclude)
    for name, value in expected.items():
        assert getattr(fit, name) == pytest.approx(value, abs=1e-9, rel=1e-9), name
    assert fit.excluded == exclude


def test_default_labels_address_the_record_column() -> None:
    yi, vi = _yv()
    assert fit_random_effects(yi, vi, exclude=["s04"]) == fit_dataset(("s04",))
    assert fit_random_effects(yi, vi, exclude=["s04", "s04"]).k == 18


def test_unknown_record_is_refused_with_the_valid_names() -> None:
    yi, vi = _yv()
    with pytest.raises(ValueError, match=r"s99.*s01\.\.s19"):
        fit_random_effects(yi, vi, exclude=["s99"])


@pytest.mark.parametrize(
    ("yi", "vi"), [([0.1, 0.2], [0.01]), ([0.1, math.nan], [0.01, 0.02]), ([0.1], [0.0])]
)
def test_bad_input_is_refused(yi: list[float], vi: list[float]) -> None:
    with pytest.raises(ValueError):
        fit_random_effects(yi, vi)


def test_egger_variants_match_metafor_pins_and_are_labelled() -> None:
    yi, vi = _yv()
    classic = egger_test(yi, vi)
    assert (classic.variant, classic.df) == ("classic", 17)
    assert classic.z_or_t == pytest.approx(2.03795466852247, abs=1e-9)
    assert classic.p == pytest.approx(0.0574255742993977, abs=1e-9)
    assert "model='lm'" in classic.method
    mixed = egger_test(yi, vi, "rma")
    assert (mixed.variant, mixed.df) == ("rma", None)
    assert mixed.z_or_t == pytest.approx(2.52612403548396, abs=1e-6)
    assert mixed.p == pytest.approx(0.0115328755252999, abs=1e-6)
    with pytest.raises(ValueError, match="variant"):
        egger_test(yi, vi, "peters")  # type: ignore[arg-type]


def test_homogeneous_data_gives_tau2_zero_and_fixed_effect_answer() -> None:
    # Identical effects: Q = 0, REML truncates tau^2 at 0 and the fit is the fixed effect.
    fit = fit_random_effects([0.2, 0.2, 0.2, 0.2], [0.01, 0.02, 0.03, 0.04])
    assert fit.tau2 == 0.0 and fit.I2 == 0.0 and abs(fit.Q) < 1e-12
    w = 1 / np.array([0.01, 0.02, 0.03, 0.04])
    assert fit.se == pytest.approx(1 / math.sqrt(w.sum()))


def test_the_methods_text_formulas_reproduce_the_engine() -> None:
    # methods.md spells out the Fisher-scoring step for the intercept-only model; an agent
    # following it literally must land on the engine's numbers.
    assert "2 sum(wi^3) / W" in " ".join(METHODS_PATH.read_text().split())
    y, v = (np.array(a) for a in _yv())
    tau2 = max(0.0, float(np.sum((y - y.mean()) ** 2) / (len(y) - 1) - v.mean()))
    change = 1.0
    while change >= 1e-5:
        w = 1 / (v + tau2)
        big_w, s2, s3 = w.sum(), (w**2).sum(), (w**3).sum()
        mu = (w * y).sum() / big_w
        num = (w**2 * (y - mu) ** 2).sum() - (big_w - s2 / big_w)
        adj = num / (s2 - 2 * s3 / big_w + (s2 / big_w) ** 2)
        while tau2 + adj < 0:
            adj /= 2
        change, tau2 = abs(adj), tau2 + adj
    assert tau2 == pytest.approx(FULL["tau2"], abs=1e-12)


def test_non_convergence_fails_like_metafor() -> None:
    # rma(c(0,1,1,1,1), c(0.125,1,1,1,1), method="REML") in metafor 3.8.1 oscillates and
    # stops with "Fisher scoring algorithm did not converge"; so does the engine.
    with pytest.raises(ArithmeticError, match="did not converge in 100 iterations"):
        fit_random_effects([0, 1, 1, 1, 1], [0.125, 1, 1, 1, 1])


finite = st.floats(min_value=-3, max_value=3, allow_nan=False)
positive = st.floats(min_value=0.001, max_value=1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, positive), min_size=3, max_size=25))
def test_properties(pairs: list[tuple[float, float]]) -> None:
    yi, vi = [p[0] for p in pairs], [p[1] for p in pairs]
    try:
        fit = fit_random_effects(yi, vi)
    except ArithmeticError:
        return  # metafor fails on the same inputs (see the test above)
    assert 0.0 <= fit.p <= 1.0 and 0.0 <= fit.Q_p <= 1.0
    assert fit.tau2 >= 0.0 and 0.0 <= fit.I2 < 100.0
    assert fit.ci_lower <= fit.estimate <= fit.ci_upper
    # Negating every effect negates the estimate and leaves the rest unchanged.
    mirrored = fit_random_effects([-y for y in yi], vi)
    assert mirrored.estimate == pytest.approx(-fit.estimate, abs=1e-9)
    assert mirrored.tau2 == pytest.approx(fit.tau2, abs=1e-9)
    if len(set(vi)) == 1:
        with pytest.raises(ValueError, match="different sampling variances"):
            egger_test(yi, vi)
        return
    classic = egger_test(yi, vi)
    assert classic.df == len(yi) - 2
    assert math.isnan(classic.p) or 0.0 <= classic.p <= 1.0
