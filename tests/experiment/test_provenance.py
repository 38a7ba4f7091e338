"""Code hashes and declared input files (dispatchlab.experiment.provenance): what changes a hash
and what does not, own modules and their imports, and the speed of the project hash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.experiment import provenance

PACKAGE = Path(provenance.__file__).resolve().parents[1]
BACKFILL = PACKAGE / "dispatch" / "backfill.py"


# ----------------------------------------------------------------- parsed source


def test_docstrings_comments_and_formatting_do_not_count():
    source = BACKFILL.read_text()
    base = provenance.source_hash(source)
    # comments, blank lines, a reflowed docstring and a changed docstring
    edited = source.replace('"""', '"""Edited docstring.\n\n', 1)
    edited = edited.replace("\nclass ", "\n# a new comment\n\n\nclass ", 1)
    assert edited != source
    assert provenance.source_hash(edited) == base
    # a function whose only statement is its docstring equals `pass`
    assert provenance.source_hash("def f():\n    'doc'\n") == \
        provenance.source_hash("def f():\n    pass  # nothing\n")
    assert provenance.source_hash("x = (1 +\n     2)\n") == provenance.source_hash("x = 1 + 2")


def test_any_other_edit_counts():
    source = BACKFILL.read_text()
    base = provenance.source_hash(source)
    assert "reservations: int = 1" in source
    changed = source.replace("reservations: int = 1", "reservations: int = 2", 1)
    assert provenance.source_hash(changed) != base
    # a string that is not a docstring is code (an error text, a constant)
    assert provenance.source_hash("def f():\n    x = 1\n    'not a docstring'\n") != \
        provenance.source_hash("def f():\n    x = 1\n")


def test_syntax_error_names_the_file():
    with pytest.raises(InputError, match="cannot parse") as info:
        provenance.source_hash("def f(:\n", "mine.py")
    assert info.value.file == "mine.py"


# ----------------------------------------------------------------- the project


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("copy") / "dispatchlab"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_copy_of_the_package_hashes_like_the_installed_one(package_copy):
    assert provenance.package_code_hash(package_copy) == provenance.project_code_hash()


def test_docstring_or_comment_edit_keeps_the_project_hash(package_copy, tmp_path):
    root = tmp_path / "dispatchlab"
    shutil.copytree(package_copy, root)
    module = root / "dispatch" / "backfill.py"
    text = module.read_text()
    module.write_text("# a comment at the top\n" + text.replace('"""', '""" More words.\n', 1))
    assert provenance.package_code_hash(root) == provenance.project_code_hash()
    module.write_text(text.replace("reservations: int = 1", "reservations: int = 3", 1))
    assert provenance.package_code_hash(root) != provenance.project_code_hash()


def test_excluded_modules_do_not_count(package_copy, tmp_path):
    """The rule: every module that can affect a result counts (the run and experiment
    layers included); only the command line and the report with its figures do not."""
    names = {name for name, _ in provenance.project_modules()}
    assert {"dispatchlab.sim.engine", "dispatchlab.experiment.campaign.worker",
            "dispatchlab.dispatch.backfill", "dispatchlab.metrics.summary",
            "dispatchlab.experiment.campaign.store", "dispatchlab.experiment.provenance",
            "dispatchlab.core.suggest", "dispatchlab.testing"} <= names
    assert not names & {"dispatchlab.report", "dispatchlab.report.html",
                        "dispatchlab.report.plots", "dispatchlab.__main__"}
    assert not any(n.startswith("dispatchlab.cli") for n in names)
    root = tmp_path / "dispatchlab"
    shutil.copytree(package_copy, root)
    (root / "report" / "html.py").write_text("REPORT_CHANGED = True\n")
    (root / "cli" / "extra.py").write_text("ALSO = 1\n")
    assert provenance.package_code_hash(root) == provenance.project_code_hash()
    (root / "sim" / "new_module.py").write_text("NEW = 1\n")  # a new module counts
    assert provenance.package_code_hash(root) != provenance.project_code_hash()


def test_project_hash_is_computed_once_per_process(monkeypatch):
    """The hash is cached: a second call reads no source file (its speed is measured by
    benchmarks/bench_provenance.py, not here: timed unit tests flake on a busy machine)."""
    first = provenance.project_code_hash()
    calls = []
    monkeypatch.setattr(provenance, "_file_source_hash",
                        lambda path: calls.append(path) or "x")
    assert provenance.project_code_hash() == first and calls == []


def test_dependency_versions(monkeypatch):
    versions = provenance.dependency_versions()
    assert set(versions) == {"numpy", "ortools", "lightgbm", "scikit-learn"}
    import numpy

    assert versions["numpy"] == numpy.__version__
    monkeypatch.setattr(provenance, "DEPENDENCIES", ("numpy", "no-such-package-here"))
    uncached = provenance.dependency_versions.__wrapped__()
    assert uncached == {"numpy": numpy.__version__, "no-such-package-here": "absent"}


# ------------------------------------------------------------------- own classes

MINE = '''
"""A dispatcher of our own."""
import numpy as np  # site-packages: not followed
import json  # standard library: not followed
from dispatchlab.dispatch import FIFO  # the project: covered by the project hash
from helpers import ORDER
from pkg.sub import VALUE


class Mine(FIFO):
    """First come, first served."""

    def order(self):
        return ORDER + VALUE
'''


def own_modules(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.py").write_text(MINE)
    (folder / "helpers.py").write_text("from . import nothing_here\nORDER = 'fifo'\n")
    (folder / "pkg").mkdir(exist_ok=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "sub.py").write_text("from .deeper import DEEP\nVALUE = DEEP\n")
    (folder / "pkg" / "deeper.py").write_text("DEEP = ''\n")
    return folder / "mine.py"


def test_own_module_and_its_own_imports(tmp_path):
    mine = own_modules(tmp_path / "a")
    name = f"{mine}:Mine"
    files = provenance.own_module_files(name)
    assert files[0] == mine.resolve()
    assert {f.name for f in files} == {"mine.py", "helpers.py", "__init__.py", "sub.py",
                                       "deeper.py"}
    before = provenance.component_code_hash(name)
    assert before == provenance.component_code_hash(name)
    (mine.parent / "pkg" / "deeper.py").write_text("DEEP = 'x'\n")  # two imports deep
    after = provenance.component_code_hash(name)
    assert after != before
    (mine.parent / "pkg" / "deeper.py").write_text("# same code\nDEEP = 'x'  # again\n")
    assert provenance.component_code_hash(name) == after


def test_own_class_hash_does_not_depend_on_where_the_files_are(tmp_path):
    a = own_modules(tmp_path / "a")
    b = own_modules(tmp_path / "elsewhere" / "b")
    assert provenance.component_code_hash(f"{a}:Mine") == \
        provenance.component_code_hash(f"{b}:Mine")


def test_module_class_names_are_found_on_the_path(tmp_path, monkeypatch):
    own_modules(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = provenance.component_code_hash("mine:Mine")
    assert by_module == provenance.component_code_hash(f"{tmp_path / 'mine.py'}:Mine")
    assert provenance.component_code_hash("pkg.sub:VALUE") is not None
    with pytest.raises(InputError, match="cannot find module 'no_such_module'"):
        provenance.component_code_hash("no_such_module:Cls")
    with pytest.raises(InputError, match="no such Python file"):
        provenance.component_code_hash(f"{tmp_path / 'gone.py'}:Cls")


def test_builtins_have_no_component_hash_and_share_the_run_hash(tmp_path):
    assert provenance.component_code_hash("easy") is None
    assert provenance.run_code_hash("easy", "walltime") == \
        provenance.run_code_hash("fifo", "history")
    mine = own_modules(tmp_path)
    own = provenance.run_code_hash(f"{mine}:Mine", "walltime")
    assert own != provenance.run_code_hash("easy", "walltime")
    mine.write_text(MINE.replace("ORDER + VALUE", "VALUE + ORDER"))
    assert provenance.run_code_hash(f"{mine}:Mine", "walltime") != own


def test_a_syntax_error_in_an_own_module_is_an_input_error(tmp_path):
    mine = own_modules(tmp_path)
    (tmp_path / "helpers.py").write_text("ORDER = (\n")
    with pytest.raises(InputError, match="cannot parse") as info:
        provenance.component_code_hash(f"{mine}:Mine")
    assert info.value.file == str((tmp_path / "helpers.py").resolve())


# --------------------------------------------------------------- declared files


class _Declares:
    input_files = ("table.csv",)


class _Method:
    def __init__(self, path: str) -> None:
        self.path = path

    def input_files(self) -> tuple[str, ...]:
        return (self.path,)


def test_declared_input_files(tmp_path):
    here = Path(__file__).resolve().parent
    (tmp_path / "model.txt").write_text("weights")
    assert provenance.declared_input_files(_Method(str(tmp_path / "model.txt"))) == [
        (tmp_path / "model.txt").resolve()]
    assert provenance.declared_input_files(object()) == []
    # relative paths are relative to the class's own module (this test file)
    with pytest.raises(InputError, match="declares input file") as info:
        provenance.declared_input_files(_Declares())
    assert str(here / "table.csv") in info.value.message


@pytest.mark.parametrize("value", ["one.csv", 3, ("ok.csv", 4)])
def test_bad_input_file_declarations(value):
    class Bad:
        input_files = value

    with pytest.raises(InputError, match="input_files"):
        provenance.declared_input_files(Bad())


def test_file_sha256(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"abc")
    assert provenance.file_sha256(path) == \
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert provenance.file_sha256(path) == provenance.sha256_hex(b"abc")
