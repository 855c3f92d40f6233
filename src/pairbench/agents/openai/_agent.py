"""The ``openai`` agent: a tool-calling loop over an OpenAI-compatible Chat Completions API.

Settings (``agent.settings``; see ``OpenAISettings``)::

    agent:
      adapter: openai
      env_allow: [OPENAI_API_KEY]          # the key is read from the agent's scrubbed env
      settings: {base_url: http://127.0.0.1:8080/v1, model: qwen3-8b, temperature: 0,
                 top_p: null, cache_prompt: null, tool_calling: native,
                 max_turns: 10, max_output_tokens: 1024, seed: true, stream: false,
                 request_timeout_s: 120, max_retries: 0,
                 attachments: auto, price_per_1k: {input: 0.0005, output: 0.0015}}

**Tools.** Every tool of the arm's MCP servers (connected with ``ctx.open_tools()`` in this
task) is offered as a function named ``<server>__<tool>`` (characters outside
``[A-Za-z0-9_-]`` become ``_``; at most 64); a call is mapped back and executed through the
surface, so the transcript records ``tool_call``/``tool_result`` and the fixture audits it.
A call of a name that was not offered, or with arguments that are not a JSON object, is
answered with an error message to the model and recorded as ``invalid_tool_call`` (nothing
ran). An arm without tools gets plain completions. ``tool_calling: constrained`` offers them as
one JSON-schema-constrained reply instead, for models without native tool calling (see
``_constrained``); the calls it yields run exactly as native ones.

**Sampling** is sent explicitly: ``temperature`` (``null`` sends none: ``server_default`` in
the ``agent_start`` event's ``sampling``), ``top_p`` when set, llama.cpp's ``cache_prompt``
when set, and the seed.

**Attachments** (the arm's ``attachments``, e.g. a PDF) go with the prompt in the first user
message, as file content parts (``file``), as extracted text with each file's name and SHA-256
(``text``), or ``auto``: file parts, then text if the endpoint rejects them with HTTP 400. One
``attachment`` event per file records the mode sent (see ``_openai_attachments``).

**Loop.** Send the messages; execute every tool call of the reply; append the results;
repeat until a reply has no tool calls (its text is the final answer) or ``max_turns``
requests were made (``agent_error`` "max turns reached"; the last reply's calls are not run).

**Per request** a ``model_request`` event: turn, ok, latency_ms, retries (requests sent beyond
the first), finish_reason, usage as given (incl. cached_tokens), llama.cpp ``timings``,
system_fingerprint, model, response_id, ``seed_sent`` read from the body actually sent, and
that body's and the reply's sha256 (compared between arms by a token hypothesis's check).

**Usage** totals are measured from the server's ``usage`` (source ``"<host> usage
(chat.completions)"``) only when every completed response carried it; otherwise missing
with the reason (see ``UsageTotals``). Cost is missing (no price table) unless
``price_per_1k`` is set: then *estimated* (estimator ``price_per_1k setting``).

**Seed evidence.** An httpx event hook reads every chat request body actually sent; the trial
is ``seeded`` only when each carried ``seed == ctx.model_seed`` (see ``SeedEvidence``).

**Failures.** An unreachable endpoint (nothing listening, or the connection broken: a local
server killed mid-run) raises ``InfraFailure`` at any time, as do authentication (401/403)
and quota (402; 429 ``insufficient_quota``) before any model call of the run succeeded
(retried once, then the run stops with the reason): the model was not there to be judged.
Authentication or quota after a success, and rate limits (429), 5xx, other provider errors
and timeouts at any time, are ``agent_error`` with the reason. The harness's proxy
variables are not read (``trust_env=False``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai
from openai import AsyncOpenAI

from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure, ToolSession
from pairbench.agents.openai import _constrained as constrained
from pairbench.agents.openai._attachments import AttachmentError, Attachments
from pairbench.agents.openai._wire import (
    MalformedReply,
    OpenAISettings,
    Reply,
    SeedEvidence,
    UsageTotals,
    complete,
    describe_failure,
)
from pairbench.store._records import Metric, usage_metrics

__all__ = ["OpenAIAgent", "OpenAISettings", "function_tools"]

_BAD_NAME = re.compile(r"[^A-Za-z0-9_-]")
TURNS_SOURCE = "openai agent loop (completed model requests)"


def function_tools(
    surface: ToolSession | None,
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
    """The surface's tools as Chat Completions functions, and each function's (server, tool)."""
    if surface is None:
        return [], {}
    functions: list[dict[str, Any]] = []
    names: dict[str, tuple[str, str]] = {}
    for server, infos in surface.tools.items():
        for info in infos:
            name = _BAD_NAME.sub("_", f"{server}__{info.name}")[:64]
            if name in names:
                raise ValueError(
                    f"tools {names[name]} and {(server, info.name)} both map to {name!r}"
                )
            names[name] = (server, str(info.name))
            schema = dict(info.input_schema or {"type": "object", "properties": {}})
            fn = {"name": name, "description": info.description or "", "parameters": schema}
            functions.append({"type": "function", "function": fn})
    return functions, names


class OpenAIAgent:
    """A Chat Completions tool loop (see the module docstring)."""

    uses_workdir = False
    """In-process: no private work folder, HOME or TMPDIR needed (see ``Agent``)."""
    Settings = OpenAISettings
    receives = frozenset({"mcp", "webmcp", "attachments"})

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings = OpenAISettings.parse(settings or {})

    @classmethod
    def describe(cls, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
        """What run.json records of an arm: tool discovery and the pinned variables."""
        parsed = OpenAISettings.parse(settings)
        out: dict[str, Any] = {
            "tool_discovery": "not applicable (every tool is offered in each request)",
            "tool_calling": parsed.tool_calling,
        }
        if parsed.tool_calling == "constrained":
            out["constrained_prompt_sha256"] = constrained.prompt_sha256()
        return out

    def sampling(self) -> dict[str, Any]:
        """What each request sends of the sampling, ``server_default`` where it sends none."""
        s = self.settings
        return {
            "temperature": "server_default" if s.temperature is None else s.temperature,
            "top_p": "server_default" if s.top_p is None else s.top_p,
            "cache_prompt": "server_default" if s.cache_prompt is None else s.cache_prompt,
            "seed": "model_seed" if s.seed else "not sent",
        }

    def request_kwargs(
        self, ctx: AgentContext, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The keyword arguments of one ``chat.completions.create`` call."""
        s = self.settings
        kwargs: dict[str, Any] = {"model": s.model, "messages": messages}
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.top_p is not None:
            kwargs["top_p"] = s.top_p
        if s.cache_prompt is not None:
            kwargs["extra_body"] = {"cache_prompt": s.cache_prompt}
        if tools and s.tool_calling == "constrained":
            kwargs["response_format"] = constrained.response_format(tools)
        elif tools:
            kwargs["tools"] = tools
        if s.max_output_tokens is not None:
            kwargs["max_tokens"] = s.max_output_tokens
        if s.seed:
            kwargs["seed"] = ctx.model_seed
        if s.stream:
            kwargs.update(stream=True, stream_options={"include_usage": True})
        return kwargs

    async def run(self, ctx: AgentContext) -> AgentOutput:
        s = self.settings
        key_found = bool(ctx.env.get(s.api_key_env))
        ctx.transcript.emit(
            "agent_start",
            agent="openai",
            arm=ctx.arm,
            model=s.model,
            base_url=s.base_url,
            api_key=f"from {s.api_key_env}" if key_found else "not-needed (variable unset)",
            stream=s.stream,
            tool_calling=s.tool_calling,
            sampling=self.sampling(),
        )
        if ctx.has_tools and ctx.open_tools is not None:
            async with ctx.open_tools() as surface:
                return await self._loop(ctx, surface)
        ctx.transcript.emit("message", text="No tools are available in this arm.")
        return await self._loop(ctx, None)

    async def _loop(self, ctx: AgentContext, surface: ToolSession | None) -> AgentOutput:
        s = self.settings
        tools, names = function_tools(surface)
        evidence = SeedEvidence(ctx.model_seed)
        totals = UsageTotals(f"{urlsplit(s.base_url).hostname} usage (chat.completions)")
        messages: list[dict[str, Any]] = []
        system = [s.system] if s.system else []
        if tools and s.tool_calling == "constrained":
            system.append(constrained.prompt_text(tools))
        if system:
            messages.append({"role": "system", "content": "\n\n".join(system)})
        attach = Attachments(list(ctx.attachments), s.attachments)
        try:
            messages.append({"role": "user", "content": attach.user_content(ctx.prompt)})
        except AttachmentError as exc:
            attach.record(ctx.transcript)
            return self._output(ctx, None, str(exc), totals, evidence)
        final: str | None = None
        error: str | None = None
        hooks = {"request": [evidence.on_request]}
        async with (
            httpx2.AsyncClient(
                event_hooks=hooks, timeout=s.request_timeout_s, trust_env=False
            ) as http,
            AsyncOpenAI(
                base_url=s.base_url,
                api_key=ctx.env.get(s.api_key_env) or "not-needed",
                timeout=s.request_timeout_s,
                max_retries=s.max_retries,
                http_client=http,
            ) as client,
        ):
            for turn in range(1, s.max_turns + 1):
                reply = await self._request(ctx, client, evidence, turn, messages, tools, attach)
                if isinstance(reply, str):
                    error = reply
                    break
                totals.add(reply.usage, reply.model)
                if tools and s.tool_calling == "constrained":
                    reply, unread = constrained.parse(reply, turn)
                    if unread is not None:
                        ctx.transcript.emit("constrained_reply_unread", turn=turn, reason=unread)
                messages.append(reply.message())
                if reply.content:
                    ctx.transcript.emit("message", text=reply.content)
                if not reply.tool_calls:
                    final = reply.content or ""
                    break
                if turn == s.max_turns:
                    error = (
                        f"max turns reached: {s.max_turns} model requests, and the last still "
                        f"called {', '.join(c['name'] for c in reply.tool_calls)}"
                    )
                    break
                for call in reply.tool_calls:
                    messages.append(await self._tool(ctx, surface, names, call))
        return self._output(ctx, final, error, totals, evidence)

    async def _request(
        self,
        ctx: AgentContext,
        client: AsyncOpenAI,
        evidence: SeedEvidence,
        turn: int,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        attach: Attachments,
    ) -> Reply | str:
        """One model call: the reply, or an ``agent_error`` reason; raises ``InfraFailure``.

        Under ``attachments: auto`` a 400 while file parts were sent is answered by sending
        the same turn again with the attachments as text."""
        s = self.settings
        kwargs = self.request_kwargs(ctx, messages, tools)
        first = len(evidence.seeds)
        t0 = time.perf_counter()
        try:
            reply = await complete(client, kwargs)
        except (openai.OpenAIError, httpx2.HTTPError, MalformedReply) as exc:
            reason, kind = describe_failure(exc, s.base_url, s.request_timeout_s)
            if attach.falls_back(exc):
                self._event(ctx, evidence, turn, first, t0, ok=False, error=reason, fallback="text")
                attach.fall_back(reason)
                user = next(m for m in messages if m["role"] == "user")
                try:
                    user["content"] = attach.user_content(ctx.prompt)
                except AttachmentError as err:
                    attach.record(ctx.transcript)
                    return str(err)
                return await self._request(ctx, client, evidence, turn, messages, tools, attach)
            attach.record(ctx.transcript)
            self._event(ctx, evidence, turn, first, t0, ok=False, error=reason)
            if kind == "unreachable" or (kind == "setup" and not ctx.signals.model_call_succeeded):
                raise InfraFailure(reason) from exc
            return reason
        ctx.signals.model_call_succeeded = True
        attach.record(ctx.transcript)
        self._event(
            ctx,
            evidence,
            turn,
            first,
            t0,
            ok=True,
            finish_reason=reply.finish_reason,
            usage=reply.usage,
            timings=reply.timings,
            system_fingerprint=reply.system_fingerprint,
            model=reply.model,
            response_id=reply.response_id,
            first_chunk_ms=reply.first_chunk_ms,
            tool_calls=len(reply.tool_calls),
            reply_sha256=reply.digest(),
        )
        return reply

    def _event(
        self,
        ctx: AgentContext,
        evidence: SeedEvidence,
        turn: int,
        first: int,
        t0: float,
        **fields: Any,
    ) -> None:
        sent = evidence.seeds[first:]
        bodies = evidence.digests[first:]
        ctx.transcript.emit(
            "model_request",
            turn=turn,
            latency_ms=round((time.perf_counter() - t0) * 1000, 3),
            retries=max(0, len(sent) - 1),
            seed_sent=sent[-1] if sent else None,
            body_sha256=bodies[-1] if bodies else None,
            stream=self.settings.stream,
            **fields,
        )

    async def _tool(
        self,
        ctx: AgentContext,
        surface: ToolSession | None,
        names: dict[str, tuple[str, str]],
        call: dict[str, str],
    ) -> dict[str, Any]:
        """Run one tool call through the surface; the ``tool`` message for the model."""
        target = names.get(call["name"])
        try:
            args = json.loads(call["arguments"] or "{}")
        except ValueError:
            args = None
        if surface is None or target is None or not isinstance(args, dict):
            why = "was not offered" if target is None else "arguments are not a JSON object"
            ctx.transcript.emit(
                "invalid_tool_call",
                id=call["id"],
                name=call["name"],
                arguments=call["arguments"],
                reason=why,
            )
            text = f"Error: tool call {call['name']!r} {why}; nothing was run."
            return {"role": "tool", "tool_call_id": call["id"], "content": text}
        outcome = await surface.call(target[0], target[1], args)
        text = str(getattr(outcome, "text", "") or "")
        structured = getattr(outcome, "structured", None)
        if not text and structured is not None:
            text = json.dumps(structured)
        if getattr(outcome, "is_error", False):
            text = f"Error: {text}"
        return {"role": "tool", "tool_call_id": call["id"], "content": text}

    def _output(
        self,
        ctx: AgentContext,
        final: str | None,
        error: str | None,
        totals: UsageTotals,
        evidence: SeedEvidence,
    ) -> AgentOutput:
        n_in, n_out, cost = totals.metrics(self.settings.price_per_1k)
        ctx.transcript.emit(
            "usage",
            input_tokens=n_in.value,
            output_tokens=n_out.value,
            cost_usd=cost.value,
            provenance=n_in.provenance,
            source=n_in.source,
            reason=n_in.reason,
            cost_provenance=cost.provenance,
        )
        if error is not None:
            ctx.transcript.emit("error", message=error)
        else:
            ctx.transcript.emit("final", text=final or "")
        usage = usage_metrics(
            source=totals.source,
            total_input=n_in,
            cache_read=totals.cache_read(),
            cache_creation=Metric.missing("Chat Completions reports no cache writes"),
            output=n_out,
        )
        return AgentOutput(
            final_answer=None if error is not None else final,
            error=error,
            turns=Metric.measured(totals.responses, TURNS_SOURCE),
            **usage._asdict(),
            cost_usd=cost,
            seeding=evidence.seeding(self.settings.seed),
            models=tuple(totals.models),
        )
