"""The frozen agent-facing page, ``study/page/index.html``, built from the study's inputs.

The page is a committed static file (its bytes are in the study's lock and identical in
every trial); this module is how it was written, and a test checks that a rebuild gives the
committed bytes. Rebuild after changing the dataset, the methods or the PDF::

    cd src/pairbench/studies/webmcp_vs_pdf
    python -m pairbench.studies.webmcp_vs_pdf._page study/page/index.html

The page shows the dataset table, the methods, the PDF's SHA-256 and a "Living Evidence"
section that says "No runs recorded."; its script registers three read-only WebMCP tools
with ``document.modelContext.registerTool`` that compute through this site's JSON endpoints
(the Python engine), so the page and the reference answers cannot disagree.
"""

from __future__ import annotations

import re
import sys
from html import escape
from pathlib import Path

from pairbench.studies.webmcp_vs_pdf._dataset import (
    BASELINE_VERSION,
    METHODS_PATH,
    PDF_SHA256,
    STUDY_ROOT,
    load_dataset,
)

PAGE_PATH = STUDY_ROOT / "page" / "index.html"
NO_RUNS = "No runs recorded."
EVIDENCE_START = "<!-- living-evidence:start -->"
EVIDENCE_END = "<!-- living-evidence:end -->"
PEOPLE_SLOT = "<!-- people-only -->"
"""Where the people's page adds its local scoring fields (nothing there for agents)."""
TOOL_NAMES = ("get_dataset", "fit_random_effects", "egger_test")

_COLUMNS = ("record", "study", "author", "year", "weeks", "setting", "tester", "n1i", "n2i")

_SCRIPT = """<script type="module">
const status = document.getElementById("webmcp-status");
async function api(endpoint, input) {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: {"content-type": "application/json"},
    body: JSON.stringify(input ?? {}),
  });
  return {ok: response.ok, data: await response.json()};
}
function toolResult({ok, data}) {
  if (!ok) {
    return {content: [{type: "text", text: "error: " + (data.error ?? "request failed")}],
            isError: true};
  }
  return {content: [{type: "text", text: JSON.stringify(data)}], structuredContent: data};
}
const TOOLS = [
  {
    name: "get_dataset",
    title: "Get the dataset",
    description: "The 19 effect-size records of dat.raudenbush1985 (record ids s01..s19, " +
      "yi = standardized mean difference, vi = its sampling variance), as on this page.",
    inputSchema: {type: "object", properties: {}, additionalProperties: false},
    endpoint: "/api/dataset",
  },
  {
    name: "fit_random_effects",
    title: "Fit the REML random-effects model",
    description: "Random-effects meta-analysis of the dataset by REML (Wald 95% CI and p, " +
      "as metafor's rma(yi, vi, method='REML')). Returns k, estimate, se, z, p, ci_lower, " +
      "ci_upper, tau2, I2, Q, Q_p and the excluded record ids. Optionally leave records out.",
    inputSchema: {
      type: "object",
      properties: {
        exclude: {
          type: "array",
          items: {type: "string", pattern: "^s[0-9]{2}$"},
          description: "Record ids to leave out before fitting, e.g. [\\"s04\\"].",
        },
      },
      additionalProperties: false,
    },
    endpoint: "/api/fit_random_effects",
  },
  {
    name: "egger_test",
    title: "Egger's regression test",
    description: "Egger's regression test for funnel-plot asymmetry on the full dataset. " +
      "variant 'classic' (default, the registered one): weighted regression of yi on " +
      "sqrt(vi), t test; 'rma': metafor's mixed-effects variant, z test. Returns the " +
      "statistic, p, df and the method.",
    inputSchema: {
      type: "object",
      properties: {variant: {type: "string", enum: ["classic", "rma"], default: "classic"}},
      additionalProperties: false,
    },
    endpoint: "/api/egger_test",
  },
];
if (!document.modelContext) {
  status.textContent = "This browser does not expose document.modelContext (WebMCP): " +
    "no tools are registered.";
} else {
  const controller = new AbortController();
  try {
    for (const {endpoint, ...tool} of TOOLS) {
      await document.modelContext.registerTool({
        ...tool,
        annotations: {readOnlyHint: true},
        execute: async (input) => toolResult(await api(endpoint, input)),
      }, {signal: controller.signal});
    }
    status.textContent = "WebMCP tools registered: " + TOOLS.map((t) => t.name).join(", ") + ".";
  } catch (error) {
    status.textContent = "WebMCP tool registration failed: " + error;
  }
}
</script>"""


def _inline(text: str) -> str:
    parts = re.split(r"`([^`]*)`", text)
    return "".join(
        f"<code>{escape(part)}</code>" if i % 2 else escape(part) for i, part in enumerate(parts)
    )


def methods_html(markdown: str) -> str:
    """The methods text (headings, paragraphs, bullet lists) as HTML; the ``# Methods``
    title becomes the section heading. The PDF's own introduction ("This document is the
    frozen evidence artifact ... no executable tools") is left out: it describes the PDF."""
    out: list[str] = []
    blocks = [b.strip() for b in markdown.strip().split("\n\n") if b.strip()]
    blocks = [b for b in blocks if not b.startswith("This document is the frozen evidence")]
    for block in blocks:
        lines = block.splitlines()
        if block.startswith("## "):
            out.append(f"<h3>{_inline(block[3:].strip())}</h3>")
        elif block.startswith("# "):
            out.append(f"<h2>{_inline(block[2:].strip())}</h2>")
        elif block.startswith("- "):
            items: list[str] = []
            for line in lines:
                if line.startswith("- "):
                    items.append(line[2:].strip())
                else:
                    items[-1] += " " + line.strip()
            out.append("<ul>\n" + "\n".join(f"<li>{_inline(i)}</li>" for i in items) + "\n</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    return "\n".join(out)


def _table() -> str:
    head = "".join(f"<th>{c}</th>" for c in (*_COLUMNS, "yi", "vi"))
    rows = []
    for r in load_dataset():
        cells = [getattr(r, c) for c in _COLUMNS] + [r.yi_text, r.vi_text]
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return (
        '<table id="dataset">\n<thead><tr>' + head + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows) + "\n</tbody>\n</table>"
    )  # fmt: skip


def build_page() -> str:
    """The agent-facing page's text (UTF-8, LF line ends)."""
    k = len(load_dataset())
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Teacher expectancy meta-analysis: WebMCP evidence page</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; font-size: 0.9rem; }}
th, td {{ border: 1px solid #bbb; padding: 0.2rem 0.5rem; text-align: right; }}
code {{ font-size: 0.9em; }}
textarea {{ width: 100%; min-height: 8rem; font-family: monospace; }}
.ok {{ color: #060; }} .wrong {{ color: #a00; }}
</style>
</head>
<body>
<main>
<h1>Teacher expectancy meta-analysis: WebMCP evidence page</h1>
<p>Baseline version {escape(BASELINE_VERSION)}. Dataset: <code>metadat::dat.raudenbush1985</code>,
18 experiments represented by {k} effect-size records. This page carries the same data table
and methods as the frozen PDF, and exposes the analysis as WebMCP tools.</p>
<p>Frozen PDF: <a href="/benchmark-baseline.pdf">benchmark-baseline.pdf</a>,
SHA-256 <code id="pdf-sha256">{PDF_SHA256}</code>.</p>
<section id="tools">
<h2>WebMCP tools</h2>
<p>Registered with <code>document.modelContext.registerTool</code>, all read-only:
<code>get_dataset</code>, <code>fit_random_effects</code> (optional <code>exclude</code>: record
ids) and <code>egger_test</code> (<code>variant</code>, default <code>classic</code>).</p>
<p id="webmcp-status">The tools register when the page's script runs.</p>
</section>
<section id="data">
<h2>Data</h2>
{_table()}
</section>
<section id="methods">
{methods_html(METHODS_PATH.read_text(encoding="utf-8"))}
</section>
<section id="living-evidence">
<h2>Living Evidence</h2>
{EVIDENCE_START}
<p id="living-evidence-status">{NO_RUNS}</p>
{EVIDENCE_END}
</section>
{PEOPLE_SLOT}
</main>
{_SCRIPT}
</body>
</html>
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pairbench.studies.webmcp_vs_pdf._page OUT.html", file=sys.stderr)
        return 2
    Path(args[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(args[0]).write_bytes(build_page().encode("utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
