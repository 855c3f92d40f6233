"""The base of every stored or hashed record: frozen, and strict about unknown fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that rejects unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
