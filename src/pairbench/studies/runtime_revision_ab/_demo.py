"""``pairbench demo --study runtime-revision-ab`` (``Study.demo``): a campaign study from
start to report.

The study is copied (and prepared: its minirt repository written) into
``RUNS_DIR/demo-<study>/``; its model server runs for the demo; a screening pair runs; a
confirmation plan of ``CONFIRMATION_PAIRS`` pairs is written from it, approved on the
user's behalf (the approval says so) and run. Each run gets its report.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from ruamel.yaml import YAML

from pairbench._errors import PairbenchError
from pairbench.cli._app import err, out
from pairbench.cli._run import finish
from pairbench.report import write_report
from pairbench.runner import start_run
from pairbench.studies import DemoRequest, Study

CONFIRMATION_PAIRS = 6
"""The smallest N whose exact sign-flip p can fall below 0.05 (2^(1-N) = 0.03125)."""
APPROVER = "pairbench demo (auto-approved: a demo, not a pre-registered decision)"


def demo_folder(study: Study, runs_dir: Path, local: bool) -> Path:
    """The demo's copy of the study, prepared once and reused while it is unchanged."""
    name = f"demo-{study.name}" + ("-local" if local else "")
    folder = runs_dir / name
    if (folder / "experiment.yaml").is_file():
        return folder / "experiment.yaml"
    if folder.exists() and any(folder.iterdir()):
        raise PairbenchError(
            f"{folder} exists but has no experiment.yaml; remove it or choose another --runs-dir"
        )
    shutil.copytree(study.root, folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                    dirs_exist_ok=True)  # fmt: skip
    if study.prepare is not None:
        err.print(study.prepare(folder), markup=False, highlight=False)
    if local:
        from pairbench.cli._studies import LOCAL_ALIAS

        yaml = YAML()
        path = folder / "experiment.yaml"
        data = yaml.load(path.read_text(encoding="utf-8"))
        data["agent"]["settings"]["model"] = LOCAL_ALIAS
        # A 270M model on a few cores takes seconds a round: room for sixteen rounds.
        data["budget"]["trial_timeout_s"] = 600
        with path.open("w", encoding="utf-8") as handle:
            yaml.dump(data, handle)
        for stale in ("experiment.lock.json", "protocol_hash.txt", "experiment.ledger.jsonl"):
            (folder / stale).unlink(missing_ok=True)
    # Frozen once, as a protocol would be: the confirmation's approval is recorded in the
    # ledger beside this lock and spent by its run.
    from pairbench.freeze import write_lock
    from pairbench.spec import load_experiment

    write_lock(load_experiment(folder / "experiment.yaml"), servers=False)
    return folder / "experiment.yaml"


@contextlib.contextmanager
def _model(experiment: Path, local: bool) -> Iterator[dict[str, object] | None]:
    if local:
        from pairbench.model._use import local_model_server
        from pairbench.spec import load_experiment

        with local_model_server(load_experiment(experiment)) as (server, identity):
            err.print(f"serving the local model at {server.url}/v1", markup=False)
            yield identity
        return
    from pairbench.model._use import served_port
    from pairbench.spec import load_experiment
    from pairbench.studies.runtime_revision_ab import serve_model

    port = served_port(load_experiment(experiment))  # the experiment's proxy.upstream
    with contextlib.ExitStack() as stack:
        try:
            scripted = stack.enter_context(serve_model(port))
        except OSError as exc:
            raise PairbenchError(
                f"cannot serve the scripted model on 127.0.0.1:{port}: {exc}. Fix: stop what "
                "listens there (another demo?) and try again"
            ) from exc
        err.print(f"serving the scripted model at {scripted.base_url}", markup=False)
        yield None


def demo(request: DemoRequest) -> None:
    """The study's demo: its own runtime (the minirt adapter) in campaigns."""
    from pairbench.store._lock import hold_writer_locks
    from pairbench.studies.runtime_revision_ab import STUDY

    if request.agent != "scripted" or request.base_url or request.model:
        raise PairbenchError(
            f"--study {STUDY.name} runs its own runtime (the minirt adapter) in campaigns: "
            "drop --agent, --base-url and --model (--model-server local runs it against "
            "the local model)"
        )
    with hold_writer_locks():
        campaign_demo(STUDY, request.runs_dir, request.run_seed, request.model_server == "local")


def campaign_demo(study: Study, runs_dir: Path, run_seed: int | None, local: bool) -> None:
    """Screening, then (offline) an auto-approved confirmation plan and its run."""
    from pairbench.runner._approve import approve_plan
    from pairbench.runner._screening import plan_confirmation
    from pairbench.schedule._approval import write_plan
    from pairbench.spec import load_experiment

    experiment = demo_folder(study, runs_dir, local)
    progress = sys.stderr.isatty()
    with _model(experiment, local) as served:
        screening = start_run(experiment, runs_dir, run_seed=run_seed, stage="screening",
                              progress=progress, model_server=served)  # fmt: skip
        paths = write_report(screening.run_dir)
        out.print(f"Screening run {screening.run_id}: {screening.status}")
        out.print(f"Report: {paths.markdown}")
        if not screening.complete:
            raise PairbenchError(
                f"the screening run {screening.run_id} did not complete ({screening.status}), "
                "so no confirmation is planned from it"
            )
        if local:
            out.print(
                "With the local model the demo stops after screening. Plan a confirmation: "
                f"pairbench plan {experiment} --stage confirmation --pairs "
                f"{CONFIRMATION_PAIRS} --screening {screening.run_dir} --write plan.json"
            )
            return
        proposal = plan_confirmation(
            load_experiment(experiment), screening.run_dir, CONFIRMATION_PAIRS, run_seed=run_seed
        )
        plan = experiment.parent / f"plan-{screening.run_id}.json"
        write_plan(plan, proposal.plan)
        approve_plan(experiment, plan, APPROVER)
        out.print(f"Confirmation plan {plan}: {CONFIRMATION_PAIRS} pairs, approved as a demo")
        run = start_run(experiment, runs_dir, plan=plan, progress=progress, model_server=served)
        finish(run, plots=True)  # a demo is run to be read
