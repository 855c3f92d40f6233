"""``pairbench studies``, ``pairbench init`` and ``pairbench demo``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import typer
from rich.table import Table
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from pairbench import _registry
from pairbench._errors import PairbenchError
from pairbench.cli._app import app, out, user_errors
from pairbench.cli._run import ModelServer, finish, serving
from pairbench.runner import start_run
from pairbench.spec import load_experiment
from pairbench.store._lock import hold_writer_locks
from pairbench.studies import DemoRequest, Study, load_study

LOCAL_URL = "http://127.0.0.1:18089/v1"
"""Where ``--model-server local`` serves the local model (a fixed port: the copied
experiment, and so its protocol hash, stays the same from one demo to the next)."""
LOCAL_ALIAS = "gemma-3-270m-q4_k_m"
LOCAL_SETTINGS: dict[str, object] = {
    # No native tool calling in a 270M base model: calls come as a constrained reply.
    "tool_calling": "constrained",
    # Sampled, so pairs differ from each other; the seed makes each pair repeatable.
    "temperature": 1.0,
    "cache_prompt": False,
    # Streamed, so the report has each request's time to first token.
    "stream": True,
    "max_turns": 4,
    "max_output_tokens": 128,
}


def _study(name: str) -> Study:
    return load_study(name)


def name_study(path: Path, name: str) -> None:
    """Write ``study: <name>`` into a copied experiment that does not name its study yet, so
    its report asks the study for its part (nothing else is touched: comments and order
    stay)."""
    yaml = YAML()
    data = yaml.load(path.read_text(encoding="utf-8"))
    if not isinstance(data, CommentedMap) or "study" in data:
        return
    keys = list(data)
    data.insert(keys.index("version") + 1 if "version" in keys else 0, "study", name)
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)


@app.command()
@user_errors
def studies() -> None:
    """List the built-in and installed studies.

    Example:

        pairbench studies
    """
    table = Table(title="Studies")
    table.add_column("name")
    table.add_column("title")
    for name in _registry.names("studies"):
        table.add_row(name, _study(name).title)
    out.print(table)


@app.command()
@user_errors
def init(
    directory: Path = typer.Argument(..., help="Folder to create (must not exist or be empty)."),
    from_study: str = typer.Option(..., "--from", help="The study to copy."),
) -> None:
    """Copy a study into DIRECTORY as an editable experiment.

    Example:

        pairbench init my-exp --from mcp-transports && pairbench run my-exp/experiment.yaml
    """
    study = _study(from_study)
    if directory.exists() and any(directory.iterdir()):
        raise PairbenchError(f"{directory} exists and is not empty; choose a new folder")
    shutil.copytree(
        study.root,
        directory,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    name_study(directory / "experiment.yaml", study.name)
    if study.prepare is not None:
        out.print(study.prepare(directory), markup=False, highlight=False)
    out.print(f"Copied {study.name} to {directory}. Run it with:")
    path = directory / "experiment.yaml"
    if _runs_campaigns(path):
        out.print(f"  pairbench run {path} --stage screening", markup=False, highlight=False)
        out.print("then plan, approve and run a confirmation (docs/revisions.md)")
    else:
        out.print(f"  pairbench run {path}", markup=False, highlight=False)


@app.command()
@user_errors
def demo(
    runs_dir: Path = typer.Option(Path("runs"), help="Where run directories go."),
    run_seed: int | None = typer.Option(None, help="Run seed (default: drawn from the run ID)."),
    agent: str = typer.Option(
        "scripted", help="scripted (default, no network), openai, claude-code or codex."
    ),
    base_url: str | None = typer.Option(None, help="openai: the Chat Completions base URL."),
    model: str | None = typer.Option(None, help="The model (openai: required)."),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", help="openai: the environment variable holding the key."
    ),
    study_name: str = typer.Option(
        "mcp-transports", "--study", help="The built-in study to run (see `pairbench studies`)."
    ),
    model_server: ModelServer = typer.Option(
        ModelServer.none,
        "--model-server",
        help="local: the openai agent against the local model (pairbench model install), "
        f"served at {LOCAL_URL} for the run; one trial per task.",
    ),
    trials: int | None = typer.Option(
        None,
        min=1,
        help="With --agent: trials per task and arm instead of the study's (--trials 1 is a "
        "first look at a real agent for a third of the calls).",
    ),
) -> None:
    """Run a built-in study (default mcp-transports): its own offline agent, or a real one.

    With the default scripted agent: no network and no keys (mcp-transports: a fixture MCP
    server over real stdio and streamable HTTP; webmcp-vs-pdf: its scripted agent reads the
    PDF in one arm and calls the page's WebMCP tools through headless Chromium in the
    other; runtime-revision-ab: two git revisions of its bundled runtime against its scripted
    model server, a screening pair then an auto-approved 6-pair confirmation, or with
    --model-server local the screening pair against the local model). With --agent, the
    same study runs with that agent; the experiment it ran is copied under
    RUNS_DIR/demo-<agent>/ so the run can be resumed.

    Example:

        pairbench demo --runs-dir /tmp/runs
        pairbench demo --study webmcp-vs-pdf --runs-dir /tmp/runs
        pairbench demo --study runtime-revision-ab    # screening + a 6-pair confirmation
        pairbench demo --agent openai --base-url http://127.0.0.1:8080/v1 --model local
        pairbench demo --agent openai --model-server local    # the real local model
        pairbench demo --agent claude-code --model sonnet --trials 1
    """
    study = _study(study_name)
    local = model_server is ModelServer.local
    if trials is not None and study.demo is not None:
        raise PairbenchError(
            f"--trials: the {study.name} demo runs its own plan, which --trials cannot "
            "change; drop --trials"
        )
    if trials is not None and agent == "scripted" and not local:
        # The scripted demo runs the study as frozen (its lock verified): no copy to change.
        raise PairbenchError(
            "--trials needs --agent (or --model-server local): the scripted demo runs the "
            "study as frozen; drop --trials, or add --agent"
        )
    if study.demo is not None:  # the study runs its own demo (campaigns, say)
        study.demo(
            DemoRequest(
                runs_dir=runs_dir,
                run_seed=run_seed,
                agent=agent,
                base_url=base_url,
                model=model,
                api_key_env=api_key_env,
                model_server=model_server.value,
            )
        )
        return
    # Found before the run starts: a missing server program is one clear error, not a run
    # of infra failures. The servers inherit PATH from here.
    os.environ.update(study.find_commands())
    experiment = study.experiment_path
    if local:
        if agent not in {"scripted", "openai"}:
            raise PairbenchError(f"--model-server local runs the openai agent, not {agent!r}")
        agent, base_url, model = "openai", base_url or LOCAL_URL, model or LOCAL_ALIAS
    if agent != "scripted":
        experiment = _demo_copy(study, runs_dir, agent, base_url, model, api_key_env, local, trials)
    with hold_writer_locks(), serving(experiment, model_server, None) as (served, workers):
        finish(
            start_run(
                experiment,
                runs_dir,
                run_seed=run_seed,
                concurrency=workers,
                progress=sys.stderr.isatty(),
                model_server=served,
            ),
            plots=True,  # a demo is run to be read
        )


def _demo_copy(
    study: Study,
    runs_dir: Path,
    agent: str,
    base_url: str | None,
    model: str | None,
    api_key_env: str,
    local: bool = False,
    trials: int | None = None,
) -> Path:
    settings: dict[str, object] = {}
    spec: dict[str, object] = {"adapter": agent, "settings": settings}
    if agent == "openai":
        if not base_url or not model:
            raise PairbenchError("--agent openai needs --base-url and --model")
        settings.update(base_url=base_url, model=model, api_key_env=api_key_env)
        spec["env_allow"] = [api_key_env]
        if local:
            settings.update(LOCAL_SETTINGS)
    elif agent in {"claude-code", "codex"}:
        if not model:
            raise PairbenchError(f"--agent {agent} needs --model (e.g. --model sonnet)")
        settings["model"] = model
        if agent == "claude-code" and any(
            arm.attachments
            for arm in load_experiment(study.experiment_path).experiment.arms.values()
        ):
            settings["tools"] = ["Read"]  # every arm gets the same file-reading tool
    else:
        raise PairbenchError(f"--agent {agent!r}: choose scripted, openai, claude-code or codex")
    yaml = YAML()
    data = yaml.load(study.experiment_path.read_text(encoding="utf-8"))
    data["agent"] = spec
    if local:
        # One trial per task: a 270M model on two CPU cores takes seconds per request.
        data["trials"] = 1
        data["budget"] = {**dict(data.get("budget") or {}), "trial_timeout_s": 300}
    if trials is not None:
        data["trials"] = trials
    agent = f"{agent}-local" if local else agent
    # An earlier demo's copy may back a run that can still be resumed: never overwrite it.
    # Reuse it when it is the same experiment, otherwise take the next free folder.
    for index in range(1, 1000):
        target = runs_dir / (f"demo-{agent}" if index == 1 else f"demo-{agent}-{index}")
        path = target / "experiment.yaml"
        if target.exists():
            if yaml_equal(path, data):
                return path
            continue
        shutil.copytree(study.root, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        with path.open("w", encoding="utf-8") as handle:
            yaml.dump(data, handle)
        for name in ("experiment.lock.json", "protocol_hash.txt"):
            (target / name).unlink(missing_ok=True)  # another agent is another protocol
        return path
    raise PairbenchError(f"too many demo-{agent} folders in {runs_dir}; remove old ones")


def _runs_campaigns(path: Path) -> bool:
    """Whether the experiment file says ``order: {block: campaign}`` (read raw: a study's
    own copy may name a repository that only ``init`` makes)."""
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    order = data.get("order") if isinstance(data, dict) else None
    return isinstance(order, dict) and order.get("block") == "campaign"


def yaml_equal(path: Path, data: object) -> bool:
    """Whether the YAML file at ``path`` holds ``data``."""
    try:
        return bool(YAML(typ="safe").load(path.read_text(encoding="utf-8")) == data)
    except (OSError, ValueError):
        return False
