"""The built-in ``mcp-transports`` study: one tracker MCP server over stdio and over HTTP.

**Usage**::

    from pairbench.studies.mcp_transports import STUDY, TRACKER_FIXTURE
    STUDY.experiment_path              # .../study/experiment.yaml
    TRACKER_FIXTURE.content(seed)      # the seeded tracker both arms of a pair see
"""

from pathlib import Path

from pairbench.studies._study import Study
from pairbench.studies.mcp_transports._content import generate
from pairbench.studies.mcp_transports._double import tracker_reply
from pairbench.studies.mcp_transports._fixture import TRACKER_FIXTURE, TrackerFixture
from pairbench.studies.mcp_transports._graders import (
    CANARY_PREFIX,
    grade_answer,
    grade_security,
    grade_state,
)

STUDY = Study(
    name="mcp-transports",
    title="MCP over stdio vs streamable HTTP: same server, same tasks, paired seeds",
    root=Path(__file__).parent / "study",
    double=tracker_reply,
)

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
