"""Which model and which server answered: the upstream's own endpoints (``/props``,
``/v1/models``, ``/slots``, ``/health``), the GGUF it names (sha256 and header keys), and
the ``system_fingerprint`` of every response, which must stay constant."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import Field

from pairbench._atomic import sha256_file
from pairbench._clock import now_iso
from pairbench._errors import ModelError
from pairbench._model import Frozen
from pairbench.model._weights import gguf_header
from pairbench.proxy._records import ExchangeRecord
from pairbench.proxy._upstream import fetch


class GgufIdentity(Frozen):
    """The weights file the server named, read from this machine's disk."""

    path: str
    sha256: str
    size: int
    architecture: str | None = None
    """``general.architecture``."""
    file_type: int | None = None
    """``general.file_type`` (llama.cpp's ftype enum; 15 is Q4_K_M)."""
    context_length: int | None = None
    """``<architecture>.context_length``: the context the model was trained for."""
    header: dict[str, Any]
    """Every header key (arrays as their length; see ``pairbench.model``'s reader)."""


class ModelIdentity(Frozen):
    """What the upstream says it is; anything it does not serve is in ``missing``."""

    base_url: str
    taken_at: str
    health: str | None = None
    """``/health``'s ``status`` (``ok`` when ready)."""
    build_info: str | None = None
    """``/props`` ``build_info`` (llama.cpp's build; equals ``system_fingerprint``)."""
    total_slots: int | None = None
    n_ctx: int | None = None
    """Per slot: ``/props`` ``default_generation_settings.n_ctx``."""
    model_path: str | None = None
    model_alias: str | None = None
    model_ftype: str | None = None
    chat_template_sha256: str | None = None
    """SHA-256 of ``/props`` ``chat_template`` (the template itself can be long)."""
    chat_template_caps: dict[str, Any] | None = None
    sampling_defaults: dict[str, Any] | None = None
    """``/props`` ``default_generation_settings.params``: what an omitted parameter gets."""
    models: list[str] | None = None
    """The ids ``/v1/models`` lists."""
    slots: int | None = None
    """How many slots ``/slots`` lists."""
    gguf: GgufIdentity | None = None
    missing: dict[str, str] = Field(default_factory=dict)
    """Field name -> why it is not known (an endpoint not served, a file not readable)."""


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def gguf_identity(path: Path) -> GgufIdentity:
    """The GGUF's sha256, size and header keys (a ``ModelError`` if it is not a GGUF)."""
    header = gguf_header(path)
    arch = header.get("general.architecture")
    return GgufIdentity(
        path=str(path), sha256=sha256_file(path), size=path.stat().st_size,
        architecture=arch if isinstance(arch, str) else None,
        file_type=_int(header.get("general.file_type")),
        context_length=_int(header.get(f"{arch}.context_length")), header=header,
    )  # fmt: skip


def model_identity(base_url: str, *, hash_gguf: bool = True) -> ModelIdentity:
    """Read the upstream's identity; never raises for what a server does not serve.

    **Usage**::

        found = model_identity("http://127.0.0.1:8080")
        found.build_info, found.total_slots, found.n_ctx, found.gguf.sha256
        found.missing          # {"gguf": "model_path ... is not a readable file", ...}
    """
    out: dict[str, Any] = {"base_url": base_url, "taken_at": now_iso()}
    missing: dict[str, str] = {}
    health = fetch(base_url, "/health")
    if health.missing is None and isinstance(health.data, dict):
        out["health"] = health.data.get("status")
    else:
        missing["health"] = health.missing or "/health answered without a status"
    props = fetch(base_url, "/props")
    if props.missing is None and isinstance(props.data, dict):
        _from_props(props.data, out, missing)
    else:
        for name in ("build_info", "total_slots", "n_ctx", "model_path", "chat_template_caps",
                     "sampling_defaults"):  # fmt: skip
            missing[name] = props.missing or "/props answered with something not an object"
    models = fetch(base_url, "/v1/models")
    listed = models.data.get("data") if isinstance(models.data, dict) else None
    if isinstance(listed, list):
        out["models"] = [str(m.get("id")) for m in listed if isinstance(m, dict)]
    else:
        missing["models"] = models.missing or "/v1/models answered without a data list"
    slots = fetch(base_url, "/slots")
    if isinstance(slots.data, list):
        out["slots"] = len(slots.data)
    else:
        missing["slots"] = slots.missing or "/slots answered with something not a list"
    path = out.get("model_path")
    if not hash_gguf:
        missing["gguf"] = "not hashed (hash_gguf=False)"
    elif not path:
        missing["gguf"] = "the server names no model_path"
    elif not Path(path).is_file():
        missing["gguf"] = f"model_path {path} is not a readable file on this machine"
    else:
        try:
            out["gguf"] = gguf_identity(Path(path))
        except (OSError, ModelError) as exc:
            missing["gguf"] = f"model_path {path} could not be read as a GGUF: {exc}"
    return ModelIdentity(**out, missing=missing)


def _from_props(props: dict[str, Any], out: dict[str, Any], missing: dict[str, str]) -> None:
    settings = props.get("default_generation_settings")
    settings = settings if isinstance(settings, dict) else {}
    template = props.get("chat_template")
    found = {
        "build_info": props.get("build_info"),
        "total_slots": _int(props.get("total_slots")),
        "n_ctx": _int(settings.get("n_ctx")),
        "model_path": props.get("model_path") or None,
        "model_alias": props.get("model_alias"),
        "model_ftype": props.get("model_ftype"),
        "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()
        if isinstance(template, str) and template
        else None,
        "chat_template_caps": props.get("chat_template_caps"),
        "sampling_defaults": settings.get("params"),
    }
    for name, value in found.items():
        if value is None:
            key = {
                "n_ctx": "default_generation_settings.n_ctx",
                "chat_template_sha256": "chat_template",
                "sampling_defaults": "default_generation_settings.params",
            }
            missing[name] = f"/props has no {key.get(name, name)}"
        else:
            out[name] = value


class FingerprintChange(Frozen):
    """Where ``system_fingerprint`` changed between consecutive responses."""

    n: int
    """The exchange whose response first carried ``after``."""
    label: str | None = None
    before: str
    after: str


class Fingerprints(Frozen):
    """The ``system_fingerprint`` values of the model responses read."""

    values: list[str]
    """Distinct values, in order of first appearance."""
    fingerprint_changed: bool
    changes: list[FingerprintChange] = Field(default_factory=list)
    without: list[int] = Field(default_factory=list)
    """Answered model requests (2xx) whose response carried no fingerprint."""


def fingerprints(records: Iterable[ExchangeRecord]) -> Fingerprints:
    """The fingerprints of the answered model requests; more than one is flagged.

    **Usage**::

        found = fingerprints(proxy.records())
        if found.fingerprint_changed:
            print(found.changes[0])   # n=7 before='b4000' after='b4001': the server changed
    """
    answered = [r for r in records if r.is_model_request and r.status and r.status < 300]
    values: list[str] = []
    changes: list[FingerprintChange] = []
    last: str | None = None
    for record in answered:
        now = record.system_fingerprint
        if now is None:
            continue
        if now not in values:
            values.append(now)
        if last is not None and now != last:
            changes.append(FingerprintChange(n=record.n, label=record.label, before=last,
                                             after=now))  # fmt: skip
        last = now
    return Fingerprints(
        values=values, fingerprint_changed=len(values) > 1, changes=changes,
        without=[r.n for r in answered if r.system_fingerprint is None],
    )  # fmt: skip
