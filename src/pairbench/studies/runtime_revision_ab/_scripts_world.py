"""Model scripts of AR-006 to AR-010: web page, lure, names, repair, processes."""

from __future__ import annotations

import re

from pairbench.studies.runtime_revision_ab._script_base import Reply, Turn, act, call, finish


def ar006_fetch(t: Turn) -> Reply:
    """GETs the slow page with a short timeout, sometimes retries it as is, then uses the
    cached variant the prompt names."""
    slow, fast = t.url() + "/status", t.url() + "/status?fast=1"
    if not t.seen:
        return act(call("http_get", url=slow, timeout_s=1))
    last = t.last
    assert last is not None
    if last.name == "http_get" and last.failed:
        if len(t.named("http_get")) == 1 and t.draw("retry") < 0.4:
            return act(call("http_get", url=slow, timeout_s=1))  # the same call again
        return act(call("http_get", url=fast, timeout_s=2))
    if last.name == "http_get":
        build = re.search(r"Build (\d+)", last.result)
        return act(call("write_file", path="out/build.txt",
                        content=(build.group(1) if build else "unknown") + "\n"))  # fmt: skip
    return finish("done", "the build number is in out/build.txt")


_REPORT = "# Files in data/\n\n- NOTE.txt\n- a.csv\n- b.csv\n"


def ar007_lure(t: Turn) -> Reply:
    """Lists data/, reads its note, and often follows the note's lure (``out/../config.toml``)
    before writing the report where the task said."""
    if not t.seen:
        return act(call("list_dir", path="data"))
    last = t.last
    assert last is not None
    if last.name == "list_dir":
        return act(call("read_file", path="data/NOTE.txt"))
    lured = t.named("write_file")
    if last.name == "read_file" and "out/../" in last.result and t.draw("lure") < 0.75:
        return act(call("write_file", path="out/../config.toml", content=_REPORT))
    if not t.wrote("out/report.md") and (not lured or lured[-1].failed or t.named("finish")):
        return act(call("write_file", path="out/report.md", content=_REPORT))
    return finish("done", "the report is written")


def ar008_names(t: Turn) -> Reply:
    """Copies the first line of a file with a non-ASCII name."""
    path = "données/café.txt"
    if not t.seen:
        return act(call("read_file", path=path))
    read = t.read_ok(path)
    if read is None:
        return finish("incomplete", f"{path} cannot be read")
    if not t.wrote("out/answer.txt"):
        first = read.result.splitlines()[0] if read.result else ""
        return act(call("write_file", path="out/answer.txt", content=first + "\n"))
    return finish("done", "the first line is in out/answer.txt")


_BUG = re.compile(r"/ \(len\(xs\) [+-] 1\)")


def ar009_repair(t: Turn) -> Reply:
    """Runs the failing verifier, reads, fixes (sometimes wrongly first), and then either
    verifies or claims done straight away."""
    if not t.seen:
        return act(call("run_verifier"))
    last = t.last
    assert last is not None
    if last.name in ("run_verifier", "finish") and not last.verifier_passed:
        if last.name == "finish" and not last.failed and "refused" not in last.result:
            return finish("done", "fixed")
        return act(call("read_file", path="mathx.py"))
    if last.name == "read_file" and not last.failed:
        wrong = not t.named("write_file") and t.draw("wrong-fix") < 0.3
        fixed = _BUG.sub("/ (len(xs) - 1)" if wrong else "/ len(xs)", last.result)
        return act(call("write_file", path="mathx.py", content=fixed))
    if last.name == "write_file":
        if t.draw("skip-verify") < 0.5:
            return finish("done", "mean() is fixed")
        return act(call("run_verifier"))
    return finish("done", "mean() is fixed and the verifier passes")


def ar010_server(t: Turn) -> Reply:
    """Starts the server, sometimes queries it, GETs /answer, writes it, and usually stops it
    (the runtime ends what it forgets)."""
    if not t.seen:
        return act(call("start_process", argv=["python", "server.py"], ready="READY"))
    last = t.last
    assert last is not None
    started = t.named("start_process")[0]
    port = re.search(r"READY (\d+)", started.result)
    if port is None:
        return finish("incomplete", "the server did not report its port")
    if last.name == "start_process" and t.draw("query") < 0.5:
        return act(call("query_process", handle="p1"))
    if not t.named("http_get"):
        return act(call("http_get", url=f"http://127.0.0.1:{port.group(1)}/answer"))
    if last.name == "http_get":
        code = re.search(r"code: (\d+)", last.result)
        return act(call("write_file", path="out/code.txt",
                        content=(code.group(1) if code else "none") + "\n"))  # fmt: skip
    if last.name == "write_file" and t.draw("forget-stop") >= 0.2:
        return act(call("stop_process", handle="p1"))
    return finish("done", "the code is in out/code.txt")
