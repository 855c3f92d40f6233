"""Tool-call arguments: the JSON text a model sent, turned into an object."""

from __future__ import annotations

import json


class ArgumentError(Exception):
    """The arguments are not a JSON object; the message goes back to the model."""


def parse_arguments(raw: str) -> dict[str, object]:
    """The JSON object in ``raw`` (empty text means no arguments)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArgumentError(f"arguments are not valid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ArgumentError(f"arguments must be a JSON object, not {type(value).__name__}")
    return value
