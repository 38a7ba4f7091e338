"""The package's imports of itself inside function bodies may not grow (a ratchet).

An import inside a function hides a dependency from the module's head and is how
today's tree gets around import cycles between layers (see ``.importlinter``, whose
``ignore_imports`` list is the other half of this debt). The layering work is to
remove them; until then their number may shrink but never grow. When it shrinks,
lower :data:`RECORDED` to the new count so it cannot grow back.

Counted: every ``import``/``from ... import`` statement of ``dispatchlab`` (absolute, or
relative inside the package) that sits anywhere inside a ``def`` or ``async def`` of a
module under ``src/dispatchlab`` (methods and nested functions included); one per
statement, however many names it imports. Module-level imports, ``TYPE_CHECKING``
blocks included, are not counted.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "dispatchlab"

#: The count now (347 statements in 51 modules before the layering work).
RECORDED = 211


def _own(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether the import statement imports from dispatchlab itself."""
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "dispatchlab"
    return any(alias.name.split(".")[0] == "dispatchlab" for alias in node.names)


def function_body_imports(source: str) -> list[int]:
    """Line numbers of the package's own import statements inside function bodies."""
    lines: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom) and _own(child):
                lines.append(child.lineno)
            visit(child, in_function or isinstance(child, ast.FunctionDef
                                                   | ast.AsyncFunctionDef))

    visit(ast.parse(source), False)
    return lines


def import_debt(package: Path = PACKAGE) -> Counter[str]:
    """Module path (relative to the package's parent) -> its function-body imports."""
    counts: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        found = function_body_imports(path.read_text(encoding="utf-8"))
        if found:
            counts[str(path.relative_to(package.parent))] = len(found)
    return counts


def test_function_body_imports_do_not_grow() -> None:
    debt = import_debt()
    total = sum(debt.values())
    assert total <= RECORDED, (
        f"{total} imports of dispatchlab inside function bodies, more than the "
        f"{RECORDED} recorded: import at the module's head, in the right layer "
        "(see .importlinter). Per module: "
        + ", ".join(f"{k} {v}" for k, v in sorted(debt.items())))


@pytest.mark.parametrize(("source", "expected"), [
    ("from dispatchlab.sim import engine\n", []),
    ("def f():\n    from dispatchlab.sim import engine\n    import numpy\n", [2]),
    ("class C:\n    def m(self):\n        def g():\n            import dispatchlab.x\n"
     "        from . import y\n", [4, 5]),
    ("async def f():\n    from ..errors import InputError\n", [2]),
    ("def f():\n    from dispatchlabx import y\n    import os\n", []),
])
def test_counter_sees_function_body_imports(source: str, expected: list[int]) -> None:
    assert function_body_imports(source) == expected
