"""The ``openai`` attribution engine: a model with browser tools, then a report and checks.

``scan``: per persona, a tool loop (``goto``, ``snapshot``, ``click``, ``type``, ``hover``,
``scroll``, ``back``) over real headless Chromium under the hashed system prompt
(``SYSTEM_PROMPT_SHA256``), bounded by the request's action budget, ``max_turns`` and the
seconds per user. Then one report call (``response_format`` json_schema) over every user's
session, and one ending-check call per takeaway (``kept`` or ``dropped`` in the quote
pool). ``judge``: the same report call and checks over the recorded sessions.

It works against any OpenAI-compatible Chat Completions ``base_url``; offline it meets only
pairbench's Chat Completions double, which proves the plumbing, not the judgment.

**Usage**::

    engine = OpenAIEngine({"base_url": "http://127.0.0.1:8080/v1", "model": "gpt-5-mini"})
    report = engine.scan(EngineRequest(mode="scan", start_url=url, personas=[...],
                                       model_seed=7))
    report.findings, report.quote_pool, report.usage

**Failures** are reports, never exceptions: a key or quota rejection before any model call
succeeded gives ``errors=[{kind: model, message: "auth: ..." | "quota: ..."}]`` (the
runner's infrastructure); any other model error ``kind: model`` (or ``timeout``), an
unusable report or check ``kind: parse``, a browser that cannot start ``kind: internal``
with a message starting ``chromium:`` (also the runner's infrastructure, if it so decides).
Whatever was observed before the failure is kept; findings are never made up.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from pairbench.studies.attribution_reliability._openai_engine_browser import (
    Browser,
    BrowserUnavailable,
    Hands,
)
from pairbench.studies.attribution_reliability._openai_engine_model import (
    ModelCalls,
    ModelFailure,
)
from pairbench.studies.attribution_reliability._openai_engine_prompts import (
    ACTIONS,
    ENDING_CHECK_FORMAT,
    ENDING_CHECK_PROMPT,
    PROMPTS_SHA256,
    REPORT_FORMAT,
    REPORT_PROMPT,
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_SHA256,
    TOOLS,
    task_message,
)
from pairbench.studies.attribution_reliability._openai_engine_report import (
    UserRecord,
    check_message,
    parse_report,
    parse_verdict,
    recorded,
    sessions_message,
)
from pairbench.studies.attribution_reliability._openai_engine_settings import (
    OpenAIEngineSettings,
)
from pairbench.studies.attribution_reliability.engines._models import (
    EngineError,
    EngineReport,
    EngineRequest,
    Finding,
    Observation,
    Persona,
    Quote,
    ReportUser,
    SetAside,
)

__all__ = ["OpenAIEngine"]

_BUDGET_SPENT = "Refused: the action budget is spent. Give your final answer now."


@dataclass
class _Run:
    """What one request gathered so far (a failure reports exactly this)."""

    records: list[UserRecord] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)


class OpenAIEngine:
    """The ``openai`` engine (``AttributionEngine``); settings as ``OpenAIEngineSettings``.

    **Usage**::

        engine = OpenAIEngine({"base_url": url, "model": "gpt-5-mini",
                               "prices": {"input_per_mtok": 0.25, "output_per_mtok": 2.0}})
        engine.judge(request)     # request.sessions: the recorded bundle
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = OpenAIEngineSettings.parse(settings)

    def identity(self) -> dict[str, Any]:
        """What a lock records of this engine: endpoint, model, and the hashes of its words
        (never the key, only the variable that holds it)."""
        s = self.settings
        return {
            "engine": "openai", "base_url": s.base_url, "model": s.model,
            "temperature": s.temperature, "max_turns": s.max_turns,
            "api_key_env": s.api_key_env, "safety_prompt": s.safety_prompt,
            "system_prompt_sha256": SYSTEM_PROMPT_SHA256, "prompts_sha256": PROMPTS_SHA256,
        }  # fmt: skip

    def scan(self, request: EngineRequest) -> EngineReport:
        """Browse ``request.start_url`` as each persona, then report and check."""
        return self._run(request, browse=True)

    def judge(self, request: EngineRequest) -> EngineReport:
        """Report on ``request.sessions`` (recorded by pairbench), then check."""
        return self._run(request, browse=False)

    def _run(self, request: EngineRequest, *, browse: bool) -> EngineReport:
        run = _Run()
        errors: list[EngineError] = []
        key = os.environ.get(self.settings.api_key_env, "")
        if not key:
            message = f"auth: the environment variable {self.settings.api_key_env} is not set"
            return EngineReport(
                status="failed", errors=[EngineError(kind="model", message=message)]
            )
        calls = ModelCalls(self.settings, seed=request.model_seed, api_key=key)
        try:
            if browse:
                self._browse(request, calls, run)
            elif not request.sessions:
                raise ValueError("judge mode needs the recorded sessions")
            else:
                run.records = [recorded(s) for s in request.sessions]
            self._report(calls, run)
        except ModelFailure as failure:
            errors.append(EngineError(kind=failure.kind, message=failure.message))
        except BrowserUnavailable as exc:
            errors.append(EngineError(kind="internal", message=str(exc)))
        except Exception as exc:  # the browser or our own code: the engine's runtime failure
            errors.append(EngineError(kind="internal", message=f"{type(exc).__name__}: {exc}"))
        finally:
            calls.close()
        return EngineReport(
            status="failed" if errors else "completed",
            errors=errors,
            findings=run.findings,
            set_aside=run.set_aside,
            quote_pool=run.quotes,
            observations=[o for r in run.records for o in r.observations],
            users=[ReportUser(user=r.user, scripted=r.scripted) for r in run.records],
            usage=calls.usage(),
        )

    def _browse(self, request: EngineRequest, calls: ModelCalls, run: _Run) -> None:
        with Browser(self.settings.action_timeout_s) as browser:
            for persona in request.personas:
                record = UserRecord(persona.user, persona.goal, scripted=False)
                run.records.append(record)
                with browser.user(request.start_url) as hands:
                    self._loop(request, persona, hands, calls, record)

    def _loop(
        self,
        request: EngineRequest,
        persona: Persona,
        hands: Hands,
        calls: ModelCalls,
        record: UserRecord,
    ) -> None:
        budget = request.budget
        deadline = time.monotonic() + budget.seconds_per_user
        actions = 0
        task = task_message(request.start_url, persona.goal, budget.actions_per_user)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task},
        ]
        try:
            for _ in range(self.settings.turns_for(budget.actions_per_user)):
                if time.monotonic() > deadline:
                    break
                reply = calls.create(messages, tools=TOOLS)
                tool_calls = [c for c in reply.tool_calls or [] if hasattr(c, "function")]
                if not tool_calls:
                    if reply.content:
                        record.said.append(reply.content.strip())
                    break
                messages.append(
                    {"role": "assistant", "content": reply.content, "tool_calls": [
                        {"id": c.id, "type": "function",
                         "function": {"name": c.function.name, "arguments": c.function.arguments}}
                        for c in tool_calls]}
                )  # fmt: skip
                for c in tool_calls:
                    name = c.function.name
                    if name in ACTIONS and actions >= budget.actions_per_user:
                        text = _BUDGET_SPENT
                    else:
                        actions += name in ACTIONS
                        text = self._act(hands, name, c.function.arguments, record)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
        finally:
            if hands.last_snapshot and (
                not record.shown or record.shown[-1] != hands.last_snapshot
            ):
                record.shown.append(hands.last_snapshot)  # the page as the user left it

    def _act(self, hands: Hands, name: str, arguments: str, record: UserRecord) -> str:
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            return f"The arguments of {name} are not JSON: {arguments[:200]!r}"
        if not isinstance(args, dict):
            return f"The arguments of {name} must be a JSON object."
        outcome = hands.call(name, args)
        if outcome.snapshot is not None:
            record.shown.append(outcome.snapshot)
        seen = outcome.observation
        if seen is not None:
            step = len(record.observations)
            record.observations.append(
                Observation(user=record.user, step=step, target=seen.target,
                            reached_element=seen.reached_element,
                            outcome_text=seen.outcome_text, page_url=seen.page_url)
            )  # fmt: skip
            record.steps.append(
                {"step": step, "action": name, "target": seen.target,
                 "reached": seen.reached_element, "outcome": seen.outcome_text,
                 "url": seen.page_url}
            )  # fmt: skip
            record.shown.append(seen.outcome_text)
        return outcome.text

    def _report(self, calls: ModelCalls, run: _Run) -> None:
        users = {r.user for r in run.records}
        reply = calls.create(
            [{"role": "system", "content": REPORT_PROMPT},
             {"role": "user", "content": sessions_message(run.records)}],
            response_format=REPORT_FORMAT,
        )  # fmt: skip
        parsed = parse_report(reply.content, users)
        run.findings, run.set_aside = parsed.findings, parsed.set_aside
        by_user = {r.user: r for r in run.records}
        for user, sentence in parsed.takeaways:
            verdict = calls.create(
                [{"role": "system", "content": ENDING_CHECK_PROMPT},
                 {"role": "user", "content": check_message(by_user[user], sentence)}],
                response_format=ENDING_CHECK_FORMAT,
            )  # fmt: skip
            kept = parse_verdict(verdict.content)
            run.quotes.append(Quote(user=user, text=sentence, status="kept" if kept else "dropped"))
