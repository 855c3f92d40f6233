"""Safe ids (the names of arms, tasks and hypotheses, which become path components) and
environment variable names."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def _safe_id(value: str) -> str:
    # Ids become path components under runs/<run>/results/<arm>/<task>/, so they must
    # never contain a separator, start with a dot, or differ only by case on macOS.
    if not _SAFE_ID.match(value) or value in {".", ".."} or ".." in value:
        raise ValueError(
            f"{value!r} is not a safe id: use 1-64 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return value


SafeId = Annotated[str, AfterValidator(_safe_id)]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise ValueError(
            f"{value!r} is not an environment variable name: use letters, digits and '_', "
            "not starting with a digit"
        )
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
