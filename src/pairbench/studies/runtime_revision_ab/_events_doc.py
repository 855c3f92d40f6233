"""``EVENTS.md``: the runtime event stream's reference, generated from ``DispatchEvent``.

``make docs`` runs ``python -m pairbench.studies.runtime_revision_ab._events_doc``; a test
checks the committed file equals what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pairbench._schema_doc import model_reference
from pairbench.studies.runtime_revision_ab._dispatch_events import DispatchEvent

TARGET = Path(__file__).with_name("EVENTS.md")

INTRO = """Generated from `pairbench.studies.runtime_revision_ab._dispatch_events.DispatchEvent`
by `make docs`; do not edit by hand. The contract around it is in this study's README
("Bring your own runtime").

A runtime that is given `PAIRBENCH_EVENTS` (a file path) may append one JSON object per
line to it: what only the runtime knows (normalized operations, authorization decisions,
execution receipts, observations, its completion claim, usage as it saw it). Every line has
`schema` (`pairbench.runtime-events/1`), a rising `seq` and a `kind`; the other fields
belong to the kinds below. Check a file with
`pairbench study runtime-revision-ab check-events FILE`.

| kind | when | fields |
|---|---|---|
| `request` | before each model request | `round`, `messages` |
| `usage` | after each model response | `round`, `usage` (the response's usage object) |
| `provider_error` | a model request failed | `round`, `error` |
| `final_text` | the model answered without tool calls | `round`, `chars` |
| `proposed` | for each tool call in a response | `call_id`, `name`, `raw_arguments` |
| `normalized` | the call became an operation, or not | `call_id`, `ok`, `operation`, `error` |
| `authorization` | the runtime's policy decided | `call_id`, `decision`, `reason` |
| `executed` | the operation ran | `call_id`, `by`, `receipt` |
| `observed` | the result went back to the model | `call_id`, `ok`, `error`, `chars`, `truncated` |
| `claim` | the runtime's completion claim | `status` (`done`/`incomplete`), `summary`, `changes` |
| `rejected` | the task was refused before any model request | `reason`, `paths` |

Absent, every row only these events fill says "missing: the runtime reports no events",
never 0. Present, the figures the recording proxy also sees (usage, proposed tool calls)
are compared with it; a disagreement fails the gate "the runtime's own report agrees with
the proxy", and the proxy's figure stands. The earlier name `pairbench.dispatch/1` is read
the same."""


def events_reference() -> str:
    return model_reference(
        DispatchEvent, "Runtime event stream — `pairbench.runtime-events/1`", INTRO
    )


if __name__ == "__main__":
    TARGET.write_text(events_reference(), encoding="utf-8")
    sys.stdout.write(f"wrote {TARGET}\n")
