"""The whole ``simulate`` command on the native path loads only what it needs (issue 31,
lean start-up): no pandas, no ``pyarrow.compute``, no ``numpy.ma``, and the Python
engine's dispatchers are not run; the trace is read by the compiled SWF parser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
