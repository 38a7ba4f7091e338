"""The whole ``simulate`` command on the native path loads only what it needs (issue 31,
lean start-up): no pandas, no ``pyarrow.compute``, no ``numpy.ma``, and the Python
engine's dispatchers are not run; the trace is read by the compiled SWF parser."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dispatchlab.cli import main
from dispatchlab.core import memory

_PROBE = """
import json, sys
from dispatchlab.cli import main
from dispatchlab.workload import swf
calls = []
native = swf._read_native
swf._read_native = lambda *a, **k: calls.append(1) or native(*a, **k)
rc = main({args!r})
print(json.dumps({{"rc": rc, "native_read": calls == [1],
                  "loaded": sorted(m for m in ("pandas", "pyarrow.compute", "numpy.ma")
                                   if m in sys.modules)}}))
"""


def test_native_simulate_out_loads_no_pandas_arrow_compute_or_numpy_ma(tmp_path: Path) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} {10 * i} -1 {30 + i} 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 40)))
    out = tmp_path / "out"
    args = ["simulate", str(trace), "--dispatcher", "easy", "--engine", "native",
            "--out", str(out)]
    done = subprocess.run([sys.executable, "-c", _PROBE.format(args=args)],
                          capture_output=True, text=True, check=True)
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts == {"rc": 0, "native_read": True, "loaded": []}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "native" and summary["jobs"] == 39


def test_the_loaded_modules_are_frozen_during_a_command_only(tmp_path: Path,
                                                             monkeypatch) -> None:
    """While a command runs, the objects of the modules it loaded are out of the garbage
    collector's way (``gc.freeze``: each collection of the run, e.g. the three of
    ``release_free_memory``, skips them); when it ends they are unfrozen."""
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n" + "".join(
        f"{i} {10 * i} -1 30 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 9)))
    frozen: list[int] = []
    release = memory.release_free_memory

    def spy() -> None:
        frozen.append(gc.get_freeze_count())
        release()

    for module in ("dispatchlab.cli.simulate", "dispatchlab.run.outputs",
                   "dispatchlab.run.build"):
        monkeypatch.setattr(f"{module}.release_free_memory", spy, raising=False)
    assert main(["simulate", str(trace), "--out", str(tmp_path / "out")]) == 0
    assert frozen and min(frozen) > 10_000
    assert gc.get_freeze_count() == 0
    assert main(["simulate", str(tmp_path / "missing.swf")]) == 2  # an error: unfrozen too
    assert gc.get_freeze_count() == 0


_EXIT_PROBE = """
import atexit, sys
atexit.register(lambda: print("teardown", file=sys.stderr))
sys.argv = ["dispatchlab"] + {args!r}
from dispatchlab.cli import run
run()
"""


def test_the_program_ends_simulate_without_teardown_and_others_with_it(tmp_path: Path) -> None:
    """``dispatchlab`` (``run``): after ``simulate`` the process ends at once (no atexit
    handler runs) with every line of its output flushed into a pipe and its status;
    after another command, or a mistake in one, as usual (status kept)."""
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} {10 * i} -1 {30 + i} 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 40)))

    def program(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _EXIT_PROBE.format(args=list(args))],
                              capture_output=True, text=True)

    done = program("simulate", str(trace), "--dispatcher", "easy", "--by", "user")
    assert done.returncode == 0 and "teardown" not in done.stderr
    # its last printed part, the fairness lines, reached the pipe
    assert "mean wait" in done.stdout and "fairness:" in done.stdout
    missing = program("simulate", str(tmp_path / "missing.swf"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")
    assert "teardown" not in missing.stderr
    other = program("platform", "show", "eurora")
    assert other.returncode == 0 and other.stderr.strip().endswith("teardown")


_IMPORT_PROBE = """
import json, sys, threading
from dispatchlab.cli import main

class Record:
    threads = []
    def find_spec(self, name, path=None, target=None):
        if name == "rich.console":
            self.threads.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Record())
import dispatchlab.cli.simulate as simulate
rendered = []
render = simulate._render_once
simulate._render_once = lambda: rendered.append(threading.current_thread().name) or render()
rc = main({args!r})
alive = [t.name for t in threading.enumerate() if t.name == "dispatchlab-import"]
print(json.dumps({{"rc": rc, "imported_by": Record.threads, "rendered_by": rendered,
                  "alive": alive}}))
"""


#: The README's dispatcher written in Python (run natively through the View, timed).
EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "custom_dispatcher.py")


@pytest.mark.parametrize("options, thread", [
    (("--dispatcher", "easy", "--engine", "native"), "dispatchlab-import"),
    (("--dispatcher", "easy", "--engine", "python"), "MainThread"),
    (("--dispatcher", f"{EXAMPLE}:WidestFirst", "--engine", "native"), "MainThread"),
    (("--dispatcher", "easy", "--engine", "native", "--out", "OUT"), "MainThread"),
])
def test_simulate_imports_rich_while_a_native_run_goes_on(tmp_path: Path, options,
                                                          thread: str) -> None:
    """On a native run of a native dispatcher, the printing modules are imported, and
    a first table rendered to memory, by a thread started before the run (the core
    runs without the GIL), joined when the run ends: none is left going on. A run on
    Python, or of a dispatcher written in Python, times its dispatcher calls, and the
    files of ``--out`` are the command's peak of memory: no thread then."""
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} {10 * i} -1 {30 + i} 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 40)))
    args = ["simulate", str(trace), *(str(tmp_path / o) if o == "OUT" else o
                                      for o in options)]
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE.format(args=args)],
                          capture_output=True, text=True, check=True)
    facts = json.loads(done.stdout.splitlines()[-1])
    threaded = thread == "dispatchlab-import"
    assert facts == {"rc": 0, "imported_by": [thread],
                     "rendered_by": ["dispatchlab-import"] if threaded else [],
                     "alive": []}
