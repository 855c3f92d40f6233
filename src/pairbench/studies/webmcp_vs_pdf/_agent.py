"""``webmcp-vs-pdf-scripted``: the study's offline agent, one honest path per condition.

- **webmcp arm** (the arm has tools): connects through ``ctx.open_tools()``, so each call
  goes through headless Chromium to the page's WebMCP tools; it finds the page that lists
  ``fit_random_effects``, calls ``get_dataset``, ``fit_random_effects`` (all records, then
  ``exclude: ["s04"]``) and ``egger_test`` (classic), and builds the answer from the
  results it received.
- **pdf arm** (the arm has attachments): reads the attached PDF with pypdf, parses the data
  table out of its text, and computes with the study's engine.

Either way it applies the prompt's registered rule itself and answers with one JSON object
in the protocol's shape. No model: tokens and cost are ``missing``, turns are measured.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pairbench.agents._protocol import AgentContext, AgentOutput, ToolSession
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric
from pairbench.studies.webmcp_vs_pdf._engine import egger_test, fit_random_effects
from pairbench.studies.webmcp_vs_pdf._reference import EXCLUDED_RECORD, rule_outcome

_NO_MODEL = "the scripted study agent has no model, so nothing was measured"
_RECORD = re.compile(r"^s\d{2}$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_SUMMARY = ("k", "estimate", "ci_lower", "ci_upper", "p")


class ToolPathError(RuntimeError):
    """A tool the answer needs failed or returned something unusable."""


def answer_json(overall: dict[str, Any], without: dict[str, Any], egger_p: float) -> str:
    """The protocol's required shape, from two fits (dicts with k..p) and Egger's p."""
    return json.dumps(
        {
            "overall": {k: overall[k] for k in _SUMMARY},
            "exclude_s04": {**{k: without[k] for k in _SUMMARY}, "excluded": [EXCLUDED_RECORD]},
            "bias": {"egger_p": egger_p, "rule_outcome": rule_outcome(egger_p)},
        }
    )


def table_from_pdf_text(text: str) -> list[tuple[str, float, float]]:
    """(record, yi, vi) for every data row in the PDF's extracted text.

    The table comes out one cell per line: a record id (``s01``), then author, year, weeks,
    setting, tester, n1i, n2i, yi and vi.
    """
    lines = [line.strip() for line in text.splitlines()]
    rows: list[tuple[str, float, float]] = []
    for i, line in enumerate(lines):
        if _RECORD.match(line) and i + 9 < len(lines):
            yi, vi = lines[i + 8], lines[i + 9]
            if _NUMBER.match(yi) and _NUMBER.match(vi):
                rows.append((line, float(yi), float(vi)))
    return rows


def _read_pdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


class NoSettings(AdapterSettings):
    """This agent takes no settings: any key is a typo."""


class WebMcpVsPdfScriptedAgent:
    """Registered as ``webmcp-vs-pdf-scripted``. No settings."""

    receives = frozenset({"webmcp", "attachments"})
    Settings = NoSettings

    uses_workdir = False
    """In-process: no private work folder, HOME or TMPDIR needed (see ``Agent``)."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = NoSettings.parse(settings)

    async def run(self, ctx: AgentContext) -> AgentOutput:
        ctx.transcript.emit("agent_start", agent="webmcp-vs-pdf-scripted", arm=ctx.arm)
        if ctx.has_tools and ctx.open_tools is not None:
            async with ctx.open_tools() as tools:
                answer, calls = await self._webmcp(tools, ctx)
        elif ctx.attachments:
            answer, calls = self._pdf(ctx.attachments, ctx), 0
        else:
            return AgentOutput(
                final_answer=None,
                error="this arm gives neither tools nor attachments: nothing to work from",
            )
        ctx.transcript.emit("final", text=answer)
        return AgentOutput(
            final_answer=answer,
            turns=Metric.measured(calls + 1, "scripted study agent steps"),
            input_tokens=Metric.missing(_NO_MODEL),
            output_tokens=Metric.missing(_NO_MODEL),
            cost_usd=Metric.missing(_NO_MODEL),
        )

    async def _webmcp(self, tools: ToolSession, ctx: AgentContext) -> tuple[str, int]:
        page = next(
            (
                name
                for name, listed in tools.tools.items()
                if any(getattr(t, "name", None) == "fit_random_effects" for t in listed)
            ),
            None,
        )
        if page is None:
            raise ToolPathError(f"no page lists fit_random_effects (surface: {list(tools.tools)})")
        ctx.transcript.emit("message", text=f"Using the WebMCP tools of page {page!r}.")

        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            outcome = await tools.call(page, tool, args)
            data = getattr(outcome, "structured", None)
            if getattr(outcome, "is_error", True) or not isinstance(data, dict):
                raise ToolPathError(f"{tool} failed: {getattr(outcome, 'text', outcome)}")
            return data

        dataset = await call("get_dataset", {})
        overall = await call("fit_random_effects", {})
        without = await call("fit_random_effects", {"exclude": [EXCLUDED_RECORD]})
        egger = await call("egger_test", {"variant": "classic"})
        if overall.get("k") != dataset.get("k"):
            raise ToolPathError(f"the fit used k={overall.get('k')} of {dataset.get('k')}")
        return answer_json(overall, without, float(egger["p"])), 4

    def _pdf(self, attachments: list[Path], ctx: AgentContext) -> str:
        pdf = next((p for p in attachments if p.suffix.lower() == ".pdf"), attachments[0])
        digest = hashlib.sha256(pdf.read_bytes()).hexdigest()
        rows = table_from_pdf_text(_read_pdf(pdf))
        ctx.transcript.emit(
            "message", text=f"Read {pdf.name} (sha256 {digest}): {len(rows)} data rows."
        )
        if not rows:
            raise ToolPathError(f"no data table found in {pdf.name}")
        labels = [r[0] for r in rows]
        yi, vi = [r[1] for r in rows], [r[2] for r in rows]
        overall = fit_random_effects(yi, vi, labels=labels)
        without = fit_random_effects(yi, vi, labels=labels, exclude=[EXCLUDED_RECORD])
        egger = egger_test(yi, vi, "classic")
        return answer_json(asdict(overall), asdict(without), egger.p)


__all__ = ["ToolPathError", "WebMcpVsPdfScriptedAgent", "answer_json", "table_from_pdf_text"]
