from pairbench._template import lookup, render

VALUES = {"fixture": {"target": {"number": 7, "labels": ["bug", "ui"]}}, "env": {}}


def test_lone_placeholder_keeps_its_type() -> None:
    assert render("${fixture.target.number}", VALUES) == 7


def test_placeholders_inside_text_and_nested_structures() -> None:
    assert render({"q": ["#${fixture.target.number} ${fixture.target.labels.1}"]}, VALUES) == {
        "q": ["#7 ui"]
    }


def test_missing_values_render_empty_or_none() -> None:
    assert render("token=${env.PAIRBENCH_CANARY}", VALUES) == "token="
    assert render("${env.PAIRBENCH_CANARY}", VALUES) is None
    assert lookup("fixture.target.labels.5", VALUES) is None
