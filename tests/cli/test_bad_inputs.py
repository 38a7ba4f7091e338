"""Bad inputs through the command line: each ends in exactly one ``error:`` line naming
the file (and line, field where there is one), exit status 2, no traceback, and leaves
no output behind (every file of the folder as it was: a damaged database untouched).

One table (:data:`CASES`): the files a case writes, the command, the expected line (a
regular expression matched from the start of the line, after ``error:``). Then the few
small ones that are not errors (an output folder with a colon, epoch times without
separators) and the library checks behind some rows.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.powercap.capped import EasyPC
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor

# a tiny trace: 6 jobs on 8 cores, with a Unix start time
TRACE = "; UnixStartTime: 843480031\n; MaxProcs: 8\n" + "".join(
    f"{k} {10 * k} 0 {50 + k} {1 + k % 4} -1 -1 {1 + k % 4} 100 -1 1 {k % 3 + 1} 1 -1 1 -1 -1 -1\n"
    for k in range(1, 7))
POWER_CSV = "job_id,power_mean,power_max,power_std\n" + "".join(
    f"{k},{100 + k}.0,{120 + k}.0,5.0\n" for k in range(1, 7))
SIM = ["simulate", "t.swf"]
CAPPED = [*SIM, "--power", "p.csv", "--dispatcher", "easy-pc", "--power-predictor", "real"]
HUGE = "9" * 5000  # beyond Python's 4,300-digit int parsing limit

CAMPAIGN = """\
[campaign]
name = "bad"
seeds = [1]
tau = 10.0
database = "results.duckdb"
[[traces]]
label = "lublin"
generate = "lublin"
jobs = 20
machine_size = 16
[[platforms]]
label = "pool"
cores = 16
[[dispatchers]]
name = "fifo"
"""

OWN_CLASS = """\
from dispatchlab.dispatch import EASY


class Patient(EASY):
    def __init__(self, max_wait: int = 3600, order: str = "fifo"):
        super().__init__(order=order)
        self.max_wait = max_wait
"""


def _platform(count: object, core: object) -> str:
    return f'[[node_type]]\nname = "n"\ncount = {count}\ncapacity = {{ core = {core} }}\n'


def _model(lo0: str) -> str:
    """An l2r ranksvm model file whose first ``lo`` value is ``lo0`` (JSON text)."""
    return ('{"format": "dispatchlab-l2r-model", "version": 1, "feature_set": "causal", '
            '"features": ["requested", "processors", "user_last2_run", "hour_of_day", '
            f'"log_area"], "lo": [{lo0}, 0, 0, 0, 0], "hi": [1, 1, 1, 1, 1], '
            '"learner": "ranksvm", "coef": [1, 1, 1, 1, 1], "booster": null, '
            '"summary": {}}')


def _power_parquet() -> bytes:
    at = pa.table({"job_id": list(range(1, 7)), "power_mean": [100.0] * 6,
                   "power_max": [120.0] * 6, "power_std": [5.0] * 6})
    sink = pa.BufferOutputStream()
    pq.write_table(at, sink)
    return sink.getvalue().to_pybytes()


def _corrupt_parquet() -> bytes:
    """A power Parquet whose first page header is overwritten: pyarrow's error is
    several lines with a control character."""
    data = bytearray(_power_parquet())
    data[4:12] = b"\xff" * 8
    return bytes(data)


def _damaged_database(path: Path) -> None:
    """A results database cut to 30 % of its size (a copy interrupted)."""
    from dispatchlab.experiment.campaign import store

    store.open_write(path).close()
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.3)])


def _sacct(line: int, change: Callable[[str], str]) -> bytes:
    """The sacct export of test_sacct with its record ``line`` (1: the first after the
    header) changed, as Latin-1 bytes (a stray byte is then not UTF-8)."""
    from test_sacct import EXPORT_2302

    lines = list(EXPORT_2302)
    lines[line] = change(lines[line])
    return ("\n".join(lines) + "\n").encode("latin-1")


def _pbs(old: str, new: str) -> str:
    """The Torque log of test_pbs with ``old`` replaced by ``new`` in its E record."""
    from test_pbs import TORQUE_LOG

    return "\n".join([*TORQUE_LOG[:2], TORQUE_LOG[2].replace(old, new)]) + "\n"


Files = dict[str, str | bytes | Callable[[Path], None]]

#: (case id, files written in the folder, command, expected error line)
CASES: list[tuple[str, Files, list[str], str]] = [
    # --- cap schedules (item 1)
    ("cap-not-utf8", {"cap.txt": b"0;4000\n\xe9;3000\n"}, [*CAPPED, "--cap-file", "cap.txt"],
     r"cap\.txt:2: not UTF-8 text \(byte 0xe9\)"),
    ("cap-time-1e15", {"cap.txt": "0;4000\n1000000000000000;3000\n"},
     [*CAPPED, "--cap-file", "cap.txt"],
     r"cap\.txt:2: field time: a step at time 1,000,000,000,000,000 s is beyond the "
     r"engine's time limit \(4,398,046,511,103 s"),
    ("cap-time-2^62", {"cap.txt": f"0;1\n{2**62};3000000\n"},
     [*CAPPED, "--cap-file", "cap.txt"],
     r"cap\.txt:2: field time: a step at time 4,611,686,018,427,387,904 s is beyond the "
     r"engine's time limit"),
    # --- platform TOML bounds (item 1)
    ("platform-count-2^63", {"plat.toml": _platform(2**63, 4)},
     [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: field node_type\[0\]\.count: node type 'n': count must be an integer "
     r"from 1 to 1,048,576, got 9223372036854775808"),
    ("platform-count-4e9", {"plat.toml": _platform(4_000_000_000, 4)},
     [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: field node_type\[0\]\.count: .*got 4000000000$"),
    ("platform-capacity-1e20", {"plat.toml": _platform(4, "99999999999999999999")},
     [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: field node_type\[0\]\.capacity\.core: node type 'n': must be an integer "
     r"from 0 to 1,099,511,627,776, got 99999999999999999999"),
    ("platform-capacity-wraps", {"plat.toml": _platform(4, 2**63 - 1)},
     [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: field node_type\[0\]\.capacity\.core: .*got 9223372036854775807$"),
    ("platform-capacity-0", {"plat.toml": _platform(4, 0)}, [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: field node_type\[0\]\.capacity: node type 'n': every capacity is 0"),
    # --- integers of more than 4,300 digits; a 400-digit number in a model (item 1)
    ("platform-5000-digits", {"plat.toml": _platform(HUGE, 4)},
     [*SIM, "--platform", "plat.toml"],
     r"plat\.toml: holds an integer of more than 4,300 digits"),
    ("campaign-5000-digits", {"c.toml": CAMPAIGN.replace("seeds = [1]", f"seeds = [{HUGE}]")},
     ["campaign", "run", "c.toml"], r"c\.toml: holds an integer of more than 4,300 digits"),
    ("l2r-5000-digits", {"t.swf": TRACE, "m.json": _model(HUGE)},
     ["l2r", "evaluate", "t.swf", "--model", "m.json"],
     r"m\.json: holds an integer of more than 4,300 digits"),
    ("l2r-400-digits", {"t.swf": TRACE, "m.json": _model("9" * 400)},
     ["l2r", "evaluate", "t.swf", "--model", "m.json"],
     r"m\.json: field lo: 'lo' holds a number beyond a float's range"),
    # --- power files (item 1)
    ("power-std-1e160", {"p.csv": POWER_CSV.replace("101.0,121.0,5.0", "101.0,121.0,1e160")},
     [*CAPPED, "-D", "check=max", "--cap", "50kW"],
     r"p\.csv:2: field power_std: absurdly large \(above 1e\+09 W\): 1e\+160 W"),
    ("power-garbage-csv", {"p.csv": bytes(range(256)) * 3}, [*SIM, "--power", "p.csv"],
     r"p\.csv: not a power file: binary data"),
    ("power-corrupt-parquet", {"p.parquet": _corrupt_parquet()},
     [*SIM, "--power", "p.parquet"], r"p\.parquet: cannot read Parquet: .*thrift.*"),
    # --- a damaged results database (item 1)
    ("database-damaged-run", {"c.toml": CAMPAIGN, "results.duckdb": _damaged_database},
     ["campaign", "run", "c.toml"],
     r"results\.duckdb: the results database is damaged \(truncated or corrupt: .*\); it was "
     r"left untouched"),
    ("database-damaged-status", {"c.toml": CAMPAIGN, "results.duckdb": _damaged_database},
     ["campaign", "status", "c.toml"], r"results\.duckdb: the results database is damaged"),
    # --- campaign values that would fail every run (item 3)
    ("campaign-seed-1e20",
     {"c.toml": CAMPAIGN.replace("seeds = [1]", "seeds = [99999999999999999999]")},
     ["campaign", "run", "c.toml"],
     r"c\.toml: field seeds: run lublin/pool/fifo/walltime/99999999999999999999/rep0 cannot "
     r"run: a seed must be an integer from 0 to 9223372036854775807"),
    ("campaign-cores-1e20",
     {"c.toml": CAMPAIGN.replace("cores = 16", "cores = 99999999999999999999")},
     ["campaign", "run", "c.toml"],
     r"c\.toml: field platforms: run .* cannot run: platform 'pool': .*must be an integer "
     r"from 0 to 1,099,511,627,776, got 99999999999999999999"),
    ("campaign-tau-inf", {"c.toml": CAMPAIGN.replace("tau = 10.0", "tau = inf")},
     ["campaign", "run", "c.toml"],
     r"c\.toml: field tau: tau must be > 0 seconds, got inf"),
    # --- readers: what the fuzzer found at 2,000 mutations per reader
    ("swf-lenient-every-line-bad", {"bad.swf": TRACE.replace(" 100 -1 1 ", " 100 " + "9" * 20
                                                            + " 1 ")},
     ["trace", "info", "bad.swf", "--lenient"],
     r"bad\.swf: no jobs: the file has no job lines \(6 malformed lines skipped\)"),
    ("swf-time-beyond-limit", {"bad.swf": TRACE.replace("3 30 0 53", f"3 {2**42} 0 53")},
     ["trace", "info", "bad.swf"],
     r"bad\.swf:5: field 2 \(submit\): submit time 4,398,046,511,104 s is beyond the "
     r"engine's time limit"),
    ("sacct-bad-row-not-utf8", {"j.sacct": _sacct(2, lambda ln: ln + "|x\xe9")},
     ["trace", "info", "j.sacct"],
     r"j\.sacct:3: malformed record: 22 fields separated by '\|', the header names 21"),
    ("sacct-state-not-utf8", {"j.sacct": _sacct(1, lambda ln: ln.replace("COMPLETED",
                                                                         "COMPLETED\xe9"))},
     ["trace", "info", "j.sacct"], r"j\.sacct:2: field State: unknown job state: "
                                    r"'COMPLETED\ufffd'"),
    ("pbs-ctime-1e20", {"20240115": _pbs("ctime=1705312780", "ctime=" + "9" * 20)},
     ["trace", "info", "20240115"],
     r"20240115:3: field ctime: ctime 99,999,999,999,999,999,999 s is beyond the engine's "
     r"time limit"),
    ("pbs-walltime-5000-digits", {"20240115": _pbs("walltime=02:00:00", "walltime=" + HUGE)},
     ["trace", "info", "20240115"],
     r"20240115:3: field Resource_List\.walltime: Resource_List\.walltime 9{37}\.\.\. is "
     r"beyond the engine's time limit"),
    ("pbs-cput-days-beyond-limit",
     {"20240115": _pbs("resources_used.cput=03:30:00",
                       "resources_used.cput=99999999999999999:00:00:00")},
     ["trace", "info", "20240115"],
     r"20240115:3: field resources_used\.cput: .* is beyond the engine's time limit"),
    # --- small ones (item 6)
    ("own-class-typo", {"mydisp.py": OWN_CLASS, "c.toml": CAMPAIGN.replace(
        'name = "fifo"', 'name = "mydisp.py:Patient"\nparams = { max_wiat = 4 }')},
     ["campaign", "run", "c.toml"],
     r"c\.toml: field dispatchers\[0\]: dispatcher '.*mydisp\.py:Patient' has no parameter "
     r"'max_wiat' \(did you mean 'max_wait'\?\)"),
    ("naive-needs-max-power", {},
     ["power", "predict", "t.swf", "--power", "p.csv", "--power-predictors", "naive,history"],
     r"field power-predictor: the naive power predictor needs the platform's maximum node "
     r"power .*--platform marconi100"),
]


def _cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``dispatchlab ARGV`` in ``cwd``, importing this checkout's package."""
    import dispatchlab

    src = str(Path(dispatchlab.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *argv], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "dir" for p in folder.rglob("*")}


@pytest.mark.parametrize(("files", "argv", "expected"),
                         [pytest.param(f, a, e, id=i) for i, f, a, e in CASES])
def test_bad_input_is_one_error_line(tmp_path: Path, files: Files, argv: list[str],
                                     expected: str) -> None:
    base: Files = {"t.swf": TRACE, "p.csv": POWER_CSV}
    for name, content in {**base, **files}.items():
        path = tmp_path / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    before = _snapshot(tmp_path)
    proc = _cli(argv, tmp_path)
    # informative "note:" lines may come first; then one error line, nothing else
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("note: ")]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert re.match(expected, lines[0].removeprefix("error: ")), lines[0]
    assert proc.returncode == 2, (proc.returncode, lines[0])
    # nothing written, nothing changed (the damaged database left as it was)
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------ not errors


def test_out_folder_with_a_colon_is_a_local_path(tmp_path: Path) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    proc = _cli([*SIM, "--dispatcher", "easy", "--out", "out-easy:order=sjf"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out-easy:order=sjf"
    assert pq.read_table(out / "jobs.parquet").num_rows == 6


def test_trace_info_epoch_time_without_separators(tmp_path: Path) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    proc = _cli(["trace", "info", "t.swf"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"UnixStartTime\s*│\s*843480031\s", proc.stdout), proc.stdout


# ------------------------------------------------------------------ library


class _Predictions(PowerPredictor):
    """Per-row power predictions (mean, max, std)."""

    name = "rows"

    def __init__(self, rows=None) -> None:
        self.rows = rows

    def predict(self, job, now):
        return PowerPrediction(*self.rows[job])


def test_capped_dispatcher_ignores_a_deviation_its_check_does_not_use() -> None:
    # the max check never uses the deviation: a huge one (no reader refused it here)
    # changes nothing and is never squared into the shadow time's sums
    jobs = JobTable.from_arrays(submit=[0, 0, 0, 5], run=[100, 100, 100, 10],
                                units=[1, 1, 1, 1])
    rows = [(300.0, 500.0, 1e160)] * 4

    def starts(dispatcher):
        return Simulation(Platform.pooled(4), jobs, dispatcher,
                          power_predictor=_Predictions(rows),
                          cap=PowerCap.window(1000.0)).run().start.tolist()

    assert starts(EasyPC(check="max")) == [0, 0, 100, 100]


def test_a_run_checks_what_the_campaign_checked(tmp_path: Path) -> None:
    # the worker runs the same validation as load_campaign: a spec that escaped it (edited
    # by hand) fails with the same message
    from dispatchlab.experiment.campaign.config import load_campaign
    from dispatchlab.experiment.campaign.worker import execute_run

    (tmp_path / "c.toml").write_text(CAMPAIGN)
    spec = dict(load_campaign(tmp_path / "c.toml").runs[0])
    spec["tau"] = float("inf")
    out = execute_run(spec)
    assert out["status"] == "failed"
    assert out["error"] == "field tau: tau must be > 0 seconds, got inf"
    with pytest.raises(InputError, match="tau must be > 0 seconds, got inf"):
        load_campaign_with_tau(tmp_path, "inf")


def load_campaign_with_tau(folder: Path, tau: str):
    from dispatchlab.experiment.campaign.config import load_campaign

    path = folder / "tau.toml"
    path.write_text(CAMPAIGN.replace("tau = 10.0", f"tau = {tau}"))
    return load_campaign(path)


def test_power_file_values_beyond_a_job_are_refused(tmp_path: Path) -> None:
    from dispatchlab.power.data import MAX_JOB_WATTS, read_power_table

    path = tmp_path / "p.csv"
    path.write_text(POWER_CSV.replace("101.0,121.0", f"101.0,{MAX_JOB_WATTS * 2:g}"))
    with pytest.raises(InputError, match=r"p\.csv:2: field power_max: absurdly large"):
        read_power_table(path)
    path.write_text(POWER_CSV.replace("101.0,121.0", f"101.0,{MAX_JOB_WATTS:g}"))
    assert np.isclose(read_power_table(path)[1]["power_max"][0], MAX_JOB_WATTS)


def test_alea_machine_file_beyond_the_platform_bounds_names_the_file(tmp_path: Path) -> None:
    from dispatchlab.platform.alea import read_alea_machines

    path = tmp_path / "m.machines"
    path.write_text("0\tzewura\t4000000000\t80\t1\t529426432\n")  # 4e9 nodes: 32 GB
    with pytest.raises(InputError, match=r"m\.machines: field node_type\[0\]\.count: .*"
                                         r"count must be an integer from 1 to 1,048,576"):
        read_alea_machines(path)
