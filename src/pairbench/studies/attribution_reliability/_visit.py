"""Evidence of the visit from the site's side: what the fixture's audit saw of a session.

The adapter notes the moment it starts the engine; every request the site saw arrive after
it is the engine's, everything before is pairbench's own (the preflight, a package's
recording). From those hits: the pages the engine loaded, the actions the site saw (a page
load or a call: a form post, a fetch), how long after its start the engine's last request
came (against the request's per-user budget: the protocol's 10 actions and 130 s), and the
words each response showed (so the scorer can tell where the user met the target, and how
much of a page a finding's evidence pasted, from the site's record rather than the
engine's). An end-to-end session whose engine sent the site no request is **never
visited**; a judge session may rightly never visit (the recording is its evidence).

A click that changes nothing on the server is invisible here: the site's action count is a
lower bound of what the engine did, so an over-budget flag is never a false alarm.

**Usage**::

    visit = site_visit(site.audit, since=started, slug=site.slug, mode="scan",
                       budget=Budget(), users=1)
    visit.never_visited, visit.actions, visit.over_budget
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.studies.attribution_reliability.engines._models import Budget

if TYPE_CHECKING:
    # Only its shape: the scorer reads visits without loading the sites' web stack.
    from pairbench.studies.attribution_reliability.site._server import SiteHit

HIT_CAP = 300
"""Hits kept per session (counts cover them all)."""
TEXT_CAP_TOTAL = 200_000
"""Characters of page text kept per session."""
HitKind = Literal["page", "call", "asset"]


class VisitHit(Frozen):
    """One request the engine sent the site."""

    t_s: float
    """Seconds after the engine was started."""
    method: str
    path: str
    """Relative to ``/v/<slug>``; the second origin's prefixed ``other:``."""
    status: int
    kind: HitKind
    """``page`` (a document load), ``call`` (a post, a fetch) or ``asset`` (script, image)."""


class VisitPage(Frozen):
    """The words one response showed, and to whom."""

    path: str
    by: Literal["engine", "pairbench", "recording"]
    """``engine``: served to the engine; ``pairbench``: to the preflight or the package's
    recording; ``recording``: a recorded step's snapshot the engine was given."""
    text: str


class SiteVisit(Frozen):
    """What the site saw of one session (see the module docstring)."""

    mode: Literal["scan", "judge"]
    users: int = Field(ge=1)
    budget: Budget
    requests: int = Field(ge=0)
    """Requests the engine sent the site (both origins)."""
    pairbench_requests: int = Field(ge=0)
    """Requests before the engine started: the preflight and any recording."""
    actions: int = Field(ge=0)
    """The engine's page loads and calls (assets left out)."""
    pages: list[str] = Field(default_factory=list)
    """Distinct paths the engine loaded as pages, first load first."""
    first_s: float | None = None
    last_s: float | None = None
    """Seconds from the engine's start to its first and last request."""
    hits: list[VisitHit] = Field(default_factory=list)
    """The engine's requests, the first ``HIT_CAP``."""
    texts: list[VisitPage] = Field(default_factory=list)

    @property
    def never_visited(self) -> bool:
        """An end-to-end session whose engine never went past pairbench's preflight."""
        return self.mode == "scan" and self.requests == 0

    @property
    def action_budget(self) -> int:
        return self.budget.actions_per_user * self.users

    @property
    def seconds_budget(self) -> float:
        return self.budget.seconds_per_user * self.users

    @property
    def over_budget(self) -> list[str]:
        """Why the session is over the request's budget, from the site's side (empty: not)."""
        out = []
        if self.actions > self.action_budget:
            out.append(f"{self.actions} actions > {self.action_budget}")
        if self.last_s is not None and self.last_s > self.seconds_budget:
            out.append(f"last request at {self.last_s:.0f} s > {self.seconds_budget:g} s")
        return out


def _relative(path: str, slug: str) -> str:
    prefix = f"/v/{slug}"
    return path[len(prefix) :] or "/" if path.startswith(prefix) else path


def _kind(hit: SiteHit) -> HitKind:
    if hit.method not in ("GET", "HEAD"):
        return "call"
    if hit.dest in ("document", "iframe", "frame"):
        return "page"
    if hit.dest:
        return "call" if hit.dest == "empty" else "asset"
    # A client that sends no Sec-Fetch-Dest (an HTTP library): what it fetched tells.
    kind = hit.content_type.split(";")[0].strip().lower()
    if kind.endswith("json"):
        return "call"
    return "page" if kind == "text/html" or hit.status >= 400 else "asset"


def site_visit(
    audit: Sequence[SiteHit],
    *,
    since: float,
    slug: str,
    mode: Literal["scan", "judge"],
    budget: Budget,
    users: int,
    recording: Iterable[tuple[str, str]] = (),
) -> SiteVisit:
    """The visit ``audit`` shows, the engine's part being what arrived at or after ``since``
    (``recording``: (label, text) of snapshots the engine was handed, judge mode)."""
    mine = sorted((h for h in audit if h.at >= since), key=lambda h: h.at)
    ours = [h for h in audit if h.at < since]

    def rel(hit: SiteHit) -> str:
        return ("" if hit.origin == "main" else "other:") + _relative(hit.path, slug)

    hits = [
        VisitHit(t_s=h.at - since, method=h.method, path=rel(h), status=h.status, kind=_kind(h))
        for h in mine
    ]
    texts: list[VisitPage] = []
    seen: set[tuple[str, str]] = set()
    budget_left = TEXT_CAP_TOTAL
    candidates = [(rel(h), "engine", h.text) for h in mine]
    candidates += [(rel(h), "pairbench", h.text) for h in ours]
    candidates += [(label, "recording", text) for label, text in recording]
    for path, by, text in candidates:
        if not text or (path, text) in seen or len(text) > budget_left:
            continue
        seen.add((path, text))
        budget_left -= len(text)
        texts.append(VisitPage.model_validate({"path": path, "by": by, "text": text}))
    return SiteVisit(
        mode=mode,
        users=users,
        budget=budget,
        requests=len(hits),
        pairbench_requests=len(ours),
        actions=sum(h.kind != "asset" for h in hits),
        pages=list(dict.fromkeys(h.path for h in hits if h.kind == "page")),
        first_s=hits[0].t_s if hits else None,
        last_s=hits[-1].t_s if hits else None,
        hits=hits[:HIT_CAP],
        texts=texts,
    )
