"""The double's webmcp-vs-pdf replies: the study's meta-analysis answered from tool results
(or, without tools, estimated by hand from an attached table)."""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


_META_PROMPT = re.compile(
    r"random-effects meta-analysis using REML.*?excluding record (?P<record>[\w-]+)\."
    r".*?Egger's regression test.*?passed if p >= (?P<pass_at>\d*\.?\d+), "
    r"failed if p < (?P<fail_below>\d*\.?\d+).*?Required shape:\s*(?P<shape>\{[^\n]*\})",
    re.S,
)
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_Z95 = 1.959964


def _calls_and_results(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any, str | None]]:
    """(function name, parsed arguments, tool result text or None) per call the request holds."""
    results = {
        str(m.get("tool_call_id")): _text(m.get("content"))
        for m in messages
        if m.get("role") == "tool"
    }
    out: list[tuple[str, Any, str | None]] = []
    for m in messages:
        for c in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = None
            out.append((str(fn.get("name")), args, results.get(str(c.get("id")))))
    return out


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
        rows = _table(_request_text(messages))
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


def _request_text(messages: list[Mapping[str, Any]]) -> str:
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


def _file_bytes(file: Mapping[str, Any]) -> bytes | None:
    data = str(file.get("file_data") or "")
    try:
        return base64.b64decode(data.partition("base64,")[2] or data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _file_text(file: Mapping[str, Any]) -> str:
    data = _file_bytes(file)
    if data is None:
        return ""
    if data.startswith(b"%PDF-"):
        from pypdf import PdfReader

        try:
            return "\n".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(data)).pages)
        except Exception:  # a PDF the double cannot read is just unreadable input
            return ""
    return data.decode("utf-8", errors="replace")


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
