"""The canonical form of an experiment, and the hash that identifies it.

Definition (stable: ``freeze`` and ``verify`` recompute it, so change it only with a
version bump of everything that stores it):

- ``canonical_json(x)``: ``x`` (a pydantic model is first dumped with
  ``model_dump(mode="json")``) serialised as JSON with keys sorted at every level, no
  whitespace (separators ``","`` and ``":"``), non-ASCII characters written as they are
  (``ensure_ascii=False``) and encoded as UTF-8. Floats are written as Python's
  ``repr`` (the shortest text that reads back as the same float, e.g. ``120.0``); NaN
  and infinities are refused, since JSON has no spelling for them.
- ``canonical_hash(experiment)``: the lowercase SHA-256 hex digest of
  ``canonical_json(experiment.model_dump(mode="json"))``.

The dump includes every default, so writing a default out in the YAML, or reordering
keys, leaves the hash unchanged; any change of a value changes it. The model holds only
paths relative to the experiment file, so the hash does not depend on where the
experiment lives. It covers the experiment file's meaning only: the contents of the
files it names (protocol, prompts, plans) are hashed separately by the lock.

Secrets: an ``agent.env`` value written ``${env:NAME}`` is hashed as that text, so the
hash (and the lock) never depends on the value the runner's ``NAME`` holds; changing the
key does not change the experiment. A literal value listed in ``secrets`` is hashed as any
value is (it is part of the protocol) but stored nowhere: run.json keeps its name and
SHA-256 (``store._redact.stored_secret``). ``secrets`` is left out of the canonical form
when empty, so experiments without it keep their hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from pairbench.spec._models import Experiment


def canonical_json(model_or_data: BaseModel | Any) -> bytes:
    """The canonical JSON bytes of a model or of plain JSON-able data.

    **Usage**:

        canonical_json({"b": 1, "a": [1.0, "é"]})  # b'{"a":[1.0,"é"],"b":1}'

    Raises ``ValueError`` for NaN or infinite floats.
    """
    data = (
        model_or_data.model_dump(mode="json")
        if isinstance(model_or_data, BaseModel)
        else model_or_data
    )
    text = json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")


def canonical_hash(experiment: Experiment) -> str:
    """SHA-256 hex digest of the experiment's canonical JSON (see the module docstring).

    **Usage**:

        canonical_hash(load_experiment("experiment.yaml").experiment)  # '3f1a...'
    """
    return hashlib.sha256(canonical_json(experiment.model_dump(mode="json"))).hexdigest()
