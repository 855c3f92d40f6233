"""The core names no study: nothing outside ``pairbench/studies/<name>/`` imports a study.

The core reaches studies only through ``pairbench.studies`` (the ``Study`` hooks and the
registry), as pytest reaches its own features only through its plugin hooks. Read from the
source with ``ast``, so an import inside a function or under ``TYPE_CHECKING`` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pairbench
from pairbench import studies

SRC = Path(pairbench.__path__[0])


def study_imports(path: Path, root: Path = SRC) -> list[str]:
    """The ``pairbench.studies.<name>`` modules a source file imports (any depth, any place)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if _is_study(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "pairbench.studies":
                names = [
                    f"pairbench.studies.{a.name}" for a in node.names if a.name not in _PROTOCOL
                ]
            elif _is_study(node.module):
                names = [node.module]
        found += [f"{path.relative_to(root.parent)}:{node.lineno}: {name}" for name in names]
    return found


def _is_study(module: str) -> bool:
    parts = module.split(".")
    return parts[:2] == ["pairbench", "studies"] and len(parts) > 2 and parts[2] != "_study"


_PROTOCOL = set(studies.__all__)
"""Names ``from pairbench.studies import ...`` brings: the protocol, not a study."""


def _core_files() -> list[Path]:
    studies = SRC / "studies"
    return [
        p
        for p in sorted(SRC.rglob("*.py"))
        if not p.is_relative_to(studies) or p.parent == studies  # studies/_study.py is core
    ]


def test_no_core_module_imports_a_study() -> None:
    found = [line for path in _core_files() for line in study_imports(path)]
    assert found == [], "the core imports a study:\n" + "\n".join(found)


def test_the_check_fires_on_a_core_module_that_imports_a_study(tmp_path: Path) -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from pairbench.studies import Study, acme\n"
        "if TYPE_CHECKING:\n"
        "    from pairbench.studies.acme._x import X\n"
        "def f() -> None:\n"
        "    import pairbench.studies.acme\n"
    )
    copy = tmp_path / "pairbench" / "report" / "_imports_a_study.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(source)
    found = study_imports(copy, tmp_path / "pairbench")
    assert [f.split(": ")[1] for f in found] == [
        "pairbench.studies.acme",
        "pairbench.studies.acme._x",
        "pairbench.studies.acme",
    ]
