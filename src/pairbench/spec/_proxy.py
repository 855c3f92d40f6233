"""``proxy:`` in the experiment: the model server a runtime under test talks to, fronted by
pairbench's recording proxy (``pairbench.proxy``) for the run."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from pairbench._model import Frozen
from pairbench.spec._ids import EnvName


class ModelProxy(Frozen):
    """The model server the runtime under test talks to, through pairbench's recording proxy.

    pairbench starts a loopback proxy in front of ``upstream`` for the run, holds a lease on
    the server (a second run on it is refused), and gives the agent ``env`` = the proxy's URL
    plus ``path``. Every request body the runtime sent is kept (``proxy/exchanges.jsonl``);
    each attempt's seeding is proven from those bodies, and its sampling parameters are
    reported as ``sent``, ``mixed`` or ``server_default``::

        proxy: {upstream: "http://127.0.0.1:8080", env: MINIRT_BASE_URL,
                require: {temperature: 1.0}}
    """

    upstream: str
    """The model server (loopback only), e.g. ``http://127.0.0.1:8080``."""
    env: EnvName
    """The variable the runtime reads its model base URL from."""
    path: str = "/v1"
    """Appended to the proxy's URL in ``env`` (an OpenAI-compatible base URL ends in /v1)."""
    require: dict[str, Any] = Field(default_factory=dict)
    """Sampling parameters every request must send with these values (others are reported
    only), e.g. ``{temperature: 1.0}``: a request without them is a named violation."""

    @field_validator("upstream")
    @classmethod
    def _loopback(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(
                f"{value!r} is not a loopback http URL: the proxy only fronts a model server on "
                "this machine (http://127.0.0.1:PORT)"
            )
        return value
