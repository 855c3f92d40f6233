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
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pairbench.schedule._plan import TrialKey
from pairbench.spec._proxy import ModelProxy
from pairbench.store._records import Seeding
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.store._transcript import Transcript

if TYPE_CHECKING:  # the proxy's dependencies load only for runs that declare one
    from pairbench.proxy import RecordingProxy


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
def proxy_for_run(spec: ModelProxy | None, run_dir: RunDir) -> Iterator[RecordingProxy | None]:
    """The run's proxy (None without ``proxy:``), with the server's lease held throughout."""
    if spec is None:
        yield None
        return
    from pairbench.model._cache import cache_root
    from pairbench.proxy import RecordingProxy, SlotLease

    log = run_dir.path / "proxy" / "exchanges.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with SlotLease(spec.upstream, cache_root() / "leases"), RecordingProxy(spec.upstream, log) as p:
        yield p


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
) -> Seeding:
    """The attempt's seeding from the bodies its requests carried; the sampling as a
    ``model_proxy`` transcript event."""
    from pairbench.proxy import effective_sampling, seed_evidence

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
    return proof.seeding()
