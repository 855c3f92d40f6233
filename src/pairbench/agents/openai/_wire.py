"""The wire side of the ``openai`` agent: settings, seed evidence, one completion, failures, usage.

Kept apart from the loop (``_openai.py``) so each piece can be read and tested alone.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
import openai
from openai import AsyncOpenAI
from pydantic import Field

from pairbench._model import Frozen
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric, Seeding


class MalformedReply(Exception):
    """A 200 response that is not a usable chat completion (a provider error)."""


class PricePer1k(Frozen):
    """Declared prices in USD per 1000 tokens (cost is then *estimated*, never measured)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class OpenAISettings(AdapterSettings):
    """The ``openai`` agent's settings (``agent.settings``), validated; unknown keys are errors."""

    example = "{base_url: http://127.0.0.1:8080/v1, model: my-model}"

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the variable in the agent's scrubbed env holding the key (declare it in
    ``agent.env_allow``). Unset: the key ``not-needed`` is sent (local servers)."""
    temperature: float | None = 0.0
    """Sent on every request; ``null`` sends none (recorded as ``server_default``)."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """Sent when set; otherwise recorded as ``server_default``."""
    cache_prompt: bool | None = None
    """llama.cpp's prompt cache, sent as ``cache_prompt`` when set (false: the same seed gives
    the same completion, nothing of an earlier request reused)."""
    tool_calling: Literal["native", "constrained"] = "native"
    """``native``: tools offered as ``tools``; ``constrained``: described in a system message
    and answered as a JSON-schema-constrained reply (``pairbench.agents.openai._constrained``),
    for models without native tool calling."""
    max_turns: int = Field(default=10, ge=1)
    """Model requests per trial; still asking for tools after the last is ``agent_error``."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Sent as ``max_tokens`` (the field every OpenAI-compatible server reads)."""
    seed: bool = True
    """Send the trial's 31-bit ``model_seed`` as ``seed`` on every request."""
    stream: bool = False
    """Stream (SSE) with ``stream_options.include_usage`` and aggregate the chunks."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=0, ge=0)
    """SDK retries per request (default 0: a failure is ours to record, not hidden)."""
    price_per_1k: PricePer1k | None = None
    system: str | None = None
    """An optional system message, the same in every arm."""
    attachments: Literal["file", "text", "auto"] = "auto"
    """How the arm's attachments reach the model: Chat Completions file parts, extracted text
    in the first user message, or ``auto`` (file parts; text when the endpoint answers 400).
    See ``pairbench.agents.openai._attachments``."""


class SeedEvidence:
    """What each chat request body actually sent carried as ``seed``, read by an httpx hook.

    Retries are requests too: every body the client sent counts, so a retry without the
    seed makes the trial unseeded.
    """

    def __init__(self, model_seed: int) -> None:
        self.model_seed = model_seed
        self.seeds: list[Any] = []
        """Per chat request sent: the body's ``seed`` (``None`` when absent or unreadable)."""
        self.digests: list[str] = []
        """Per chat request sent: the SHA-256 of its body's bytes, as sent."""

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return
        raw = await request.aread()
        self.digests.append(hashlib.sha256(raw).hexdigest())
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.seeds.append(body.get("seed") if isinstance(body, dict) else None)

    def carried(self, seed: Any) -> bool:
        return type(seed) is int and seed == self.model_seed

    def seeding(self, seed_setting: bool) -> Seeding:
        n = len(self.seeds)
        k = sum(self.carried(s) for s in self.seeds)
        if n and k == n:
            reason = f"every chat request body sent ({n}) carried seed {self.model_seed}"
            return Seeding(
                status="seeded", model_seed=self.model_seed, requests=n, requests_with_seed=k,
                reason=reason,
            )  # fmt: skip
        reason = (
            "no chat request was sent"
            if not n
            else f"{n - k} of {n} chat request bodies sent lacked seed {self.model_seed}"
        )
        if not seed_setting:
            reason += " (agent.settings.seed is false)"
        return Seeding(
            status="unseeded", model_seed=self.model_seed, requests=n, requests_with_seed=k,
            reason=reason,
        )  # fmt: skip


@dataclass
class Reply:
    """One completed chat response, normalized (streamed or not)."""

    content: str | None = None
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    """``{id, name, arguments}`` (arguments: the JSON string the model wrote)."""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    system_fingerprint: str | None = None
    model: str | None = None
    response_id: str | None = None
    first_chunk_ms: float | None = None

    def digest(self) -> str:
        """SHA-256 of the reply's content and tool calls (names and arguments; ids left out:
        some servers draw them at random, and they name nothing the model decided)."""
        calls = [[c["name"], c["arguments"]] for c in self.tool_calls]
        text = json.dumps([self.content, calls], separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def message(self) -> dict[str, Any]:
        """The assistant message to send back in the next request."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"],
                 "arguments": c["arguments"]}}
                for c in self.tool_calls
            ]  # fmt: skip
        return out

    def head(self, data: Mapping[str, Any]) -> None:
        self.response_id = data.get("id") or self.response_id
        self.model = data.get("model") or self.model
        self.system_fingerprint = data.get("system_fingerprint") or self.system_fingerprint
        self.usage = data.get("usage") or self.usage
        self.timings = data.get("timings") or self.timings


async def complete(client: AsyncOpenAI, kwargs: dict[str, Any]) -> Reply:
    """Send one chat request and return the normalized reply (aggregating a stream)."""
    reply = Reply()
    if not kwargs.get("stream"):
        data = (await client.chat.completions.create(**kwargs)).to_dict()
        reply.head(data)
        if not data.get("choices"):
            raise MalformedReply("the response had no choices")
        choice = data["choices"][0]
        message = choice.get("message") or {}
        reply.content = message.get("content")
        reply.finish_reason = choice.get("finish_reason")
        reply.tool_calls = [
            {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in message.get("tool_calls") or []
        ]
        return reply
    t0 = time.perf_counter()
    parts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    stream = await client.chat.completions.create(**kwargs)
    async for chunk in stream:
        data = chunk.to_dict()
        reply.head(data)
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            if (delta.get("content") or delta.get("tool_calls")) and reply.first_chunk_ms is None:
                reply.first_chunk_ms = round((time.perf_counter() - t0) * 1000, 3)
            parts.append(delta.get("content") or "")
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    int(tc.get("index", 0)), {"id": "", "name": "", "arguments": ""}
                )
                fn = tc.get("function") or {}
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
            reply.finish_reason = choice.get("finish_reason") or reply.finish_reason
    reply.content = "".join(parts) or None
    reply.tool_calls = [calls[i] for i in sorted(calls)]
    return reply


Failure = Literal["unreachable", "setup", "agent"]
"""How a failed request counts: ``unreachable`` (nothing answered, or the connection broke:
the model was not there, e.g. a local server killed mid-run) is ``infra`` at any time;
``setup`` (authentication, quota) is ``infra`` while nothing in the run has succeeded, the
provider not being set up; ``agent`` (rate limits, 5xx, timeouts, ...) is ``agent_error``."""


def describe_failure(exc: Exception, base_url: str, timeout_s: float) -> tuple[str, Failure]:
    """(reason, how it counts) for a failed request (see ``Failure``)."""
    body = getattr(exc, "body", None)
    detail = (
        str(body.get("message")) if isinstance(body, dict) and body.get("message") else str(exc)
    )
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
        return f"the model request timed out after {timeout_s:g} s", "agent"
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        cause = exc.__cause__ or exc
        return f"the model provider is unreachable at {base_url}: {cause!r}", "unreachable"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        reason = f"the model provider rejected authentication ({exc.status_code}): {detail}"
        return reason, "setup"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        quota = "insufficient_quota" in (getattr(exc, "code", None), getattr(exc, "type", None))
        if status == 402 or (status == 429 and quota):
            reason = f"the model provider rejected the request for quota ({status}): {detail}"
            return reason, "setup"
        if status == 429:
            return f"rate limited (429): {detail}", "agent"
        return f"provider error ({status}): {detail}", "agent"
    return f"provider error: {type(exc).__name__}: {detail}", "agent"


@dataclass
class UsageTotals:
    """Token totals over a trial's completed responses.

    The rule: a total is *measured* only when every completed response carried ``usage``
    with integer ``prompt_tokens`` and ``completion_tokens``; if any lacked it the total is
    *missing* with the reason (a partial sum is never labelled measured). Failed requests
    (429, 5xx, ...) return no completion and no usage and are not responses here.
    """

    source: str
    responses: int = 0
    lacking: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cached_lacking: int = 0
    """Responses whose usage had no integer ``prompt_tokens_details.cached_tokens``."""
    models: list[str] = field(default_factory=list)

    def add(self, usage: Mapping[str, Any] | None, model: str | None = None) -> None:
        self.responses += 1
        if model:
            self.models.append(model)
        p = (usage or {}).get("prompt_tokens")
        c = (usage or {}).get("completion_tokens")
        if type(p) is not int or type(c) is not int:
            self.lacking += 1
            return
        self.prompt += p
        self.completion += c
        cached = ((usage or {}).get("prompt_tokens_details") or {}).get("cached_tokens")
        if type(cached) is int:
            self.cached += cached
        else:
            self.cached_lacking += 1

    def cache_read(self) -> Metric:
        """Cached prompt tokens, measured only when every response reported them."""
        if self._missing() is not None or self.cached_lacking:
            return Metric.missing("the provider reported no prompt_tokens_details.cached_tokens")
        return Metric.measured(self.cached, self.source)

    def _missing(self) -> str | None:
        if not self.responses:
            return "no model response completed"
        if self.lacking:
            return (
                f"{self.lacking} of {self.responses} model responses carried no usage; "
                "a partial sum is not reported as measured"
            )
        return None

    def metrics(self, price: PricePer1k | None) -> tuple[Metric, Metric, Metric]:
        """(input_tokens, output_tokens, cost_usd)."""
        why = self._missing()
        if why is not None:
            missing = Metric.missing(why)
            cost_why = "no price table" if price is None else f"token usage is missing: {why}"
            return missing, missing, Metric.missing(cost_why)
        n_in = Metric.measured(self.prompt, self.source)
        n_out = Metric.measured(self.completion, self.source)
        if price is None:
            reason = "no price table (set agent.settings.price_per_1k {input, output} to estimate)"
            return n_in, n_out, Metric.missing(reason)
        usd = (self.prompt * price.input + self.completion * price.output) / 1000.0
        cost = Metric(value=usd, provenance="estimated", estimator="price_per_1k setting")
        return n_in, n_out, cost
