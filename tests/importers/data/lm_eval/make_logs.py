"""Make real lm-evaluation-harness logs: run in lm-eval's own venv (not pairbench's).

    ~/.cache/pairbench/lm-eval-0.4.13/bin/python make_logs.py runs.json

``runs.json`` is a list of ``{"model", "base_url", "tasks_dir", "tasks", "output"}``; each run
is what

    cd TASKS_DIR && lm_eval run --model local-chat-completions \\
        --model_args model=MODEL,base_url=BASE_URL,num_concurrent=1,max_retries=1,\\
tokenized_requests=False \\
        --include_path . --tasks TASKS --apply_chat_template --log_samples --output_path OUTPUT

does (the same evaluator, the same ``EvaluationTracker`` writing ``results_<time>.json`` and
``samples_<task>_<time>.jsonl``), with one difference: the task index holds only the tasks in
TASKS_DIR. The CLI indexes lm-eval's thousands of built-in tasks first, ~25 s per run on this
machine; this way all runs together take a few seconds, so the suite makes its logs itself.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(spec: Path) -> None:
    from lm_eval import simple_evaluate  # type: ignore[import-not-found]
    from lm_eval.loggers import EvaluationTracker  # type: ignore[import-not-found]
    from lm_eval.tasks import TaskManager  # type: ignore[import-not-found]

    for run in json.loads(spec.read_text()):
        # The task YAML's data_files are relative to the working folder, as with the CLI.
        os.chdir(run["tasks_dir"])
        model_args = {
            "model": run["model"],
            "base_url": run["base_url"],
            "num_concurrent": 1,
            "max_retries": 1,
            "tokenized_requests": False,
        }
        # As the CLI does: the model arguments are the tasks' metadata.
        manager = TaskManager(include_path=".", include_defaults=False, metadata=model_args)
        tracker = EvaluationTracker(output_path=run["output"])
        results = simple_evaluate(
            model="local-chat-completions",
            model_args=model_args,
            tasks=run["tasks"],
            task_manager=manager,
            apply_chat_template=True,
            log_samples=True,
            evaluation_tracker=tracker,
        )
        assert results is not None
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        for task_name in results["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
