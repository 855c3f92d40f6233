from pathlib import Path

from pairbench.agents import BASE_ALLOW, scrubbed_env


def test_only_the_allow_list_and_declared_values_pass(tmp_path: Path) -> None:
    source = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-x",
        "PAIRBENCH_CANARY": "pbk_secret",
        "HOME": "/root",
    }
    env = scrubbed_env(tmp_path, declared={"MODEL": "m"}, source=source)
    assert env["PATH"] == "/usr/bin" and env["LANG"] == "C.UTF-8" and env["MODEL"] == "m"
    assert "OPENAI_API_KEY" not in env and "PAIRBENCH_CANARY" not in env
    assert env["HOME"] == str(tmp_path / "home") and (tmp_path / "home").is_dir()
    assert set(env) <= {*BASE_ALLOW, "HOME", "TMPDIR", "MODEL"}


def test_names_on_the_arm_allow_list_are_inherited(tmp_path: Path) -> None:
    env = scrubbed_env(
        tmp_path, allow=["PAIRBENCH_CANARY"], source={"PAIRBENCH_CANARY": "pbk_secret"}
    )
    assert env["PAIRBENCH_CANARY"] == "pbk_secret"
