"""The ``openai`` engine's model calls: one client, usage tallied per model, errors sorted.

Every request carries ``seed`` (the request's ``model_seed``). Usage is read from each
response's ``usage`` and summed per model. A rejection of the key or the quota before any
call succeeded is the provider refusing us, not the engine failing: its message starts with
``auth:`` or ``quota:`` so the runner can treat it as infrastructure.

**Usage**::

    calls = ModelCalls(settings, seed=7, api_key="sk-...")
    message = calls.create(messages, tools=TOOLS)       # raises ModelFailure
    calls.usage()                                       # [Usage(model=..., ...)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pairbench.studies.attribution_reliability._openai_engine_settings import (
    OpenAIEngineSettings,
)
from pairbench.studies.attribution_reliability.engines._models import Usage

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessage

FailureKind = Literal["model", "internal", "parse", "timeout"]


class ModelFailure(Exception):
    """A model call that did not give a usable answer; ``kind`` is the report error's."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message


@dataclass
class _Tally:
    input_tokens: int = 0
    output_tokens: int = 0
    missing: int = 0
    """Responses without ``usage``: their tokens are unknown, so the sum is not measured."""


@dataclass
class ModelCalls:
    """The engine's client for one request (scan or judge)."""

    settings: OpenAIEngineSettings
    seed: int
    api_key: str
    succeeded: int = 0
    _tally: dict[str, _Tally] = field(default_factory=dict)
    _client: OpenAI | None = None

    def client(self) -> OpenAI:
        if self._client is None:
            from openai import OpenAI  # the SDK stays optional for other engines

            s = self.settings
            self._client = OpenAI(
                base_url=s.base_url, api_key=self.api_key, max_retries=s.max_retries,
                timeout=s.timeout_s,
            )  # fmt: skip
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def create(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatCompletionMessage:
        """One Chat Completions call; its reply message, or ``ModelFailure``."""
        import openai

        extra: dict[str, Any] = {}
        if tools is not None:
            extra["tools"] = tools
        if response_format is not None:
            extra["response_format"] = response_format
        if self.settings.temperature is not None:
            extra["temperature"] = self.settings.temperature
        if self.settings.max_output_tokens is not None:
            extra["max_tokens"] = self.settings.max_output_tokens
        try:
            response = self.client().chat.completions.create(
                model=self.settings.model, messages=list(messages), seed=self.seed,  # type: ignore[arg-type]
                **extra,
            )  # fmt: skip
        except openai.APIStatusError as exc:
            raise ModelFailure("model", self._rejection(exc)) from None
        except openai.APITimeoutError as exc:
            raise ModelFailure("timeout", f"model request timed out: {exc}") from None
        except openai.APIError as exc:
            raise ModelFailure("model", f"model request failed: {exc}") from None
        self._count(response.usage)
        self.succeeded += 1
        if not response.choices:
            raise ModelFailure("model", "the model answered with no choices")
        return response.choices[0].message

    def _rejection(self, exc: Any) -> str:
        status = int(getattr(exc, "status_code", 0) or 0)
        code = str(getattr(exc, "code", "") or "")
        text = f"{status} {code or type(exc).__name__}: {getattr(exc, 'message', exc)}"
        if self.succeeded == 0 and status in (401, 403):
            return f"auth: the provider rejected the key ({text})"
        if self.succeeded == 0 and status == 429 and code == "insufficient_quota":
            return f"quota: the provider refused for quota ({text})"
        # after a success the key and quota were good: a later refusal is the engine's run
        return f"model error after {self.succeeded} successful calls: {text}"

    def _count(self, usage: Any) -> None:
        tally = self._tally.setdefault(self.settings.model, _Tally())
        if usage is None:
            tally.missing += 1
            return
        tally.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        tally.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)

    def usage(self) -> list[Usage]:
        """Tokens per model; ``cost_usd`` from declared prices (``estimated``) or null."""
        out = []
        for model, t in sorted(self._tally.items()):
            cost = self.settings.cost(t.input_tokens, t.output_tokens)
            measured = cost is None and t.missing == 0
            out.append(
                Usage(
                    model=model,
                    input_tokens=t.input_tokens,
                    output_tokens=t.output_tokens,
                    cost_usd=cost,
                    provenance="measured" if measured else "estimated",
                )
            )
        return out
