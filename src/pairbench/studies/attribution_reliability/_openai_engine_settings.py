"""The ``openai`` engine's settings (an arm's ``engine.settings`` dict), validated up front.

**Usage**::

    settings = OpenAIEngineSettings.parse({"base_url": "http://127.0.0.1:8080/v1",
                                           "model": "gpt-5-mini", "max_turns": 14})
    settings.turns_for(actions_per_user=10)   # 13: the request's budget + 3, capped
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from pairbench._model import Frozen

EXTRA_TURNS = 3
"""Turns beyond the action budget: the first snapshot, a look after the last action, and
the closing answer."""


class Prices(Frozen):
    """Declared USD prices per million tokens; with them cost is ``estimated``."""

    input_per_mtok: float = Field(ge=0, allow_inf_nan=False)
    output_per_mtok: float = Field(ge=0, allow_inf_nan=False)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok
        ) / 1_000_000


class OpenAIEngineSettings(Frozen):
    """What an arm configures. Unknown keys are refused, so a typo cannot pass silently."""

    base_url: str = Field(min_length=1)
    """Any OpenAI-compatible Chat Completions endpoint, ending in ``/v1`` as a rule."""
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    """The environment variable holding the key (never the key itself)."""
    model: str = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False)
    """Sent only when set (some reasoning models refuse the parameter)."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Sent as ``max_tokens`` when set: a cap per model call (a small local model may
    otherwise write until its context is full)."""
    max_turns: int = Field(default=13, ge=1)
    """Model calls per user in the tool loop; capped at the request's actions + 3."""
    prices: Prices | None = None
    safety_prompt: Literal["attribution-openai/1"] = "attribution-openai/1"
    """The version tag of the safety rules this engine carries; a lock records it."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """The SDK's retries of 429 (rate limit) and 5xx answers."""
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """Per model request."""
    action_timeout_s: float = Field(default=5.0, gt=0, allow_inf_nan=False)
    """Per browser action (click, goto...): a control that never answers is an outcome."""

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return value.rstrip("/")

    @classmethod
    def parse(cls, settings: dict[str, Any]) -> OpenAIEngineSettings:
        """Validate ``settings``; a bad dict raises ``ValueError`` naming every bad key."""
        try:
            return cls.model_validate(settings)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ValueError(f"openai engine settings: {problems}") from None

    def turns_for(self, actions_per_user: int) -> int:
        """Model calls allowed per user in the tool loop."""
        return min(self.max_turns, actions_per_user + EXTRA_TURNS)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.prices is None:
            return None
        value = self.prices.cost(input_tokens, output_tokens)
        return value if math.isfinite(value) else None
