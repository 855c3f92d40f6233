"""The ``runtime-revision-ab`` study's bundled offline example (not yet a registered study).

**Usage**::

    repo = make_example(tmp / "minirt")          # commits equal PINNED anywhere
    with serve_model() as server:                # the scripted Chat Completions server
        result = run_scenario(worktree, "AR-001", server.base_url, tmp / "w", seed=3,
                              timeout_s=60)
"""

from pairbench.studies.runtime_revision_ab._example import PINNED, ExampleRepo, make_example

__all__ = ["PINNED", "ExampleRepo", "make_example"]
