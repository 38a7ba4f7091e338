"""The package imports itself at the head of its modules, not inside function bodies.

An import inside a function hides a dependency from the module's head (no file's header
then tells what it touches) and is how an import cycle gets hidden. The rule (issue 29):
an ``import``/``from ... import`` of ``dispatchlab`` (absolute, or relative inside the
package) may sit inside a ``def``/``async def`` (methods and nested functions included)
only

- in ``dispatchlab.cli``, where a command loads its library modules when it runs (so
  ``dispatchlab --version`` and every ``--help`` start fast); and
- for a registry's lazy entries, which are ``"module:Class"`` strings imported with
  :mod:`importlib` (:mod:`dispatchlab.core.registry`, ``workload.load.READERS``), not
  import statements, so this test does not see them.

Deferring a heavy third-party import (pyarrow, DuckDB, matplotlib, OR-Tools, ...) stays
allowed: that is how a module stays cheap to import. Any other function-body import of
the package must be listed, with its reason, in :data:`ALLOWED` (one entry per importing
and imported module) or, for a module another change is rewriting, in :data:`PENDING`.
Both lists may only shrink: an entry that no longer matches an import fails too, so a
fixed import is removed from the list in the same change.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "dispatchlab"

#: Packages whose functions may import the package (the command line: start-up time).
EXEMPT = ("cli",)

#: (importing module, imported module), names without ``dispatchlab.`` -> why the import
#: stays in a function body. Empty: the optional parts of a run (Eurora archives, Alea
#: traces, power data) are lazy ``module:name`` entries of run.build (``OPTIONAL``, like
#: the readers of workload.load), a hot start and the power accounting are imported at
#: the heads of run.build, sim.result and run.outputs (zoneinfo, the costly import of the
#: Eurora reader, is deferred to where a zone is checked), and the campaign reaches its
#: worker through campaign.traces and a task name (runner.RUN_TASK).
ALLOWED: dict[tuple[str, str], str] = {}

#: Modules whose function-body imports another change is moving to the head -> why they
#: are still there (empty: none left).
PENDING: dict[str, str] = {}


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    """``dispatchlab.a.b`` for ``.../dispatchlab/a/b.py`` (a package: its folder)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules of ``dispatchlab`` an import statement in ``module`` names (absolute
    names; a relative import resolved against ``module``'s package)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "dispatchlab"]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        return [".".join(base + ([node.module] if node.module else []))]
    name = node.module or ""
    return [name] if name.split(".")[0] == "dispatchlab" else []


def function_body_imports(source: str, module: str = "dispatchlab.m",
                          is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported module) of each import of the package inside a function body."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.extend((child.lineno, m)
                             for m in _imported(child, module, is_package))
            visit(child, in_function or isinstance(child, ast.FunctionDef
                                                   | ast.AsyncFunctionDef))

    visit(ast.parse(source), False)
    return found


def import_debt(package: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """(importing, imported module) -> ``path:line`` of each function-body import of the
    package outside :data:`EXEMPT`, names without the ``dispatchlab.`` prefix."""
    debt: dict[tuple[str, str], list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module = _module_name(path, package)
        short = module.removeprefix("dispatchlab.")
        if short.split(".")[0] in EXEMPT:
            continue
        for line, imported in function_body_imports(path.read_text(encoding="utf-8"), module,
                                                     path.name == "__init__.py"):
            key = (short, imported.removeprefix("dispatchlab."))
            debt.setdefault(key, []).append(f"{path.relative_to(package.parent)}:{line}")
    return debt


def test_no_function_body_import_outside_the_allow_list() -> None:
    debt = import_debt()
    new = {k: v for k, v in debt.items() if k not in ALLOWED and k[0] not in PENDING}
    assert not new, (
        "imports of dispatchlab inside function bodies: import at the module's head (move "
        "a shared piece to a lower module to break a cycle; defer a heavy third-party "
        "import instead), or list the import in ALLOWED with its reason: "
        + "; ".join(f"{a} -> {b} at {', '.join(where)}" for (a, b), where in sorted(new.items())))


def test_the_allow_lists_only_shrink() -> None:
    """An entry no import needs any more is removed (so it cannot come back unnoticed)."""
    debt = import_debt()
    stale = [f"{a} -> {b}" for a, b in ALLOWED if (a, b) not in debt]
    stale += [m for m in PENDING if not any(k[0] == m for k in debt)]
    assert not stale, f"no longer imported in a function body, remove from the lists: {stale}"


@pytest.mark.parametrize(("source", "expected"), [
    ("from dispatchlab.sim import engine\n", []),
    ("def f():\n    from dispatchlab.sim import engine\n    import numpy\n",
     [(2, "dispatchlab.sim")]),
    ("class C:\n    def m(self):\n        def g():\n            import dispatchlab.x\n"
     "        from . import y\n", [(4, "dispatchlab.x"), (5, "dispatchlab.a")]),
    ("async def f():\n    from ..errors import InputError\n", [(2, "dispatchlab.errors")]),
    ("def f():\n    from dispatchlabx import y\n    import os\n", []),
])
def test_counter_sees_function_body_imports(source: str, expected: list[tuple[int, str]]
                                            ) -> None:
    assert function_body_imports(source, "dispatchlab.a.m") == expected


def test_the_rule_catches_a_new_import(tmp_path: Path) -> None:
    """A function-body import outside cli/ is debt; inside cli/ it is not."""
    pkg = tmp_path / "dispatchlab"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "sim").mkdir()
    body = "def f():\n    from dispatchlab.run import build\n"
    (pkg / "cli" / "x.py").write_text(body)
    (pkg / "sim" / "y.py").write_text(body)
    assert import_debt(pkg) == {("sim.y", "run"): ["dispatchlab/sim/y.py:2"]}
