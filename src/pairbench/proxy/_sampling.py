"""What sampling the model actually got, read from the request bodies the proxy forwarded:
each parameter ``sent``, ``mixed`` or ``server_default``; and whether the seed reached every
request (retries included).

Filter records to one scenario first (``[r for r in records if r.label == "AR-001"]``):
"every request" means every request of the records passed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.proxy._records import ExchangeRecord
from pairbench.store._records import Seeding

CORE_KEYS = ("temperature", "top_p", "top_k", "min_p", "seed", "max_tokens",
             "repeat_penalty", "presence_penalty", "frequency_penalty")  # fmt: skip
"""Always reported, sent or not: an omitted one is the server's default."""
OTHER_KEYS = frozenset({
    "max_completion_tokens", "n_predict", "typical_p", "typ_p", "dynatemp_range",
    "dynatemp_exponent", "top_n_sigma", "xtc_probability", "xtc_threshold", "repeat_last_n",
    "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
    "dry_sequence_breakers", "mirostat", "mirostat_tau", "mirostat_eta", "samplers",
    "logit_bias", "n_probs", "min_keep", "ignore_eos", "stop", "n", "logprobs", "top_logprobs",
})  # fmt: skip
"""Other sampling keys (OpenAI's and llama.cpp's): reported when some request carries one."""
_PROPS_NAME = {"max_completion_tokens": "n_predict", "typ_p": "typical_p"}
"""A request key whose llama.cpp default is listed under another name in ``/props``."""
UNPROVEN = "unproven: the server's default as /props states it, not seen applied"


class RequestValue(Frozen):
    """One request's value of a parameter."""

    n: int
    """The exchange number."""
    label: str | None = None
    present: bool
    """Whether the body carried the key at all."""
    value: Any = None


class ParameterUse(Frozen):
    """How one sampling parameter reached the model across the requests read."""

    name: str
    status: Literal["sent", "mixed", "server_default"]
    """``sent``: the same value in every request; ``mixed``: different values, or present
    in some and absent in others; ``server_default``: absent everywhere."""
    value: Any = None
    """``sent``: the value every request carried."""
    values: list[RequestValue] = Field(default_factory=list)
    """``mixed``: every request's value or absence, so the odd ones can be named."""
    server_default: Any = None
    """``server_default``: the server's default when ``/props`` stated it (``UNPROVEN``)."""
    detail: str = ""
    """One sentence for a report."""


class SamplingViolation(Frozen):
    """A parameter the caller required that was not sent everywhere with its value."""

    name: str
    expected: Any
    detail: str
    requests: list[int] = Field(default_factory=list)
    """The exchanges that did not carry the expected value."""


class EffectiveSampling(Frozen):
    """``effective_sampling``'s verdict over a set of exchanges."""

    requests: list[int]
    """Exchange numbers of the model requests read."""
    unreadable: list[int] = Field(default_factory=list)
    """Model requests whose body was not a JSON object (they carried no parameter)."""
    parameters: list[ParameterUse]
    violations: list[SamplingViolation] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No violation of what the caller expected."""
        return not self.violations

    def parameter(self, name: str) -> ParameterUse:
        return next(p for p in self.parameters if p.name == name)


def _same(value: Any) -> tuple[str, Any]:
    """A comparison key: 1 and 1.0 are one value, True is not 1, dicts compare by content."""
    if isinstance(value, bool) or value is None:
        return ("const", value)
    if isinstance(value, int | float):
        return ("number", float(value))
    return ("json", json.dumps(value, sort_keys=True))


def _use(name: str, seen: list[RequestValue], defaults: Mapping[str, Any] | None) -> ParameterUse:
    present = [v for v in seen if v.present]
    if not present:
        key = _PROPS_NAME.get(name, name)
        known = defaults is not None and key in defaults
        default = defaults[key] if defaults is not None and known else None
        detail = f"{name} was sent in no request: the server's default applies" + (
            f" ({default!r}; {UNPROVEN})" if known else " (unknown: no /props default)"
        )
        return ParameterUse(name=name, status="server_default", server_default=default,
                            detail=detail)  # fmt: skip
    if len(present) == len(seen) and len({_same(v.value) for v in present}) == 1:
        value = present[0].value
        detail = f"{name} = {value!r} sent in every request ({len(seen)})"
        return ParameterUse(name=name, status="sent", value=value, detail=detail)
    absent = [v.n for v in seen if not v.present]
    distinct = sorted({json.dumps(v.value, sort_keys=True) for v in present})
    detail = f"{name} varied across requests: values {', '.join(distinct)}"
    if absent:
        detail += f"; absent from request(s) {', '.join(map(str, absent))}"
    return ParameterUse(name=name, status="mixed", values=seen, detail=detail)


def effective_sampling(
    records: Iterable[ExchangeRecord],
    expected: Mapping[str, Any] | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> EffectiveSampling:
    """Each sampling parameter's use over the model requests among ``records``.

    ``expected`` requires parameters sent with a value in every request (the study requires
    ``{"temperature": 1.0}``); anything else is a violation naming the requests.
    ``defaults`` is the server's ``default_generation_settings.params`` from ``/props``
    (``ModelIdentity.sampling_defaults``), shown for parameters never sent.

    **Usage**::

        found = effective_sampling(proxy.records(), {"temperature": 1.0},
                                   defaults=model_identity(url).sampling_defaults)
        found.parameter("top_p").status   # "server_default" when no request sent it
        found.ok                          # False: temperature was not sent everywhere
    """
    chat = [r for r in records if r.is_model_request]
    names = list(CORE_KEYS) + sorted({k for r in chat for k in r.body or {} if k in OTHER_KEYS})
    parameters = []
    for name in names:
        seen = [
            RequestValue(n=r.n, label=r.label, present=name in (r.body or {}),
                         value=(r.body or {}).get(name))
            for r in chat
        ]  # fmt: skip
        parameters.append(_use(name, seen, defaults))
    violations: list[SamplingViolation] = []
    for name, want in (expected or {}).items():
        found = next((p for p in parameters if p.name == name), None)
        if not chat:
            missing = "no model request was recorded"
            violations.append(SamplingViolation(name=name, expected=want, detail=missing))
            continue
        if found is None:  # a key outside the known sampling keys, asked for by name
            seen = [RequestValue(n=r.n, label=r.label, present=name in (r.body or {}),
                                 value=(r.body or {}).get(name)) for r in chat]  # fmt: skip
            found = _use(name, seen, defaults)
            parameters.append(found)
        wrong = [
            r.n for r in chat
            if name not in (r.body or {}) or _same((r.body or {})[name]) != _same(want)
        ]  # fmt: skip
        if wrong:
            detail = f"{name} must be sent as {want!r} in every request; {found.detail}"
            violations.append(SamplingViolation(name=name, expected=want, detail=detail,
                                                requests=wrong))  # fmt: skip
    return EffectiveSampling(
        requests=[r.n for r in chat],
        unreadable=[r.n for r in chat if r.body is None],
        parameters=parameters,
        violations=violations,
    )


class SeedProof(Frozen):
    """Whether ``model_seed`` provably reached every model request (retries included)."""

    status: Literal["seeded", "unseeded"]
    model_seed: int
    requests: list[int]
    """Exchange numbers of the model requests read."""
    lacking: list[RequestValue] = Field(default_factory=list)
    """The requests whose body did not carry ``seed == model_seed`` (and what they had)."""
    reason: str

    def seeding(self) -> Seeding:
        """The result file's ``Seeding`` record."""
        n = len(self.requests)
        return Seeding(status=self.status, model_seed=self.model_seed, requests=n,
                       requests_with_seed=n - len(self.lacking), reason=self.reason)  # fmt: skip


def seed_evidence(records: Iterable[ExchangeRecord], model_seed: int) -> SeedProof:
    """``seeded`` only when every model request body forwarded carried ``seed`` equal to
    ``model_seed`` (an int, not 1.0 or "1"); otherwise ``unseeded``, naming the requests.

    **Usage**::

        proof = seed_evidence(proxy.records(), model_seed=1234)
        proof.status    # "unseeded" if a retry dropped the seed
        proof.lacking   # [RequestValue(n=3, present=False, ...)]
    """
    chat = [r for r in records if r.is_model_request]
    lacking = [
        RequestValue(n=r.n, label=r.label, present="seed" in (r.body or {}),
                     value=(r.body or {}).get("seed"))
        for r in chat
        if not (type((r.body or {}).get("seed")) is int and (r.body or {})["seed"] == model_seed)
    ]  # fmt: skip
    numbers = [r.n for r in chat]
    if chat and not lacking:
        reason = f"every model request forwarded ({len(chat)}) carried seed {model_seed}"
        return SeedProof(status="seeded", model_seed=model_seed, requests=numbers, reason=reason)
    if not chat:
        reason = "no model request was recorded"
    else:
        named = ", ".join(
            f"#{v.n} ({'seed ' + json.dumps(v.value) if v.present else 'no seed'})" for v in lacking
        )
        reason = f"{len(lacking)} of {len(chat)} model requests lacked seed {model_seed}: {named}"
    return SeedProof(status="unseeded", model_seed=model_seed, requests=numbers,
                     lacking=lacking, reason=reason)  # fmt: skip
