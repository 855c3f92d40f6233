"""The people's page: the frozen page with Living Evidence filled from a run store, plus
local scoring fields. Agents never see it (the trial site serves only the frozen page).

Everything from the store or pasted by a person is rendered as text: jinja2 autoescapes the
server-side HTML, and the scoring script writes results with ``textContent`` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment

from pairbench._errors import PairbenchError
from pairbench.analysis import wilson
from pairbench.store import SCORED_OUTCOMES, TrialResult, load_run
from pairbench.studies.webmcp_vs_pdf._dataset import STUDY_ROOT
from pairbench.studies.webmcp_vs_pdf._page import (
    EVIDENCE_END,
    EVIDENCE_START,
    NO_RUNS,
    PAGE_PATH,
    PEOPLE_SLOT,
)

STUDY_ID = "webmcp-vs-pdf"
CONDITIONS = ("pdf", "webmcp")
_ANSWER_EXCERPT = 300


@dataclass(frozen=True)
class ArmSummary:
    """One arm of one run: trials passed (13/13) out of the scored trials."""

    arm: str
    passed: int
    scored: int
    low: float | None
    high: float | None
    parse_failures: int
    not_scored: int
    """Trials without a score (``not_run``; infra attempts are kept apart by the run)."""

    @property
    def interval(self) -> str:
        """The 95% Wilson interval as text, ``n/a`` with no scored trial."""
        if self.low is None or self.high is None:
            return "n/a"
        return f"{self.low:.3f} to {self.high:.3f}"


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    status: str
    arms: list[ArmSummary]
    trials: list[TrialResult] = field(default_factory=list)


def _arm(arm: str, results: list[TrialResult]) -> ArmSummary:
    scored = [r for r in results if r.outcome in SCORED_OUTCOMES]
    passed = sum(r.outcome == "passed" for r in scored)
    interval = wilson(passed, len(scored)) if scored else None
    return ArmSummary(
        arm=arm,
        passed=passed,
        scored=len(scored),
        low=interval.low if interval else None,
        high=interval.high if interval else None,
        parse_failures=sum(r.outcome == "parse_failure" for r in scored),
        not_scored=len(results) - len(scored),
    )


def run_summaries(runs_dir: Path | None) -> list[RunSummary]:
    """Every run of this study under ``runs_dir`` (by run ID); unreadable folders skipped."""
    if runs_dir is None or not runs_dir.is_dir():
        return []
    out: list[RunSummary] = []
    for path in sorted(p for p in runs_dir.iterdir() if (p / "run.json").is_file()):
        try:
            run = load_run(path)
        except (OSError, ValueError, KeyError, PairbenchError):
            continue
        if run.info.experiment.id != STUDY_ID:
            continue
        arms = sorted({r.arm for r in run.results})
        out.append(
            RunSummary(
                run_id=run.info.run_id,
                status=run.info.status,
                arms=[_arm(a, [r for r in run.results if r.arm == a]) for a in arms],
                trials=sorted(run.results, key=lambda r: (r.trial, r.start_order)),
            )
        )
    return out


def protocol_limits(protocol: Path = STUDY_ROOT / "protocol.md") -> list[str]:
    """The protocol's stated limits: its single-run caveat and "What this cannot establish"."""
    text = protocol.read_text(encoding="utf-8")
    limits = ["A single run is descriptive and does not establish general model performance."]
    section = re.search(r"^## What this cannot establish\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if section:
        for item in re.split(r"^- ", section.group(1), flags=re.M)[1:]:
            limits.append(" ".join(item.split()))
    return limits


_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
_EVIDENCE = _ENV.from_string(
    """{% if not runs %}
<p id="living-evidence-status">{{ no_runs }}</p>
{% else %}
<p id="living-evidence-status">{{ runs|length }} run(s) recorded. Each run is shown on its own;
runs are never pooled. Passed means 13/13 fields; 95% Wilson intervals.</p>
{% for run in runs %}
<h3>Run <code>{{ run.run_id }}</code> ({{ run.status }})</h3>
<table class="evidence-arms">
<thead><tr><th>arm</th><th>passed k/n</th><th>95% Wilson</th><th>parse failures</th>
<th>not scored</th></tr></thead>
<tbody>
{% for arm in run.arms %}
<tr data-arm="{{ arm.arm }}"><td>{{ arm.arm }}</td>
<td class="kn">{{ arm.passed }}/{{ arm.scored }}</td>
<td>{{ arm.interval }}</td>
<td>{{ arm.parse_failures }}</td><td>{{ arm.not_scored }}</td></tr>
{% endfor %}
</tbody>
</table>
<details><summary>Trials</summary>
<table class="evidence-trials">
<thead><tr><th>trial</th><th>arm</th><th>outcome</th><th>reason</th>
<th>answer (excerpt)</th></tr></thead>
<tbody>
{% for t in run.trials %}
<tr><td>{{ t.trial }}</td><td>{{ t.arm }}</td><td>{{ t.outcome }}</td><td>{{ t.reason }}</td>
<td><pre>{{ (t.final_answer or '')[:excerpt] }}</pre></td></tr>
{% endfor %}
</tbody>
</table>
</details>
{% endfor %}
{% endif %}
<h3>Limits</h3>
<ul class="limits">
{% for limit in limits %}
<li>{{ limit }}</li>
{% endfor %}
</ul>
"""
)
_SCORING = _ENV.from_string(
    """<section id="local-scoring">
<h2>Local scoring</h2>
<p>Paste one raw JSON answer per condition. It is scored in memory by the study's scorer
(13 fields) and is not stored. Invalid JSON is a parse failure, not a zero.</p>
{% for condition in conditions %}
<form class="score-form" data-condition="{{ condition }}">
<h3>{{ condition }}</h3>
<textarea name="answer" aria-label="raw answer ({{ condition }})"></textarea>
<button type="submit">Score</button>
<div class="score-result" aria-live="polite"></div>
</form>
{% endfor %}
</section>
<script>
function addText(parent, tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  parent.appendChild(node);
  return node;
}
for (const form of document.querySelectorAll("form.score-form")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const out = form.querySelector(".score-result");
    out.replaceChildren();
    const response = await fetch("/api/score", {
      method: "POST",
      headers: {"content-type": "application/json"},
      body: JSON.stringify({answer: form.elements.answer.value}),
    });
    const score = await response.json();
    if (!response.ok) { addText(out, "p", "error: " + score.error, "wrong"); return; }
    const verdict = score.correct === score.total ? "ok" : "wrong";
    addText(out, "p", score.label, "score-label " + verdict);
    addText(out, "p", score.reason, "score-reason");
    if (!score.fields.length) return;
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const name of ["field", "expected", "got", "rule", "correct"]) addText(head, "th", name);
    const body = table.createTBody();
    for (const f of score.fields) {
      const row = body.insertRow();
      const got = f.present ? JSON.stringify(f.got) : "(missing)";
      for (const value of [f.path, JSON.stringify(f.expected), got, f.rule,
                           f.correct ? "yes" : "no"]) {
        addText(row, "td", value);
      }
    }
    out.appendChild(table);
  });
}
</script>
"""
)


def people_page(runs_dir: Path | None) -> str:
    """The people's page for the runs under ``runs_dir`` (None or empty: "No runs recorded.")."""
    frozen = PAGE_PATH.read_text(encoding="utf-8")
    start, end = frozen.index(EVIDENCE_START), frozen.index(EVIDENCE_END)
    evidence = _EVIDENCE.render(
        runs=run_summaries(runs_dir),
        no_runs=NO_RUNS,
        limits=protocol_limits(),
        excerpt=_ANSWER_EXCERPT,
    )
    page = frozen[: start + len(EVIDENCE_START)] + "\n" + evidence + frozen[end:]
    return page.replace(PEOPLE_SLOT, _SCORING.render(conditions=CONDITIONS), 1)
