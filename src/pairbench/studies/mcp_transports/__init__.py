"""The built-in ``mcp-transports`` study: one tracker MCP server over stdio and over HTTP.

**Usage**::

    from pairbench.studies.mcp_transports import STUDY, TRACKER_FIXTURE
    STUDY.experiment_path              # .../study/experiment.yaml
    TRACKER_FIXTURE.content(seed)      # the seeded tracker both arms of a pair see

Its names load on first use (``pairbench._lazy``): the tracker server, one process per
stdio trial, imports this package first and needs none of them.
"""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench.studies.mcp_transports._content import generate
    from pairbench.studies.mcp_transports._fixture import TRACKER_FIXTURE, TrackerFixture
    from pairbench.studies.mcp_transports._graders import (
        CANARY_PREFIX,
        grade_answer,
        grade_security,
        grade_state,
    )
    from pairbench.studies.mcp_transports._study import STUDY

__all__ = [
    "CANARY_PREFIX",
    "STUDY",
    "TRACKER_FIXTURE",
    "TrackerFixture",
    "generate",
    "grade_answer",
    "grade_security",
    "grade_state",
]

_HOME = "pairbench.studies.mcp_transports"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CANARY_PREFIX": f"{_HOME}._graders",
        "STUDY": f"{_HOME}._study",
        "TRACKER_FIXTURE": f"{_HOME}._fixture",
        "TrackerFixture": f"{_HOME}._fixture",
        "generate": f"{_HOME}._content",
        "grade_answer": f"{_HOME}._graders",
        "grade_security": f"{_HOME}._graders",
        "grade_state": f"{_HOME}._graders",
    },
)
