"""EngineSpec: every bad engine block is a SpecError naming the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairbench._errors import SpecError
from pairbench.studies.attribution_reliability.engines import EngineSpec, engine_names


def problems(data: dict[str, object]) -> str:
    with pytest.raises(SpecError) as caught:
        EngineSpec.parse(data)
    return "\n".join(caught.value.problems)


def test_the_builtins_are_known() -> None:
    assert {"command", "http", "python"} <= set(engine_names())


def test_an_unknown_engine_lists_the_known_ones() -> None:
    said = problems({"engine": "heuristc"})
    assert "no engine named 'heuristc'" in said
    assert "command" in said and "http" in said and "python" in said


def test_a_command_needs_argv() -> None:
    said = problems({"engine": "command"})
    assert said.startswith("engine.argv:") and "Fix: argv:" in said


def test_a_python_target_is_module_colon_class() -> None:
    said = problems({"engine": "python", "target": "my_pkg.Engine"})
    assert said.startswith("engine.target:") and "module:Class" in said


def test_an_http_url_is_http() -> None:
    assert "engine.url:" in problems({"engine": "http", "url": "ftp://x"})


def test_a_field_of_another_adapter_is_refused() -> None:
    said = problems({"engine": "command", "argv": ["x"], "url": "http://127.0.0.1:1"})
    assert "engine.url: the 'command' engine takes no 'url'" in said


def test_an_unknown_field_names_the_fields() -> None:
    said = problems({"engine": "command", "argv": ["x"], "cmd": ["x"]})
    assert "engine.cmd: unknown field" in said and "argv" in said


def test_a_bad_timeout_is_named() -> None:
    assert "engine.timeout_s:" in problems({"engine": "command", "argv": ["x"], "timeout_s": -1})


def test_a_registered_name_takes_settings_only() -> None:
    spec = EngineSpec.parse({"engine": "mine", "settings": {"a": 1}}, known=["mine"])
    assert spec.settings == {"a": 1}
    said = problems({"engine": "mine", "argv": ["x"]})
    assert "no engine named 'mine'" in said or "takes no 'argv'" in said


def test_resolve_makes_relative_paths_absolute(tmp_path: Path) -> None:
    spec = EngineSpec.parse({"engine": "command", "argv": ["./bin/eng", "--json"]})
    assert spec.resolve(tmp_path).argv == [str(tmp_path / "bin" / "eng"), "--json"]
    bare = EngineSpec.parse({"engine": "command", "argv": ["my-engine"]})
    assert bare.resolve(tmp_path).argv == ["my-engine"]  # looked up on PATH
    python = EngineSpec.parse({"engine": "python", "target": "m:C", "path": ["src"]})
    assert python.resolve(tmp_path).path == [str(tmp_path / "src")]


@pytest.mark.parametrize(
    "value", ["${ENV:TOKEN}", "Bearer ${env:TOKEN", "${env:}", "${env:1X}", "x ${TOKEN}"]
)
def test_a_malformed_header_reference_is_refused(value: str) -> None:
    said = problems({"engine": "http", "url": "http://127.0.0.1:1", "headers": {"X-Key": value}})
    assert said.startswith(f"engine.headers.X-Key: {value!r} has a malformed reference")
    assert "Fix: write ${env:NAME}" in said


def test_references_and_the_escape_anywhere_in_a_header_are_accepted() -> None:
    spec = EngineSpec.parse(
        {
            "engine": "http",
            "url": "http://127.0.0.1:1",
            "headers": {"Authorization": "Bearer ${env:TOKEN}", "X-Raw": "a $${b}"},
        }
    )
    assert spec.headers["Authorization"] == "Bearer ${env:TOKEN}"
