"""Staging an attempt's record: secrets redacted as it is stored, one dump when clean."""

import gc
import json
from pathlib import Path

from helpers.common import bare_result
from pairbench.schedule._plan import TrialKey
from pairbench.store import RunDir, TrialResult
from pairbench.store._redact import Redactor

KEY = TrialKey(arm="a", task="t", trial=0)


def _result(answer: str, reason: str = "expected 'PASS'") -> TrialResult:
    return bare_result(reason=reason, final_answer=answer)


def test_a_clean_record_is_staged_as_it_is(tmp_path: Path) -> None:
    result = _result("nothing to hide")
    put, stored = RunDir(tmp_path).stage_record(KEY, result, None, Redactor({"T": "tok-12345678"}))
    assert stored is result
    assert put.path == tmp_path / "results/a/t/0.json" and not put.overwrite
    assert TrialResult.model_validate_json(put.data) == result


def test_a_secret_is_redacted_in_the_file_and_in_the_record_the_row_is_built_from(
    tmp_path: Path,
) -> None:
    # A value holding a quote and a comma: replaced in the JSON text, it could cut across
    # two strings; redacted in the record's strings, the file stays the same record.
    secret = 'ab", "cd-1234'
    result = _result(f"the token is {secret}", reason=json.dumps({"echo": secret}))
    put, stored = RunDir(tmp_path).stage_record(
        KEY, result, "infra", Redactor({"API_TOKEN": secret})
    )
    assert stored.final_answer == "the token is [redacted:API_TOKEN]"
    assert stored.reason == '{"echo": "[redacted:API_TOKEN]"}'
    assert secret.encode() not in put.data and b"cd-1234" not in put.data
    assert TrialResult.model_validate_json(put.data) == stored
    assert put.path == tmp_path / "infra/a/t/0.1.json" and put.overwrite


def test_run_json_is_parsed_with_the_collector_paused(tmp_path: Path) -> None:
    # A large run's schedule is a dict per planned pair, all alive once parsed: counted
    # here by the collections that start while it is read. At most one, the first after
    # the parse (it walks the new objects once); at Python's default pace, a collection
    # every 700 new objects.
    pairs = [{"index": i, "task": f"t{i}", "trial": 0, "order": ["a", "b"]} for i in range(5000)]
    (tmp_path / "run.json").write_text(json.dumps({"schedule": {"pairs": pairs}}))
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        data = RunDir(tmp_path).read_run_json()
        during = len(started)
        json.loads((tmp_path / "run.json").read_text())  # the same parse, unpaused
    finally:
        gc.callbacks.remove(count)
    assert len(data["schedule"]["pairs"]) == 5000
    assert during <= 1 and len(started) - during >= 10  # the check can fire
    assert gc.isenabled()
