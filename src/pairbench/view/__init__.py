"""``pairbench view``: a local, read-only web app over a folder of runs.

Pages: the runs list, a run (its facts, counts and report), the trial browser (filter by
arm, task, outcome, validity), one trial (result, grade, transcript timeline, tool calls,
the fixture's audit log, kept infra and interrupted attempts) and two runs compared. It
listens on 127.0.0.1 only, answers only Host ``127.0.0.1:PORT`` or ``localhost:PORT``,
sends a strict Content-Security-Policy, and never writes into a run folder.

**Usage**::

    from pairbench.view import serve, serving

    serve(Path("runs"), 8765)              # blocks; Ctrl-C stops it
    with serving(Path("runs")) as url:     # a free port, in a background thread
        ...
"""

from pairbench.view._app import DEFAULT_PORT, create_app
from pairbench.view._serve import serve, serving

__all__ = ["DEFAULT_PORT", "create_app", "serve", "serving"]
