"""The study itself: what ``pairbench.studies`` registers for ``mcp-transports``."""

from pathlib import Path

from pairbench.studies._study import Study
from pairbench.studies.mcp_transports._double import tracker_reply

STUDY = Study(
    name="mcp-transports",
    title="MCP over stdio vs streamable HTTP: same server, same tasks, paired seeds",
    root=Path(__file__).parent / "study",
    double=tracker_reply,
)
