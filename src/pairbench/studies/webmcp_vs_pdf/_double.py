"""The study's replies for the test doubles (``Study.double``): its meta-analysis prompt
answered from tool results (or, without tools, estimated by hand from an attached table)."""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from pairbench.testing._messages import calls_and_results as _calls_and_results
from pairbench.testing._messages import file_text as _file_text
from pairbench.testing._messages import messages as _messages
from pairbench.testing._messages import prompt as _prompt
from pairbench.testing._messages import text as _text
from pairbench.testing._messages import tool_names as _tool_names

META_PROMPT = re.compile(
    r"random-effects meta-analysis using REML.*?excluding record (?P<record>[\w-]+)\."
    r".*?Egger's regression test.*?passed if p >= (?P<pass_at>\d*\.?\d+), "
    r"failed if p < (?P<fail_below>\d*\.?\d+).*?Required shape:\s*(?P<shape>\{[^\n]*\})",
    re.S,
)
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_Z95 = 1.959964


def _rule(p: Any, pass_at: float, fail_below: float) -> str | None:
    if not isinstance(p, int | float) or isinstance(p, bool) or not math.isfinite(p):
        return None
    return "passed" if p >= pass_at else "failed" if p < fail_below else "inconclusive"


def _fill(meta: re.Match[str], sources: list[Mapping[str, Any] | None]) -> str:
    """The prompt's required shape, its sections filled in order from ``sources``: the full
    fit, the refit, Egger's test (``None``: unknown, so null)."""
    shape = json.loads(meta["shape"])
    bias = sources[-1] or {}
    out: dict[str, Any] = {}
    for (section, fields), source in zip(shape.items(), sources, strict=False):
        filled: dict[str, Any] = {}
        for key in fields:
            if key == "excluded":
                filled[key] = [meta["record"]]
            elif key == "egger_p":
                filled[key] = bias.get("p")
            elif key == "rule_outcome":
                rule = float(meta["pass_at"]), float(meta["fail_below"])
                filled[key] = _rule(bias.get("p"), *rule)
            else:
                filled[key] = (source or {}).get(key)
        out[section] = filled
    return json.dumps(out)


def _meta_analysis(
    meta: re.Match[str], messages: list[Mapping[str, Any]], offered: list[str]
) -> tuple[str | None, list[dict[str, Any]]]:
    fit = next((n for n in offered if n.endswith("fit_random_effects")), None)
    egger = next((n for n in offered if n.endswith("egger_test")), None)
    if fit is None or egger is None:
        rows = _table(_requesttext(messages))
        if len(rows) < 3:
            return _fill(meta, [None, None, None]), []
        kept = [r for r in rows if r[0] != meta["record"]]
        return _fill(meta, [_by_hand(rows), _by_hand(kept), _egger_by_hand(rows)]), []
    plan: list[tuple[str, dict[str, Any]]] = [
        (fit, {}),
        (fit, {"exclude": [meta["record"]]}),
        (egger, {"variant": "classic"}),
    ]
    made = _calls_and_results(messages)
    found: list[str | None] = []
    for name, args in plan:
        match = next((i for i, (n, a, _) in enumerate(made) if (n, a) == (name, args)), None)
        found.append(None if match is None else made.pop(match)[2])
    if any(result is None for result in found):
        calls = [
            {"id": f"call_{len(messages)}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, ((name, args), result) in enumerate(zip(plan, found, strict=True))
            if result is None
        ]  # fmt: skip
        return None, calls
    parsed: list[Mapping[str, Any] | None] = []
    for (name, _), result in zip(plan, found, strict=True):
        try:
            data = json.loads(result or "")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return f"The tool {name} did not return a result I can use: {(result or '')[:200]}", []
        parsed.append(data)
    return _fill(meta, parsed), []


def _requesttext(messages: list[Mapping[str, Any]]) -> str:
    """The text of every user message: text parts, and file parts read as a model would."""
    texts: list[str] = []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        for part in content if isinstance(content, list) else [{"text": content}]:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "file":
                texts.append(_file_text(part.get("file") or {}))
            else:
                texts.append(str(part.get("text") or ""))
    return "\n".join(texts)


def _table(text: str) -> list[tuple[str, float, float]]:
    """(record, yi, vi) rows of a one-cell-per-line table headed ``record ... yi vi``."""
    lines = [line.strip() for line in text.splitlines()]
    if "record" not in lines:
        return []
    start = lines.index("record")
    header: list[str] = []
    for line in lines[start:]:
        if header and re.fullmatch(r"[A-Za-z]+\d+", line):
            break
        header.append(line)
    if "yi" not in header or "vi" not in header:
        return []
    yi, vi, width = header.index("yi"), header.index("vi"), len(header)
    rows: list[tuple[str, float, float]] = []
    i = start + width
    while i + width <= len(lines) and re.fullmatch(r"[A-Za-z]+\d+", lines[i]):
        cells = lines[i : i + width]
        if not (_NUM.match(cells[yi]) and _NUM.match(cells[vi])):
            break
        rows.append((cells[0], float(cells[yi]), float(cells[vi])))
        i += width
    return rows


def _by_hand(rows: list[tuple[str, float, float]]) -> dict[str, Any]:
    """A DerSimonian-Laird fit (the double's shortcut; the protocol asks for REML)."""
    ys, vs = [r[1] for r in rows], [r[2] for r in rows]
    w = [1 / v for v in vs]
    mu_fixed = sum(wi * y for wi, y in zip(w, ys, strict=True)) / sum(w)
    q = sum(wi * (y - mu_fixed) ** 2 for wi, y in zip(w, ys, strict=True))
    tau2 = max(0.0, (q - (len(ys) - 1)) / (sum(w) - sum(wi * wi for wi in w) / sum(w)))
    ws = [1 / (v + tau2) for v in vs]
    mu = sum(wi * y for wi, y in zip(ws, ys, strict=True)) / sum(ws)
    se = 1 / math.sqrt(sum(ws))
    return {"k": len(ys), "estimate": mu, "ci_lower": mu - _Z95 * se,
            "ci_upper": mu + _Z95 * se, "p": math.erfc(abs(mu / se) / math.sqrt(2))}  # fmt: skip


def _egger_by_hand(rows: list[tuple[str, float, float]]) -> dict[str, Any]:
    """Egger's intercept with a normal (not t) reference distribution: the double's shortcut."""
    xs = [1 / math.sqrt(r[2]) for r in rows]
    ts = [r[1] / math.sqrt(r[2]) for r in rows]
    k, xbar, tbar = len(xs), sum(xs) / len(xs), sum(ts) / len(ts)
    sxx = sum((x - xbar) ** 2 for x in xs)
    slope = sum((x - xbar) * (t - tbar) for x, t in zip(xs, ts, strict=True)) / sxx
    intercept = tbar - slope * xbar
    sse = sum((t - intercept - slope * x) ** 2 for x, t in zip(xs, ts, strict=True))
    se = math.sqrt(sse / (k - 2) * (1 / k + xbar**2 / sxx))
    return {"p": math.erfc(abs(intercept / se) / math.sqrt(2))}


# -- usage -----------------------------------------------------------------------------------


# -- Claude Code reads the PDF with its built-in ``Read`` tool -----------------------------
# For the meta-analysis prompt with no page tools (``fit_random_effects`` / ``egger_test``)
# but a ``Read`` tool offered, the reply first calls ``Read`` ``{"file_path": <absolute
# path>}`` for the ``.pdf`` the prompt names: a relative name is joined to the primary working
# directory Claude Code's system prompt states ("Primary working directory: /abs/path").
# Once the conversation holds that call's result, the meta brain answers from it: Claude
# Code 2.1.197 sends a PDF's Read as a ``tool_result`` with the text "PDF file read: <path>
# (16.6KB)" followed, in the same user message, by a base64 ``document`` block, which the
# Anthropic double's conversion makes a file part.
READ = "Read"
_PDF_NAME = re.compile(r"[\w./-]+\.pdf\b", re.I)
_CWD = re.compile(r"(?:Primary working directory|Working directory):\s*(/[^\n]*?)\s*$", re.M)


def working_dir(system: str) -> str | None:
    """The working directory a Claude Code system prompt states.

    >>> working_dir("# Environment\\n - Primary working directory: /tmp/x/cwd\\n - Platform")
    '/tmp/x/cwd'
    """
    found = _CWD.search(system)
    return None if found is None else found.group(1)


def _read_call(chat: Mapping[str, Any]) -> dict[str, Any] | None:
    messages = [m for m in chat.get("messages") or [] if isinstance(m, dict)]
    prompt = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if META_PROMPT.search(prompt) is None:
        return None
    offered = [str(t.get("function", {}).get("name", "")) for t in chat.get("tools") or []]
    if READ not in offered or any(
        n.endswith(("fit_random_effects", "egger_test")) for n in offered
    ):
        return None
    reads = {
        str(c.get("id"))
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
        if (c.get("function") or {}).get("name") == READ
    }
    if any(m.get("role") == "tool" and str(m.get("tool_call_id")) in reads for m in messages):
        return None  # the PDF was read: decide answers from it
    pdf = next((m.group(0) for m in [_PDF_NAME.search(prompt)] if m is not None), None)
    if pdf is None:
        return None
    if not pdf.startswith("/"):
        system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        cwd = working_dir(system)
        if cwd is None:
            return None
        pdf = posixpath.normpath(posixpath.join(cwd, pdf))
    call = {"name": READ, "arguments": json.dumps({"file_path": pdf})}
    return {"id": f"call_{len(messages)}", "type": "function", "function": call}


def meta_reply(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]] | None:
    """``Study.double``: the meta-analysis agent's reply (Claude Code's ``Read`` of the PDF
    first), or ``None`` for another study's request."""
    call = _read_call(body)
    if call is not None:
        return None, [call]
    meta = META_PROMPT.search(_prompt(body))
    if meta is None:
        return None
    return _meta_analysis(meta, _messages(body), _tool_names(body))
