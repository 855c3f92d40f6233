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
    """The ``pairbench.studies.<name>`` modules a source file imports (any depth, any place):
    absolute and relative imports, and ``importlib.import_module`` / ``__import__`` of a
    constant name."""
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Call):
            names = _imported(node, package)
            found += [f"{path.relative_to(root.parent)}:{node.lineno}: {n}" for n in names]
    return found


def _imported(node: ast.Import | ast.ImportFrom | ast.Call, package: tuple[str, ...]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if _is_study(alias.name)]
    if isinstance(node, ast.ImportFrom):
        base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
        module = ".".join(p for p in (base, node.module or "") if p)
        if module == "pairbench.studies":
            return [f"{module}.{a.name}" for a in node.names if a.name not in _PROTOCOL]
        return [module] if _is_study(module) else []
    func, args = node.func, node.args
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in {"import_module", "__import__"} or not args:
        return []
    first = args[0]
    named = isinstance(first, ast.Constant) and isinstance(first.value, str)
    return [first.value] if named and _is_study(first.value) else []  # type: ignore[attr-defined]


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
        "    from ..studies.acme import thing\n"
        "    from ..studies import acme, Study\n"
        "    from . import _fine\n"
        "    importlib.import_module('pairbench.studies.acme._y')\n"
    )
    copy = tmp_path / "pairbench" / "report" / "_imports_a_study.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(source)
    found = study_imports(copy, tmp_path / "pairbench")
    assert [f.split(": ")[1] for f in found] == [
        "pairbench.studies.acme",
        "pairbench.studies.acme._x",
        "pairbench.studies.acme",
        "pairbench.studies.acme",
        "pairbench.studies.acme",
        "pairbench.studies.acme._y",
    ]
