"""The test folders: ``tests/<package>/`` mirrors ``src/dispatchlab/<package>/``
(``tests/dispatch/cp/`` for :mod:`dispatchlab.dispatch.cp`, ...), with
``tests/integration/`` for what crosses the packages (golden schedules, real traces, the
public API, the import ratchet). Helpers (``golden.py``, ``strategies.py``,
``snapshots.py``, ``compare_stores.py``, ...) and data stay in ``tests/`` itself.

Test modules share helpers by module name (``from test_cli import run_cli``), as they
did when they all lived in ``tests/``: :func:`add_to_sys_path` puts ``tests/`` and every
folder under it that holds test modules on :data:`sys.path`. ``conftest.py`` calls it
under pytest, and the helper scripts run on their own (``python tests/snapshots.py
--update``) call it too. Test module names stay unique across the folders (pytest
imports them by their bare name).
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the ``tests/`` folder
TESTS = Path(__file__).resolve().parent


def folders() -> list[Path]:
    """``tests/`` and every folder under it holding a ``test_*.py`` file, sorted."""
    return sorted({TESTS, *(p.parent for p in TESTS.rglob("test_*.py"))})


def add_to_sys_path() -> None:
    """Append the folders of :func:`folders` not yet on :data:`sys.path` (appended:
    installed packages and the standard library keep precedence over a test folder)."""
    for folder in map(str, folders()):
        if folder not in sys.path:
            sys.path.append(folder)
