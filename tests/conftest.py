"""Shared fixtures: the location of the public traces (``DISPATCHLAB_TRACES``, default
``../shared/traces`` beside the repository; see :mod:`dispatchlab.core.references`).
The test folders (``tests/<package>/``, see ``tests/folders.py``) are put on the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from dispatchlab.core.references import traces_dir
from folders import add_to_sys_path

# the tests live in folders mirroring the package; they import each other's helpers by
# module name (tests/folders.py)
add_to_sys_path()

# Property tests draw the same examples on every run by default (``make test``, CI): a
# run must not pass or fail by luck, and the property tests also assert that the
# generated workloads reached the interesting cases (blocked heads, backfills...).
# DISPATCHLAB_HYPOTHESIS=explore draws new random examples each run to look for new
# failures; a failure prints the blob that reproduces it (@reproduce_failure).
#
# Derandomized examples still depend on hypothesis' pool of "local constants": the
# literals of every project module imported so far (hypothesis >= 6.131 draws from it
# now and then). The examples then change with any literal added anywhere in
# ``src/`` and with which test files were collected (one file alone, or the whole
# suite), and a coverage assertion that held in the suite failed when its file ran
# alone. The pool is emptied here so the fixed examples depend only on the test itself
# (hypothesis' global constants still apply); older hypothesis versions have no pool.
try:
    from hypothesis.internal.conjecture import providers as _providers

    if hasattr(_providers, "_get_local_constants") and hasattr(_providers, "Constants"):
        _NO_LOCAL_CONSTANTS = _providers.Constants()
        _providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS
except ImportError:  # pragma: no cover - hypothesis without the module
    pass

settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("DISPATCHLAB_HYPOTHESIS", "fixed"))

#: the traces folder: ``$DISPATCHLAB_TRACES``, else ``<repo>/../shared/traces``.
TRACES_DIR = traces_dir(Path(__file__).resolve().parents[1])
KTH_NAME = "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The shared traces folder; the test is skipped when it is absent."""
    if not TRACES_DIR.is_dir():
        pytest.skip(f"shared traces absent: {TRACES_DIR} is not a folder")
    return TRACES_DIR


@pytest.fixture(scope="session")
def kth_trace(traces_dir: Path) -> Path:
    """The KTH SP2 trace (cleaned PWA version); skipped when absent."""
    path = traces_dir / KTH_NAME
    if not path.is_file():
        pytest.skip(f"trace {KTH_NAME} not found in {traces_dir}")
    return path


#: the file naming the test functions marked ``slow`` here (one node id a line)
SLOW_LIST = Path(__file__).resolve().parent / "slow_tests.txt"


def slow_tests(path: Path = SLOW_LIST) -> set[str]:
    """The node ids (``tests/<package>/test_x.py::test_name``, no parameters) listed in
    ``tests/slow_tests.txt``, comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``traces`` every test that reaches the shared traces through
    :func:`traces_dir`, itself or through another fixture (:func:`kth_trace`, a module's
    archive fixture); a test that reads :data:`TRACES_DIR` directly carries the mark in
    its module. Mark ``slow`` every test of a function listed in
    ``tests/slow_tests.txt``. ``make test-fast`` deselects both (``-m "not slow and not
    traces ..."``)."""
    slow = slow_tests()
    for item in items:
        if "traces_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.traces)
        if item.nodeid.split("[", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
