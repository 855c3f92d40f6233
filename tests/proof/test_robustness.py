"""The probe's evidence survives SIGKILL, and its failures never reach the runtime."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.proof import PACKAGES, Runtime, make_minirt, probed, run_python
from pairbench.proof import read_mounted, verdict


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return make_minirt(tmp_path_factory.mktemp("minirt") / "repo")


def test_a_sigkilled_process_leaves_a_complete_line_for_each_file_it_loaded(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = probed(tmp_path / "trial", runtime.repo)
    code = "import minirt, minirt.tool, time; print('loaded', flush=True); time.sleep(60)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=run.env, cwd=tmp_path, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "tool ran\n"
        assert proc.stdout.readline() == "loaded\n"
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert run.log.read_bytes().endswith(b"\n")
    records = read_mounted(run.log)
    loaded = {r.module for r in records if r.kind == "source" and r.pid == proc.pid}
    assert {"minirt", "minirt.core", "minirt.util", "minirt.tool"} <= loaded
    result = verdict(records, runtime.manifest, runtime.repo, PACKAGES)
    assert (result.status, result.coverage) == ("ok", "4/5")
    # A process killed in the middle of a write leaves a torn last line: it is dropped.
    with run.log.open("ab") as log:
        log.write(b'{"kind":"source","path":"/x/minirt/lazy.py","sha2')
    assert read_mounted(run.log) == records


PROGRAM = """\
import sys
try:
    import _pairbench_mounted as probe
except ImportError:
    pass  # the run without the probe
else:
    def broken(*args):
        raise RuntimeError("a bug in the probe")
    probe._loaded = broken  # every load from here on fails inside the probe
import minirt
minirt.main()
print(minirt.core.later())
sys.exit(3)
"""


def test_a_failing_probe_leaves_output_and_exit_code_unchanged_and_says_unavailable(
    runtime: Runtime, tmp_path: Path
) -> None:
    plain = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(runtime.repo)}
    without = run_python(PROGRAM, plain, tmp_path)
    run = probed(tmp_path / "trial", runtime.repo)
    with_probe = run_python(PROGRAM, run.env, tmp_path)
    assert (without.returncode, without.stdout, without.stderr) == (
        3, "hello from minirt\n7\n", ""
    )  # fmt: skip
    assert (with_probe.returncode, with_probe.stdout, with_probe.stderr) == (
        without.returncode, without.stdout, without.stderr
    )  # fmt: skip
    records = read_mounted(run.log)
    errors = [r.detail for r in records if r.kind == "error"]
    assert errors and all(e == "get_code: RuntimeError: a bug in the probe" for e in errors)
    result = verdict(records, runtime.manifest, runtime.repo, PACKAGES)
    assert result.status == "unavailable"
    assert "the probe failed" in result.summary


def test_an_unwritable_log_leaves_the_runtime_alone_and_no_evidence(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = probed(tmp_path / "trial", runtime.repo)
    run.log.mkdir()  # the log path is a folder: every write fails
    done = run_python("import minirt; minirt.main(spawn=True)", run.env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "hello from minirt\ntool ran\n", ""
    )  # fmt: skip
    shutil.rmtree(run.log)
    result = verdict(read_mounted(run.log), runtime.manifest, runtime.repo, PACKAGES)
    assert (result.status, result.processes) == ("unavailable", 0)
