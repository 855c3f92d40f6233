"""The engine contract's JSON Schemas, generated from the wire models and published as files.

``engines/schema/request-<n>.json`` and ``report-<n>.json``, ``<n>`` the version in
``REQUEST_SCHEMA`` / ``REPORT_SCHEMA``: a new version is a new file beside the old, which
stays. ``make docs`` runs ``python -m
pairbench.studies.attribution_reliability.engines._schema_files``; a test checks the
committed files equal what this writes, so the files never drift from the models.

**Usage**::

    for path, text in schema_files().items():
        path.write_text(text)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pairbench.studies.attribution_reliability.engines._models import (
    REPORT_SCHEMA,
    REQUEST_SCHEMA,
    EngineReport,
    EngineRequest,
)

SCHEMA_DIR = Path(__file__).with_name("schema")
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _version(name: str) -> str:
    """``pairbench.attribution.report/1`` -> ``1``."""
    return name.rsplit("/", 1)[1]


def json_schema(model: type[BaseModel], name: str) -> dict[str, Any]:
    """``model``'s JSON Schema as an engine reads or writes it (``schema`` by its wire
    name; validation mode, so a field with a default may be left out).

    >>> json_schema(EngineReport, REPORT_SCHEMA)["$id"]
    'urn:pairbench:attribution:report:1'
    """
    body = model.model_json_schema(by_alias=True, mode="validation")
    kind = name.split("/")[0].rsplit(".", 1)[1]
    return {
        "$schema": DIALECT,
        "$id": f"urn:pairbench:attribution:{kind}:{_version(name)}",
        **body,
    }


def schema_files() -> dict[Path, str]:
    """Each published file and its text (sorted keys, two-space indent, final newline)."""
    out: dict[Path, str] = {}
    for model, name in ((EngineRequest, REQUEST_SCHEMA), (EngineReport, REPORT_SCHEMA)):
        kind = name.split("/")[0].rsplit(".", 1)[1]
        text = json.dumps(json_schema(model, name), indent=2, sort_keys=True, ensure_ascii=False)
        out[SCHEMA_DIR / f"{kind}-{_version(name)}.json"] = text + "\n"
    return out


def published(kind: str, version: int = 1) -> dict[str, Any]:
    """The published schema ``kind`` (``request`` or ``report``) of ``version``, as a dict."""
    loaded: dict[str, Any] = json.loads(
        (SCHEMA_DIR / f"{kind}-{version}.json").read_text(encoding="utf-8")
    )
    return loaded


if __name__ == "__main__":
    SCHEMA_DIR.mkdir(exist_ok=True)
    for target, text in schema_files().items():
        target.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {target}\n")
