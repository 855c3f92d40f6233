"""The reference answer: the protocol's exact JSON shape, and the registered rule."""

from __future__ import annotations

import json

import pytest

from pairbench.studies.webmcp_vs_pdf import reference_answer, rule_outcome

# The "Required shape" line of the common prompt.
_SHAPE = json.loads(
    '{"overall":{"k":0,"estimate":0,"ci_lower":0,"ci_upper":0,"p":0},"exclude_s04":{"k":0,'
    '"estimate":0,"ci_lower":0,"ci_upper":0,"p":0,"excluded":["s04"]},'
    '"bias":{"egger_p":0,"rule_outcome":"passed|failed|inconclusive"}}'
)


def _keys(value: object) -> object:
    if isinstance(value, dict):
        return {key: _keys(item) for key, item in value.items()}
    return None


def test_reference_has_the_prompt_shape_in_order_and_is_plain_json() -> None:
    ref = reference_answer()
    assert _keys(ref) == _keys(_SHAPE)
    assert list(ref) == list(_SHAPE) and list(ref["exclude_s04"]) == list(_SHAPE["exclude_s04"])
    assert json.loads(json.dumps(ref, allow_nan=False)) == ref


def test_reference_values() -> None:
    ref = reference_answer()
    assert ref["overall"]["k"] == 19 and ref["exclude_s04"]["k"] == 18
    assert ref["overall"]["estimate"] == pytest.approx(0.0837082352826429, abs=1e-12)
    assert ref["overall"]["ci_lower"] == pytest.approx(-0.0175154395498685, abs=1e-12)
    assert ref["overall"]["ci_upper"] == pytest.approx(0.184931910115154, abs=1e-12)
    assert ref["overall"]["p"] == pytest.approx(0.10505673594797, abs=1e-12)
    assert ref["exclude_s04"]["estimate"] == pytest.approx(0.0577387029491223, abs=1e-12)
    assert ref["exclude_s04"]["excluded"] == ["s04"]
    assert ref["bias"] == {
        "egger_p": pytest.approx(0.0574255742993977, abs=1e-12),
        "rule_outcome": "inconclusive",
    }


@pytest.mark.parametrize(
    ("p", "outcome"),
    [
        (0.0, "failed"),
        (0.0499999, "failed"),
        (0.05, "inconclusive"),
        (0.0999999, "inconclusive"),
        (0.10, "passed"),
        (1.0, "passed"),
    ],
)
def test_registered_rule_boundaries(p: float, outcome: str) -> None:
    assert rule_outcome(p) == outcome
