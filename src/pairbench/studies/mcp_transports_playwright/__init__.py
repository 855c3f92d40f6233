"""The built-in ``mcp-transports-playwright`` study: the same pinned ``@playwright/mcp``
over stdio (per trial) and over streamable HTTP (one warm server), driving Debian's
Chromium against a seeded shop on 127.0.0.1.

**Usage**::

    from pairbench.studies.mcp_transports_playwright import SITE_FIXTURE, STUDY
    STUDY.experiment_path              # .../study/experiment.yaml
    SITE_FIXTURE.content(seed)         # the seeded shop, and this attempt's URL on the site

The experiment names ``playwright-mcp`` as its docs run it: put the pinned install's
``node_modules/.bin`` on ``PATH`` (in this repository, ``make agent-clis`` installs it in
``tools/agent-clis``); ``pairbench check`` names the binary when it is missing.
"""

from pathlib import Path

from pairbench.studies._study import Study
from pairbench.studies.mcp_transports_playwright._content import generate
from pairbench.studies.mcp_transports_playwright._double import browser_reply
from pairbench.studies.mcp_transports_playwright._fixture import SITE_FIXTURE, SiteFixture
from pairbench.studies.mcp_transports_playwright._graders import grade_security, grade_state

_CHECKOUT = Path(__file__).resolve().parents[4]
STUDY = Study(
    name="mcp-transports-playwright",
    title="@playwright/mcp over stdio vs streamable HTTP: same binary, same seeded site",
    root=Path(__file__).parent / "study",
    commands=(
        (
            "playwright-mcp",
            "in a pairbench checkout run `make agent-clis`; elsewhere `npm install "
            "@playwright/mcp@0.0.83` and put its node_modules/.bin on PATH",
        ),
    ),
    # An editable install from a checkout: the pinned install `make agent-clis` made.
    bin_dirs=(_CHECKOUT / "tools" / "agent-clis" / "node_modules" / ".bin",),
    double=browser_reply,
)

__all__ = [
    "SITE_FIXTURE",
    "STUDY",
    "SiteFixture",
    "generate",
    "grade_security",
    "grade_state",
]
