"""Giving freed heap memory back between the command's phases (core/memory.py)."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from dispatchlab.core import memory


def test_trim_is_looked_up_among_the_loaded_symbols(monkeypatch) -> None:
    calls: list[object] = []

    def fake_cdll(name):
        calls.append(name)
        return SimpleNamespace(malloc_trim=lambda pad: calls.append(("trim", pad)))

    monkeypatch.setattr(memory.ctypes, "CDLL", fake_cdll)
    memory.release_free_memory()
    assert calls == [None, ("trim", 0)]  # dlopen(NULL): no search for the C library


def test_it_runs_no_program_and_loads_no_subprocess_module() -> None:
    code = ("import sys\nfrom dispatchlab.core.memory import release_free_memory\n"
            "release_free_memory()\n"
            "print('subprocess' in sys.modules, 'ctypes.util' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "False"]
