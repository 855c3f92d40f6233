"""``create_app``: the view's pages as a Starlette app over one RUNS_DIR.

Pages (every one GET, every one read-only)::

    /                                       the runs list
    /runs/<run>                             one run: its facts, counts and report
    /runs/<run>/report                      the report (render_html over summary.json)
    /runs/<run>/status.json                 what a live run's page polls
    /runs/<run>/trials?arm=&task=&outcome=&validity=&q=&page=    the trial browser
    /runs/<run>/trials.json?(the same)      one page of it as JSON
    /runs/<run>/trials/<arm>/<task>/<trial> one trial, every attempt it had
    /runs/<run>/trials/<arm>/<task>/<trial>/transcript?kind=&attempt=&offset=&t=&part=
                                            the next part of an attempt's transcript
    /compare?a=<run>&b=<run>&treatment=     two runs compared, or why they cannot be
    /static/...                             the view's CSS and script
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from pairbench._errors import RunDirError
from pairbench.view._cache import RunCache
from pairbench.view._compare import TREATMENTS, compare_page, parse_compare
from pairbench.view._listing import (
    FIRST_PAGE,
    VALIDITY,
    TrialFilter,
    TrialListing,
    parse_filter,
    trial_listing,
)
from pairbench.view._paths import NotFound, RunsRoot, link
from pairbench.view._report import REPORTS, ReportError
from pairbench.view._runs import OUTCOMES, list_runs, run_facts
from pairbench.view._security import REPORT_CSP, Guard, allowed_hosts
from pairbench.view._timeline import Timeline
from pairbench.view._trials import transcript_part, trial_page

DEFAULT_PORT = 8765
"""The port ``pairbench view`` listens on unless told otherwise."""
STATIC = Path(__file__).parent / "static"

# Autoescape on for every template, whatever its name: every string a page shows may be
# an agent's. The templates never use |safe (a test reads them for it).
ENV = Environment(
    loader=PackageLoader("pairbench.view", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.globals.update(link=link, outcomes=OUTCOMES, validities=VALIDITY, treatments=TREATMENTS)


def _number(value: float | None, unit: str = "") -> str:
    """A latency or size: three decimals under 10 (a server's 0.039 ms), else one."""
    if value is None:
        return "—"
    return f"{value:,.3f}{unit}" if abs(value) < 10 else f"{value:,.1f}{unit}"


def _outcome_class(outcome: object) -> str:
    """A CSS class for an outcome; only known outcomes name one (never agent text)."""
    return f"o-{outcome}" if outcome in OUTCOMES else "o-other"


ENV.filters.update(number=_number, outcome_class=_outcome_class)


class _ViewApp(Starlette):
    """Starlette with :class:`Guard` outside even its error handling, so that a 500 carries
    the same headers and a foreign Host never reaches a route."""

    hosts: frozenset[str] = frozenset()

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), self.hosts)


def _page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("poll", None)  # only a live run's pages poll
    return HTMLResponse(ENV.get_template(template).render(**context), status_code=status)


class _Pages:
    """The route handlers. Plain functions: Starlette runs them in its thread pool, so a
    large run read from disk never blocks the event loop."""

    def __init__(self, root: RunsRoot) -> None:
        self.root = root
        self.reports = REPORTS
        self.cache = RunCache(root)

    def runs(self, request: Request) -> Response:
        runs = list_runs(self.root, self.cache.summary)
        return _page("runs.html", title="runs", crumbs=[], runs=runs, root=str(self.root.path))

    def run(self, request: Request) -> Response:
        run_id = request.path_params["run"]
        summary = self.cache.summary(run_id)
        facts = run_facts(summary.info) if summary.info else None
        first: TrialListing | None = None
        if summary.counts is not None:
            first = trial_listing(self.cache.index(run_id)[1], TrialFilter(), FIRST_PAGE)
        return _page(
            "run.html",
            title=run_id,
            crumbs=[(run_id, None)],
            run=summary,
            facts=facts,
            first=first,
            others=[r for r in self.root.run_ids() if r != run_id],
            poll=_poll(run_id, summary.version) if summary.live else None,
        )

    def status(self, request: Request) -> Response:
        summary = self.cache.summary(request.path_params["run"])
        return JSONResponse({"version": summary.version, "live": summary.live})

    def report(self, request: Request) -> Response:
        run = self.root.run_path(request.path_params["run"])
        try:
            html = self.reports.render(run)
        except ReportError as exc:
            return HTMLResponse(
                ENV.get_template("report_missing.html").render(message=str(exc)),
                headers={"content-security-policy": REPORT_CSP},
            )
        return HTMLResponse(html, headers={"content-security-policy": REPORT_CSP})

    def _listing(self, request: Request) -> tuple[str, TrialFilter, TrialListing]:
        run_id = request.path_params["run"]
        index = self.cache.index(run_id)[1]
        f = parse_filter(request.query_params, index.arms, index.tasks)
        return run_id, f, trial_listing(index, f)

    def trials(self, request: Request) -> Response:
        run_id, f, listing = self._listing(request)
        return _page(
            "trials.html",
            title=f"trials of {run_id}",
            crumbs=[(run_id, link("runs", run_id)), ("trials", None)],
            run_id=run_id,
            listing=listing,
            filter=f,
        )

    def trials_json(self, request: Request) -> Response:
        run_id, _, listing = self._listing(request)
        return JSONResponse(
            {
                "run": run_id,
                "matched": listing.matched,
                "total": listing.total,
                "page": listing.page,
                "pages": listing.pages,
                "trials": [line.as_json(run_id) for line in listing.lines],
            }
        )

    def trial(self, request: Request) -> Response:
        run_id, arm, task = (request.path_params[k] for k in ("run", "arm", "task"))
        trial = int(request.path_params["trial"])
        summary = self.cache.summary(run_id)
        if summary.info is None:
            raise RunDirError(summary.error or f"{run_id}: cannot read the run")
        page = trial_page(self.root.run_path(run_id), arm, task, trial, summary.info)
        key = f"{arm}/{task}/{trial}"
        return _page(
            "trial.html",
            title=f"{key} in {run_id}",
            crumbs=[
                (run_id, link("runs", run_id)),
                ("trials", link("runs", run_id, "trials")),
                (key, None),
            ],
            run_id=run_id,
            page=page,
            poll=_poll(run_id, summary.version) if summary.live else None,
        )

    def transcript(self, request: Request) -> Response:
        run_id, arm, task = (request.path_params[k] for k in ("run", "arm", "task"))
        trial = int(request.path_params["trial"])
        timeline = transcript_part(
            self.root.run_path(run_id), arm, task, trial, request.query_params
        )
        more = {k: v for k, v in request.query_params.items() if k != "part"}
        context: dict[str, Any] = {
            "timeline": timeline,
            "more_url": _more_url(run_id, arm, task, trial, timeline, more),
        }
        if request.query_params.get("part") == "1":  # what the page's script fetches
            return _page("timeline_part.html", **context)
        key = f"{arm}/{task}/{trial}"
        return _page(
            "transcript.html",
            title=f"transcript of {key} in {run_id}",
            crumbs=[
                (run_id, link("runs", run_id)),
                ("trials", link("runs", run_id, "trials")),
                (key, link("runs", run_id, "trials", arm, task, trial)),
                ("transcript", None),
            ],
            **context,
        )

    def compare(self, request: Request) -> Response:
        runs = self.root.run_ids()
        query = parse_compare(request.query_params, runs)
        return _page(
            "compare.html",
            title="compare runs",
            crumbs=[("compare", None)],
            runs=runs,
            page=compare_page(self.root, query),
        )


def _more_url(
    run_id: str, arm: str, task: str, trial: int, timeline: Timeline, query: dict[str, str]
) -> str | None:
    """The link to the part after ``timeline``, or None at the end of the file."""
    if timeline.next_offset is None:
        return None
    last = next((e.t for e in reversed(timeline.entries) if e.t is not None), None)
    fields = query | {"offset": str(timeline.next_offset), "t": "" if last is None else repr(last)}
    return link("runs", run_id, "trials", arm, task, trial, "transcript", query=fields)


def _first_more(run_id: str, page: Any, attempt: Any) -> str | None:
    """The "show more" link under an attempt's first part of its transcript."""
    if attempt.timeline is None or attempt.attempt is None:
        return None
    query = {"kind": attempt.kind, "attempt": str(attempt.attempt)}
    return _more_url(run_id, page.arm, page.task, page.trial, attempt.timeline, query)


ENV.globals.update(first_more=_first_more)


def _poll(run_id: str, version: str) -> dict[str, str | None]:
    return {"url": link("runs", run_id, "status.json"), "version": version}


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.status_code != 404:
        return _page("error.html", exc.status_code, title="error", crumbs=[], message=exc.detail)
    message = str(exc) if isinstance(exc, NotFound) else "no such page"
    return _page("error.html", 404, title="not found", crumbs=[], message=message)


async def _unreadable(request: Request, exc: Exception) -> Response:
    # A damaged run is the user's to fix: say which file and how, as the CLI would.
    return _page("error.html", 500, title="unreadable run", crumbs=[], message=str(exc))


def create_app(runs_dir: Path, *, port: int = DEFAULT_PORT) -> Starlette:
    """The view of every run folder under ``runs_dir``, serving Host ``127.0.0.1:port``
    and ``localhost:port`` only. Raises ``RunDirError`` when ``runs_dir`` is not a folder.

    **Usage**::

        app = create_app(Path("runs"), port=8765)
        uvicorn.run(app, host="127.0.0.1", port=8765)   # or: serve(Path("runs"), 8765)
    """
    pages = _Pages(RunsRoot.open(runs_dir))
    for name in ENV.list_templates():  # compiled now, not on the first page anyone opens
        ENV.get_template(name)
    app = _ViewApp(
        routes=[
            Route("/", pages.runs),
            Route("/compare", pages.compare),
            Route("/runs/{run}", pages.run),
            Route("/runs/{run}/status.json", pages.status),
            Route("/runs/{run}/report", pages.report),
            Route("/runs/{run}/trials", pages.trials),
            Route("/runs/{run}/trials.json", pages.trials_json),
            Route("/runs/{run}/trials/{arm}/{task}/{trial:int}", pages.trial),
            Route("/runs/{run}/trials/{arm}/{task}/{trial:int}/transcript", pages.transcript),
            Mount("/static", StaticFiles(directory=STATIC, follow_symlink=False), name="static"),
        ],
        exception_handlers={
            NotFound: _http_error,
            HTTPException: _http_error,
            RunDirError: _unreadable,
        },
    )
    app.hosts = allowed_hosts(port)
    return app
