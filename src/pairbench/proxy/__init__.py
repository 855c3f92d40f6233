"""The recording model proxy: proof of what reached the model, and of who else used it.

A system under test (an agent runtime at a git revision) is pointed at a loopback
``RecordingProxy`` instead of the model server; every request body it actually sent is
kept, with the response, usage, llama.cpp ``timings`` and timestamps. From those records:
``effective_sampling`` (each parameter ``sent``, ``mixed`` or ``server_default``),
``seed_evidence``, ``fingerprints``; from the server itself: ``model_identity``,
``preflight``, and ``read_metrics`` before and after a window for ``interference``.
``SlotLease`` keeps a second run off the same endpoint.

**Usage**::

    from pairbench.proxy import RecordingProxy, SlotLease, effective_sampling, preflight

    with SlotLease(server_url, runs_dir / ".leases"), RecordingProxy(
        server_url, run_dir / "exchanges.jsonl", label="AR-001"
    ) as proxy:
        assert preflight(server_url).ok
        ...                          # the runtime talks to f"{proxy.url}/v1"
        sampling = effective_sampling(proxy.records(), {"temperature": 1.0})
"""

from pairbench.proxy._identity import (
    FingerprintChange,
    Fingerprints,
    GgufIdentity,
    ModelIdentity,
    fingerprints,
    gguf_identity,
    model_identity,
)
from pairbench.proxy._lease import SlotLease, endpoint_key
from pairbench.proxy._metrics import (
    CounterCheck,
    Interference,
    MetricsSnapshot,
    interference,
    parse_prometheus,
    read_metrics,
)
from pairbench.proxy._preflight import Preflight, PreflightCheck, preflight
from pairbench.proxy._proxy import LABEL_HEADER, RecordingProxy
from pairbench.proxy._records import ExchangeRecord, StreamSummary, ToolCall, read_records
from pairbench.proxy._sampling import (
    CORE_KEYS,
    EffectiveSampling,
    ParameterUse,
    RequestValue,
    SamplingViolation,
    SeedProof,
    effective_sampling,
    seed_evidence,
)

__all__ = [
    "CORE_KEYS",
    "LABEL_HEADER",
    "CounterCheck",
    "EffectiveSampling",
    "ExchangeRecord",
    "FingerprintChange",
    "Fingerprints",
    "GgufIdentity",
    "Interference",
    "MetricsSnapshot",
    "ModelIdentity",
    "ParameterUse",
    "Preflight",
    "PreflightCheck",
    "RecordingProxy",
    "RequestValue",
    "SamplingViolation",
    "SeedProof",
    "SlotLease",
    "StreamSummary",
    "ToolCall",
    "effective_sampling",
    "endpoint_key",
    "fingerprints",
    "gguf_identity",
    "interference",
    "model_identity",
    "parse_prometheus",
    "preflight",
    "read_metrics",
    "read_records",
    "seed_evidence",
]
