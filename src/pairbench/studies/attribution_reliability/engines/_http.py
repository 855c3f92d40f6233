"""The ``http`` adapter: an engine served over HTTP, synchronous or with a job to poll."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import httpx

from pairbench.agents._protocol import InfraFailure, RunSignals
from pairbench.studies.attribution_reliability.engines._env import resolve_templates
from pairbench.studies.attribution_reliability.engines._models import EngineRequest
from pairbench.studies.attribution_reliability.engines._outcome import (
    RAW_STDOUT_CAP,
    EngineOutcome,
    answered,
    elapsed_ms,
    outcome_of,
)
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec


class HttpEngine:
    """POSTs the request to ``<url>/scan`` or ``<url>/judge``.

    ``200`` carries the report; ``202`` with a ``Location`` is a job, polled with GET until
    it answers ``200``, within the call's deadline. A refusal (no connection, a status
    other than 200/202 such as 401, 403, 429 or a 5xx) before this engine's first report in
    the run means it was never set up: ``InfraFailure``. Once it has answered, a refusal is
    its runtime failure (``refused``).

    **Usage**::

        spec = EngineSpec.parse({"engine": "http", "url": "http://127.0.0.1:8900"})
        outcome = await HttpEngine(spec).run(request, env=os.environ, workdir=w,
                                             timeout_s=600, signals=run_signals)
    """

    adapter: ClassVar[str] = "http"
    poll_s: ClassVar[float] = 0.1
    """Between two polls of a job: small, as a local engine's job may end any moment."""

    def __init__(self, spec: EngineSpec) -> None:
        assert spec.url, "EngineSpec.parse checks an http engine's url"
        self.spec = spec
        self.url = spec.url.rstrip("/")

    async def run(
        self,
        request: EngineRequest,
        *,
        env: Mapping[str, str],
        workdir: Path,
        timeout_s: float,
        signals: RunSignals,
    ) -> EngineOutcome:
        del workdir  # nothing runs here
        headers = resolve_templates(self.spec.headers, env, "headers")
        started = time.monotonic()
        who = f"the http engine at {self.url}"
        key = f"http {self.url}"
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s), follow_redirects=False, trust_env=False
        ) as client:
            try:
                async with asyncio.timeout(timeout_s):
                    response = await self._exchange(client, request, headers)
            except (TimeoutError, httpx.TimeoutException):
                return EngineOutcome(
                    failure="timeout",
                    message=f"{who} did not answer within {timeout_s:g} s",
                    duration_ms=elapsed_ms(started),
                )
            except httpx.HTTPError as exc:
                return _refused(
                    f"{who} refused: {type(exc).__name__}: {exc}", key, signals, started, ""
                )
        if response.status_code == 202:
            return EngineOutcome(
                failure="invalid_report",
                message=f"{who} answered 202 without a Location header to poll",
                duration_ms=elapsed_ms(started),
            )
        if response.status_code != 200:
            return _refused(
                f"{who} refused: HTTP {response.status_code} from {response.request.method} "
                f"{response.url}",
                key,
                signals,
                started,
                response.text,
            )
        outcome = outcome_of(response.text, duration_ms=elapsed_ms(started), who=who)
        if outcome.report is not None:
            answered(signals).add(key)
        return outcome

    async def _exchange(
        self, client: httpx.AsyncClient, request: EngineRequest, headers: dict[str, str]
    ) -> httpx.Response:
        response = await client.post(
            f"{self.url}/{request.mode}", json=request.wire(), headers=headers
        )
        while response.status_code == 202 and "location" in response.headers:
            await asyncio.sleep(self.poll_s)
            job = response.url.join(response.headers["location"])
            response = await client.get(job, headers=headers)
        return response


def _refused(
    message: str, key: str, signals: RunSignals, started: float, body: str
) -> EngineOutcome:
    if key not in answered(signals):
        raise InfraFailure(f"{message} (before its first report in this run)")
    return EngineOutcome(
        failure="refused",
        message=message,
        raw_stdout=body[:RAW_STDOUT_CAP],
        duration_ms=elapsed_ms(started),
    )
