"""Adapter settings are checked one way: their declared model, reported by ``pairbench check``.

A typo in any adapter's settings fails ``check`` with the file's line, the allowed keys and a
fix; the adapter's constructor refuses the same settings with the same words; an arm whose
surface its adapter cannot receive is refused too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench import SpecError
from pairbench._registry import load
from pairbench.agents._settings import settings_model
from pairbench.spec import check_experiment

# adapter -> (valid settings, the typo'd key, the key it should suggest)
CASES: dict[str, tuple[dict[str, object], str, str]] = {
    "claude-code": ({"model": "sonnet"}, "max_turn", "max_turns"),
    "codex": ({"model": "gpt-5.5"}, "sandboxx", "sandbox"),
    "openai": ({"model": "m", "base_url": "http://127.0.0.1:1/v1"}, "temprature", "temperature"),
    "command": ({"command": ["my-agent"]}, "stdinn", "stdin"),
    "simulated": ({"success": {"baseline": 0.5, "local": 0.6}}, "corelation", "correlation"),
    "scripted": ({"step_delay_s": 0}, "step_delay", "step_delay_s"),
}

EXPERIMENT = """\
id: demo
version: 1.0.0
protocol: protocol.md
trials: 2
budget: {{trial_timeout_s: 60, concurrency: 2}}
agent:
  adapter: {adapter}
  settings:
{settings}
comparisons: [[baseline, local]]
arms:
  baseline: {{tools: none}}
  local: {{tools: none}}
tasks:
  - id: read-title
    labels: {{tier: 1}}
    prompt: prompts/read.md
    grader: {{name: exact-answer, args: {{expect: x}}}}
"""


def _experiment(adapter: str, settings: dict[str, object]) -> str:
    lines = [f"    {key}: {value!r}".replace("'", '"') for key, value in settings.items()]
    return EXPERIMENT.format(adapter=adapter, settings="\n".join(lines))


@pytest.mark.parametrize("adapter", sorted(CASES))
def test_a_typo_in_any_adapters_settings_fails_check_with_line_and_keys(
    adapter: str, write: Callable[[str, str], Path]
) -> None:
    valid, typo, meant = CASES[adapter]
    ok = write(_experiment(adapter, valid), "ok.yaml")
    assert check_experiment(ok) == []
    bad = write(_experiment(adapter, {**valid, typo: 1}), "bad.yaml")
    problems = check_experiment(bad)
    assert len(problems) == 1, problems
    (problem,) = problems
    text = str(problem)
    # The typo is the last settings line (they start at line 9).
    assert problem.line == 9 + len(valid), text
    assert f"agent.settings.{typo}" in text and f"unknown setting '{typo}'" in text
    assert f"did you mean '{meant}'" in text
    model = settings_model(load("agents", adapter))
    assert model is not None
    assert "allowed keys: " + ", ".join(sorted(model.model_fields)) in text
    # The adapter refuses the same settings with the same words: one way to check them.
    with pytest.raises(SpecError, match=f"agent.settings.{typo}: unknown setting"):
        load("agents", adapter)({**valid, typo: 1})


def test_a_missing_model_and_a_bad_value_are_named(write: Callable[[str, str], Path]) -> None:
    path = write(_experiment("claude-code", {"max_turns": 0}), "bad.yaml")
    texts = sorted(str(p) for p in check_experiment(path))
    assert len(texts) == 2, texts
    assert "agent.settings.max_turns: claude-code: Input should be greater than or equal to 1" in (
        texts[1] if "max_turns" in texts[1] else texts[0]
    )
    missing = next(t for t in texts if "agent.settings.model" in t)
    assert "claude-code: is required. Fix: set it (--model, pinned" in missing


def test_an_arm_whose_surface_the_adapter_cannot_receive_is_refused(
    write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n")
    text = EXPERIMENT.replace("  settings:\n{settings}\n", "").format(adapter="scripted")
    text = text.replace("protocol: protocol.md\n", "protocol: protocol.md\nfiles: [doc.pdf]\n")
    assert check_experiment(write(text, "ok.yaml")) == []
    text = text.replace("local: {tools: none}", "local: {tools: none, attachments: [doc.pdf]}")
    (problem,) = check_experiment(write(text, "bad.yaml"))
    assert problem.line == 12 and problem.yaml_path == "arms.local.attachments", str(problem)
    assert "the scripted agent cannot receive attachments" in str(problem)
    assert "without its treatment" in str(problem)


def test_claude_code_receives_an_attachment_only_with_a_file_reading_tool(
    write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n")
    base = _experiment("claude-code", {"model": "sonnet"})
    base = base.replace("protocol: protocol.md\n", "protocol: protocol.md\nfiles: [doc.pdf]\n")
    base = base.replace("local: {tools: none}", "local: {tools: none, attachments: [doc.pdf]}")
    (problem,) = check_experiment(write(base, "bad.yaml"))
    assert problem.yaml_path == "arms.local.attachments"
    assert "the claude-code agent cannot receive attachments" in str(problem)
    with_read = base.replace('    model: "sonnet"\n', '    model: "sonnet"\n    tools: [Read]\n')
    assert with_read != base
    assert check_experiment(write(with_read, "ok.yaml")) == []
