"""The experiment's ``proxy:``: the runtime's model server, fronted for the run by
pairbench's recording proxy (``pairbench.proxy``).

For the run: a lease on the server (a second run on it is refused), a loopback
``RecordingProxy`` writing every exchange to ``proxy/exchanges.jsonl``, and the server's
identity in run.json (``identities.model_endpoint``). For each attempt: the proxy's label is
the attempt (``arm/task/trial#attempt``; ``proxy:`` needs concurrency 1, so one attempt holds
the proxy at a time), the agent gets ``env`` = the proxy's URL + ``path``, and afterwards its
requests give the attempt's seeding, proven from the bodies sent (a seed dropped on one retry
makes the trial unseeded, named), and a ``model_proxy`` transcript event with each sampling
parameter ``sent``, ``mixed`` or ``server_default`` and any violation of ``require``.

Before the run (and a resume) the server must pass ``preflight`` (healthy, one slot, idle),
or the run is refused before anything is made. Around each attempt the server's ``/metrics``
are read (``attempt_window``): counters that rose by more than the proxy forwarded mean
another client used the server, and the attempt's ``interference`` transcript event (and a
line of ``proxy/interference.jsonl``) says so. An attempt whose model requests all failed on
the server's side (5xx, unreachable) before any succeeded is ``infra``, not the agent's
failure (``startup_failure``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pairbench._errors import RunDirError, RunRefused
from pairbench.schedule._plan import TrialKey
from pairbench.spec._proxy import ModelProxy
from pairbench.store._recorded import record_files
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.store._transcript import Transcript

if TYPE_CHECKING:  # the proxy's dependencies load only for runs that declare one
    from pairbench.agents._protocol import AgentOutput
    from pairbench.proxy import ExchangeRecord, MetricsSnapshot, RecordingProxy, SlotLease
    from pairbench.proxy._usage import ProxyUsage
    from pairbench.runner._attempt import AttemptRecord

INTERFERENCE_FILE = "interference.jsonl"
"""Under the run's ``proxy/``: one line per attempt, its interference verdict."""


def endpoint_identity(spec: ModelProxy | None) -> dict[str, Any]:
    """``{"model_endpoint": ...}`` for run.json's identities (``{}`` without ``proxy:``): the
    server's build info, slots, context, model file sha256 and header, sampling defaults.
    When it was read is left out: identities must agree between comparable runs."""
    if spec is None:
        return {}
    from pairbench.proxy import model_identity

    found = model_identity(spec.upstream).model_dump(mode="json")
    found.pop("taken_at", None)
    return {"model_endpoint": found}


def sampling_defaults(info: RunRecord) -> dict[str, Any] | None:
    """The proxied server's default sampling as run.json recorded it (``/props``)."""
    ident = info.identities.model_dump() if info.identities is not None else {}
    endpoint = ident.get("model_endpoint")
    found = endpoint.get("sampling_defaults") if isinstance(endpoint, dict) else None
    return found if isinstance(found, dict) else None


@contextlib.contextmanager
def endpoint_lease(spec: ModelProxy | None) -> Iterator[SlotLease | None]:
    """The lease on the proxied server (None without ``proxy:``), held for the block;
    ``SlotInUse`` at once when another run holds it. ``run`` takes it before the run folder
    exists, so a refused run leaves nothing behind."""
    if spec is None:
        yield None
        return
    from pairbench.model._cache import cache_root
    from pairbench.proxy import SlotLease

    with SlotLease(spec.upstream, cache_root() / "leases") as lease:
        yield lease


@contextlib.contextmanager
def proxy_for_run(
    spec: ModelProxy | None, run_dir: RunDir, lease: SlotLease | None = None
) -> Iterator[RecordingProxy | None]:
    """The run's proxy (None without ``proxy:``), with the server's lease held throughout
    (``lease``, when the caller holds it already; else taken here, as on resume)."""
    if spec is None:
        yield None
        return
    from pairbench.proxy import RecordingProxy

    log = run_dir.path / "proxy" / "exchanges.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    held = contextlib.nullcontext(lease) if lease is not None else endpoint_lease(spec)
    try:
        with held, RecordingProxy(spec.upstream, log) as p:
            yield p
    finally:
        # The logs are complete once the proxy is closed: their hashes go in the journal, so
        # an edited exchange or interference line fails verify (a disk that refuses this is
        # named by verify as an unrecorded file, and by the error already on its way).
        with contextlib.suppress(OSError, RunDirError):
            record_files(run_dir, [log.parent], by="proxy")


def attempt_label(key: TrialKey, attempt: int) -> str:
    """The proxy's label for one attempt's requests."""
    return f"{key.label}#{attempt}"


def attempt_env(spec: ModelProxy, proxy: RecordingProxy) -> dict[str, str]:
    """The variable that points the runtime at the proxy."""
    return {spec.env: proxy.url + spec.path}


def attempt_evidence(
    spec: ModelProxy,
    proxy: RecordingProxy,
    label: str,
    model_seed: int,
    transcript: Transcript,
    defaults: dict[str, Any] | None,
    output: AgentOutput | None,
) -> AgentOutput | None:
    """The agent's output with the attempt's seeding (from the bodies its requests carried)
    and the usage the proxy measured (``with_proxy_usage``); the sampling as a
    ``model_proxy`` transcript event."""
    from pairbench.proxy import effective_sampling, seed_evidence
    from pairbench.proxy._usage import proxy_usage

    records = [r for r in proxy.records() if r.label == label]
    proof = seed_evidence(records, model_seed)
    sampling = effective_sampling(records, spec.require, defaults=defaults)
    transcript.emit(
        "model_proxy",
        label=label,
        requests=len(proof.requests),
        seeding=proof.status,
        seeding_reason=proof.reason,
        sampling={p.name: p.status for p in sampling.parameters},
        sent={p.name: p.value for p in sampling.parameters if p.status == "sent"},
        violations=[v.model_dump(mode="json") for v in sampling.violations],
    )
    if output is None:
        return None
    filled = with_proxy_usage(output, proxy_usage(records), transcript)
    return dataclasses.replace(filled, seeding=proof.seeding())


_TOKENS = ("input_tokens", "output_tokens", "total_tokens", "cache_read_input_tokens",
           "uncached_input_tokens", "cache_creation_input_tokens")  # fmt: skip


def with_proxy_usage(output: AgentOutput, usage: ProxyUsage, transcript: Transcript) -> AgentOutput:
    """``output`` with what the proxy measured where the agent reported nothing.

    The proxy is the independent account: requests become ``turns`` when the agent gave
    none; with every response's usage known the tokens are measured from it, and a measured
    count of the agent's that disagrees is replaced by the proxy's (the claim is kept in the
    metric's source and a ``usage_mismatch`` transcript event). With part of the usage
    unreported a missing count says the coverage ``k of n`` instead of "no usage reported".
    """
    from pairbench.proxy._usage import SOURCE
    from pairbench.store._records import NO_USAGE, Metric, usage_metrics

    if usage.requests == 0:
        # Nothing reached the model through the proxy: a count the agent left unreported
        # says so (not a measured 0: the proxy is the only route it saw).
        idle = Metric.missing("no model request reached pairbench's proxy")
        unsaid: dict[str, Any] = {
            name: idle
            for name in (*_TOKENS, "cost_usd")
            if getattr(output, name) == Metric.missing(NO_USAGE)
        }
        return dataclasses.replace(output, **unsaid) if unsaid else output
    changes: dict[str, Any] = {}
    if output.turns.provenance == "missing":
        changes["turns"] = Metric.measured(usage.requests, "model requests via pairbench's proxy")
    if not output.models:
        changes["models"] = usage.models
    if output.cost_usd.provenance == "missing":
        changes["cost_usd"] = Metric.missing(
            "not priced: the proxied server reports tokens, not money"
        )
    if usage.complete:
        cached: Metric | int = (
            usage.cached_tokens
            if usage.cached_tokens is not None
            else Metric.missing("the server did not report cached tokens on every response")
        )
        proxied = usage_metrics(
            source=SOURCE, total_input=usage.prompt_tokens, output=usage.completion_tokens,
            cache_read=cached,
            cache_creation=Metric.missing("a Chat Completions server does not report cache writes"),
        )._asdict()  # fmt: skip
    else:
        why = f"{usage.coverage} model responses reported usage (pairbench's proxy)"
        proxied = {name: Metric.missing(why) for name in _TOKENS}
    claims: dict[str, float] = {}
    for name in _TOKENS:
        mine: Metric = getattr(output, name)
        theirs: Metric = proxied[name]
        if mine.provenance == "missing":
            changes[name] = theirs
        elif (
            mine.provenance == "measured"
            and theirs.provenance == "measured"
            and mine.value != theirs.value
            and mine.value is not None
        ):
            claims[name] = mine.value
            changes[name] = Metric.measured(
                theirs.value or 0.0, f"{SOURCE}; the agent claimed {mine.value:g}"
            )
    if claims:
        transcript.emit(
            "usage_mismatch",
            claimed=claims,
            proxy={name: proxied[name].value for name in claims},
            coverage=usage.coverage,
        )
    return dataclasses.replace(output, **changes)


def require_preflight(spec: ModelProxy | None) -> None:
    """Refuse the run unless the proxied server is healthy, has one slot, and it is idle.

    Raises:
        RunRefused: naming each failed check.
    """
    if spec is None:
        return
    from pairbench.proxy import preflight

    found = preflight(spec.upstream)
    if not found.ok:
        raise RunRefused(
            f"the model server {spec.upstream} failed its preflight: {'; '.join(found.reasons)}. "
            "A paired run needs it healthy, with one slot (llama-server -np 1), idle; fix the "
            "server (or wait for its other client to finish) and run again"
        )


def window_start(spec: ModelProxy | None) -> MetricsSnapshot | None:
    """The server's ``/metrics`` before an attempt (None without ``proxy:``)."""
    if spec is None:
        return None
    from pairbench.proxy import read_metrics

    return read_metrics(spec.upstream)


def startup_failure(records: Iterable[ExchangeRecord]) -> str | None:
    """Why the attempt never reached the model: its model requests all failed on the
    server's side (5xx or no answer) before any succeeded; None otherwise."""
    failed: list[str] = []
    for r in records:
        if not r.is_model_request:
            continue
        if r.status is not None and r.status < 300:
            return None
        if r.status is None or r.status >= 500:
            failed.append(f"#{r.n} {r.status or 'no answer'}")
    if not failed:
        return None
    return f"the model server failed every model request of the attempt ({', '.join(failed)})"


def attempt_window(
    spec: ModelProxy,
    proxy: RecordingProxy,
    run_dir: RunDir,
    label: str,
    before: MetricsSnapshot,
    rec: AttemptRecord,
) -> AttemptRecord:
    """After an attempt: its interference verdict recorded, and ``infra`` if the server
    failed it before any model success (a passed attempt stays passed)."""
    from pairbench.proxy import interference, read_metrics
    from pairbench.runner._attempt import AttemptRecord

    records = proxy.records()
    verdict = interference(before, read_metrics(spec.upstream), records)
    fields = verdict.model_dump(mode="json")
    rec.transcript.emit("interference", label=label, host_load=list(os.getloadavg()), **fields)
    # The host's load right after the attempt: other work on the machine, beside the verdict.
    load = [round(x, 2) for x in os.getloadavg()]
    line = {"label": label, "status": verdict.status, "reason": verdict.reason, "host_load": load}
    with (run_dir.path / "proxy" / INTERFERENCE_FILE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")
    result = rec.result
    broken = startup_failure(r for r in records if r.label == label)
    if broken is None or result.outcome in {"passed", "infra", "interrupted"}:
        return rec
    reason = f"{broken}; the agent's own outcome was {result.outcome}: {result.reason}"
    updated = result.model_copy(update={"outcome": "infra", "reason": reason})
    return AttemptRecord(result=updated, transcript=rec.transcript)


def interference_counts(run_dir: RunDir) -> dict[str, int]:
    """Per verdict (``clean``, ``interference``, ...), how many attempts of the run got it."""
    path = run_dir.path / "proxy" / INTERFERENCE_FILE
    counts: dict[str, int] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for text in lines:
        with contextlib.suppress(ValueError):
            status = str(json.loads(text)["status"])
            counts[status] = counts.get(status, 0) + 1
    return counts
