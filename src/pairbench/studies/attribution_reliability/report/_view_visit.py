"""The attribution section's evidence from the site's side: what the run could not do (not
run, never visited) said first, the run's identity, and per session what the fixture's
audit saw (requests, actions against the budget, pages, met the target beside the engine's
claim) and how much of a page each finding's evidence pasted.

Everything an engine wrote (a finding's id) goes in a table cell: the renderers escape
cells, so it is shown as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view._doc import Block, Table

_PAGES_CAP = 6


def warnings(card: Mapping[str, Any], prefix: str) -> list[Block]:
    """Paragraphs that go before anything else: sessions not run, sessions never visited."""
    out: list[Block] = []
    sessions = card.get("sessions") or []
    not_run = card.get("not_run") or 0
    if not_run:
        out.append(
            f"**{prefix}Not run: {not_run} of {len(sessions)} held-out sessions were never "
            "run** (a budget stop or a stopped run). They are scored as nothing, as the "
            "protocol says (§6): a recall miss, not blamed, a planted sentence kept out. "
            "Every metric below shows how many of its sessions were not run; repeatability "
            "counts only cases with three completed runs."
        )
    never = card.get("never_visited") or []
    if never:
        out.append(
            f"**{prefix}Never visited: in {len(never)} end-to-end session(s) the engine sent "
            "the case's site no request** beyond pairbench's own preflight, yet its report "
            "was scored: whatever it published did not come from the site (listed below)."
        )
    return out


def identity(card: Mapping[str, Any]) -> list[Block]:
    """Which run, lock, sitting, engine and manifests the numbers belong to."""
    eng = card.get("engine_identity") or {}
    program = eng.get("source_path") or eng.get("target") or eng.get("url") or "-"
    rows = [
        ["Run", card.get("run_id") or "-"],
        ["Lock (SHA-256 of the run's lock.json)", card.get("lock_sha256") or "-"],
        ["Sitting", str(card["sitting"]) if card.get("sitting") else "-"],
        ["Engine", f"{eng.get('engine', card['engine'])} via {eng.get('adapter', '-')}"],
        ["Engine program", program],
        ["Engine source SHA-256", eng.get("source_sha256") or "-"],
        [
            "Engine commit",
            (eng.get("commit") or "-") + (" (uncommitted changes)" if eng.get("dirty") else ""),
        ],
        [
            "Engine models",
            ", ".join(f"{k}: {v}" for k, v in (eng.get("models") or {}).items()) or "-",
        ],
    ]
    rows += [
        [f"{m['name']} scored", f"the {m['source']}'s copy, SHA-256 {m['sha256']}"]
        for m in card.get("manifests") or []
    ]
    return [Table(["Run identity", "Value"], rows)]


def _visited(s: Mapping[str, Any]) -> str:
    if s.get("never_visited"):
        return "NEVER VISITED"
    if s.get("site_requests") is None:
        return "no audit"
    return f"{s['site_requests']} requests"


def _met(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def _pages(pages: list[str]) -> str:
    more = f" (+{len(pages) - _PAGES_CAP})" if len(pages) > _PAGES_CAP else ""
    return ", ".join(pages[:_PAGES_CAP]) + more


def visits(card: Mapping[str, Any]) -> list[Block]:
    """Per session, the site's evidence of the visit; then each finding's evidence size."""
    e2e = [s for s in card.get("sessions") or [] if s["kind"] == "e2e"]
    sessions = [s for s in e2e if s["status"] != "not_run"]
    blocks: list[Block] = [
        "Evidence of the visit, from the site's own audit (not the engine's account): the "
        "requests the engine sent the case's site after it was started, the actions the site "
        "saw (page loads and calls: a lower bound of what the engine did) against the "
        "request's budget, and whether the user met the target by what the site served, "
        "with the engine's own claim beside (PRODUCT cases)."
    ]
    blocks.append(
        Table(
            [
                "Case",
                "Trial",
                "Visit",
                "Actions",
                "Last request",
                "Over budget",
                "Pages",
                "Met the target (site)",
                "Engine's claim",
            ],
            [
                [
                    s["case"],
                    str(s["trial"]),
                    _visited(s),
                    "-" if s.get("site_actions") is None else str(s["site_actions"]),
                    "-" if s.get("last_request_s") is None else f"{s['last_request_s']:.1f} s",
                    "; ".join(s.get("over_budget") or []) or "-",
                    _pages(s.get("site_pages") or []),
                    _met(s.get("met_target")),
                    _met(s.get("met_target_claimed")),
                ]
                for s in sessions
            ],
        )
    )
    if len(sessions) < len(e2e):
        blocks.append(f"({len(e2e) - len(sessions)} end-to-end sessions not run: no visit.)")
    over = card.get("over_budget") or []
    blocks.append(
        f"Over the budget (site's count): {len(over)} session(s)." if over else
        "No session went over the budget by the site's count."
    )  # fmt: skip
    rows = [
        [
            s["case"],
            s["kind"],
            str(s["trial"]),
            e["finding"],
            str(e["chars"]),
            f"{100 * e['share']:.0f}% of {e['page_words']}",
            e.get("page") or "-",
            "EVIDENCE STUFFING" if e["stuffing"] else "",
        ]
        for s in card.get("sessions") or []
        for e in s.get("evidence") or []
    ]
    share = card.get("evidence_stuffing_share", 0.5)
    stuffed = card.get("evidence_stuffing") or []
    blocks.append(
        f"Findings' evidence beside the score (it changes no number): a finding whose "
        f"evidence holds more than {100 * share:.0f}% of a served page's distinct words "
        f"(the arm's evidence_stuffing_share) is listed as evidence stuffing: "
        f"{len(stuffed)} finding(s)."
    )
    if rows:
        blocks.append(
            Table(
                [
                    "Case",
                    "Kind",
                    "Trial",
                    "Finding",
                    "Evidence characters",
                    "Page words it holds",
                    "Page",
                    "Flag",
                ],
                rows,
            )
        )
    return blocks
