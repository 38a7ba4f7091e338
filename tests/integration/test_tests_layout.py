"""The tests mirror the package (``tests/folders.py``): every test module lives in
``tests/<package>/``, named after a package or top-level module of ``src/dispatchlab``
(``tests/dispatch/cp/`` for :mod:`dispatchlab.dispatch.cp`, ``tests/testing/`` for
:mod:`dispatchlab.testing`), or in ``tests/integration/`` when it crosses the packages;
``tests/docs/`` tests the documentation site; ``tests/`` itself holds only helpers, data
and ``conftest.py``."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

from conftest import slow_tests
from folders import TESTS, folders

SRC = TESTS.parent / "src" / "dispatchlab"
#: the folder of the tests that cross the packages
INTEGRATION = Path("integration")
#: the folder of the documentation's tests (the site in docs/, its examples)
DOCS = Path("docs")


def _modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_no_test_module_at_the_top() -> None:
    loose = [p.name for p in TESTS.glob("test_*.py")]
    assert not loose, (f"move {loose} into tests/<package>/ (the package each mainly "
                       "tests) or tests/integration/")


def test_every_folder_mirrors_a_package() -> None:
    mirrored = {p.parent.relative_to(SRC) for p in SRC.rglob("__init__.py")}
    mirrored |= {p.relative_to(SRC).with_suffix("") for p in SRC.glob("*.py")}
    used = {p.parent.relative_to(TESTS) for p in _modules()}
    assert used <= mirrored | {INTEGRATION, DOCS}, (
        f"test folders naming no package of src/dispatchlab: "
        f"{sorted(map(str, used - mirrored - {INTEGRATION, DOCS}))}")


def test_module_names_are_unique() -> None:
    # pytest imports a test module by its bare name, and tests import each other's
    # helpers by it (``from test_cli import run_cli``)
    twice = [n for n, k in Counter(p.name for p in _modules()).items() if k > 1]
    assert not twice, f"test modules with the same name in two folders: {twice}"


def test_every_test_folder_is_on_the_path() -> None:
    assert {p.parent for p in _modules()} <= set(folders())
    assert {str(p) for p in folders()} <= set(sys.path)


def test_every_listed_slow_test_exists() -> None:
    # tests/slow_tests.txt: a renamed or moved test must not silently leave the list
    defined: dict[str, set[str]] = {}
    missing = []
    for node in sorted(slow_tests()):
        path, name = node.split("::", 1)
        if path not in defined:
            file = TESTS.parent / path
            tree = ast.parse(file.read_text(encoding="utf-8")) if file.is_file() else None
            defined[path] = {n.name for n in getattr(tree, "body", ())
                             if isinstance(n, ast.FunctionDef)}
        if name not in defined[path] or not name.startswith("test"):
            missing.append(node)
    assert not missing, f"tests/slow_tests.txt names no test function: {missing}"
