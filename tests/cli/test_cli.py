"""The ``dispatchlab`` command line, run in a subprocess on small SWF files.

Every user mistake must end with exactly one ``error: ...`` line on stderr, exit status 2
and no traceback; the message names the file, line and field (or the option) at fault.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

# ------------------------------------------------------------------------------ helpers

#: (submit, run, procs, requested time, user) of the small trace; 8 cores (MaxProcs).
#: Job 9 has no requested time (-1); the largest requested time in the file is 400.
JOBS: tuple[tuple[int, int, int, int, int], ...] = (
    (0, 100, 2, 200, 1),
    (10, 50, 4, 100, 2),
    (20, 300, 8, 400, 1),
    (30, 20, 1, 60, 3),
    (40, 80, 2, 100, 2),
    (50, 10, 6, 30, 1),
    (60, 5, 1, 10, 4),
    (70, 200, 3, 250, 2),
    (80, 40, 2, -1, 1),
    (90, 60, 5, 90, 3),
)
HEADER = ("; Version: 2.2", "; MaxProcs: 8", "; MaxRuntime: 3600")
#: 1-based line of the first job line in a file written with HEADER.
FIRST_JOB_LINE = len(HEADER) + 1

JOB_COLUMNS = (
    "job_id", "submit", "start", "end", "wait", "run", "requested_time", "procs", "user",
    "status", "estimate",
)
SUMMARY_KEYS = (
    "jobs", "rejected", "dropped", "estimate_fallbacks", "cores", "events", "mean_wait",
    "mean_slowdown", "mean_bsld", "makespan", "utilization", "wall_seconds",
)
DISPATCHERS = ("fifo", "sjf", "ljf", "easy", "conservative")


def swf_line(job_id: int, submit: int, run: int, procs: int, req_time: int, user: int = 1,
             *, wait: int = -1) -> str:
    """An 18-field SWF job line (requested and allocated processors both ``procs``)."""
    fields = [job_id, submit, wait, run, procs, -1, -1, procs, req_time, -1, 1, user, 1, -1,
              1, -1, -1, -1]
    return " ".join(str(v) for v in fields)


def job_lines(jobs: Iterable[tuple[int, int, int, int, int]] = JOBS) -> list[str]:
    return [swf_line(k, *job) for k, job in enumerate(jobs, start=1)]


def write_swf(path: Path, lines: Sequence[str] | None = None,
              header: Sequence[str] = HEADER) -> Path:
    body = list(header) + (job_lines() if lines is None else list(lines))
    path.write_text("\n".join(body) + "\n")
    return path


def run_cli(*args: object, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dispatchlab.cli", *map(str, args)],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
    )


def assert_ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\n" \
                                 f"stderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr


def assert_user_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, exactly one stderr line starting with ``error:``, no traceback; every
    needle appears in that line. Returns the line."""
    lines = proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{proc.stderr}"
    line = lines[0]
    assert line.startswith("error:"), line
    assert proc.returncode == 2, f"exit {proc.returncode}: {line}"
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


def read_jobs(out: Path) -> dict[str, list]:
    return pq.read_table(out / "jobs.parquet").to_pydict()


def read_summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def max_in_use(start: Sequence[int], end: Sequence[int], procs: Sequence[int]) -> int:
    """Peak cores in use; at equal times ends are processed before starts."""
    events = [(e, 0, -p) for s, e, p in zip(start, end, procs, strict=True) if s >= 0]
    events += [(s, 1, p) for s, p in zip(start, procs, strict=True) if s >= 0]
    in_use = peak = 0
    for _t, _kind, delta in sorted(events):
        in_use += delta
        peak = max(peak, in_use)
    return peak


def backfilled(submit: Sequence[int], start: Sequence[int]) -> bool:
    """True when some job started before a job submitted earlier (overtaking)."""
    order = sorted(range(len(submit)), key=lambda i: (submit[i], i))
    latest = -1
    for i in order:
        if start[i] < 0:
            continue
        if start[i] < latest:
            return True
        latest = max(latest, start[i])
    return False


# ------------------------------------------------------------------ simulate: good runs


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_simulate_writes_jobs_and_summary(tmp_path: Path, dispatcher: str) -> None:
    trace = write_swf(tmp_path / "small.swf")
    out = tmp_path / "out"
    proc = run_cli("simulate", trace, "--dispatcher", dispatcher, "--out", out)
    assert_ok(proc)
    assert "small.swf" in proc.stdout
    assert not (out / "jobs.csv").exists()  # only with --csv

    table = read_jobs(out)
    for col in JOB_COLUMNS:
        assert col in table, f"column {col} missing from jobs.parquet"
    n = len(JOBS)
    assert len(table["job_id"]) == n
    assert sorted(table["job_id"]) == list(range(1, n + 1))
    assert set(table["status"]) == {"completed"}
    by_id = {jid: k for k, jid in enumerate(table["job_id"])}
    for jid, (submit, run, procs, req, user) in enumerate(JOBS, start=1):
        k = by_id[jid]
        assert table["submit"][k] == submit
        assert table["procs"][k] == procs
        assert table["user"][k] == user
        assert table["start"][k] >= submit
        assert table["end"][k] - table["start"][k] == run == table["run"][k]
        assert table["wait"][k] == table["start"][k] - submit
        expected_req = 3600 if req == -1 else req  # MaxRuntime fallback
        assert table["requested_time"][k] == expected_req == table["estimate"][k]
    assert max_in_use(table["start"], table["end"], table["procs"]) <= 8

    summary = read_summary(out)
    for key in SUMMARY_KEYS:
        assert key in summary, f"summary.json lacks {key!r}"
    assert summary["jobs"] == n
    assert summary["rejected"] == 0
    assert summary["dropped"] == {}
    assert summary["cores"] == 8
    assert summary["estimate_fallbacks"] == 1
    waits = table["wait"]
    assert summary["mean_wait"] == pytest.approx(sum(waits) / n)
    assert summary["makespan"] == max(table["end"]) - min(table["submit"])
    work = sum(r * p for _s, r, p, _q, _u in JOBS)
    assert summary["utilization"] == pytest.approx(work / (8 * summary["makespan"]))
    assert 0 < summary["utilization"] <= 1
    assert summary["mean_slowdown"] >= 1 and summary["mean_bsld"] >= 1
    assert summary["events"] > 0 and summary["wall_seconds"] > 0


def test_simulate_csv_also_writes_jobs_csv(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "small.swf")
    out = tmp_path / "out"
    assert_ok(run_cli("simulate", trace, "--dispatcher", "easy", "--out", out, "--csv"))
    assert (out / "jobs.parquet").is_file() and (out / "summary.json").is_file()
    csv = pacsv.read_csv(out / "jobs.csv").to_pydict()
    parquet = read_jobs(out)
    for col in JOB_COLUMNS:
        assert col in csv
    assert csv["job_id"] == parquet["job_id"]
    assert csv["start"] == parquet["start"]
    assert csv["status"] == parquet["status"]


def test_simulate_without_out_prints_the_table(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "small.swf")
    proc = run_cli("simulate", trace, "--dispatcher", "fifo")
    assert_ok(proc)
    assert "fifo" in proc.stdout and "mean wait" in proc.stdout
    assert not list(tmp_path.glob("*.parquet"))


# ------------------------------------------------------------ simulate: bad trace files


def malformed_count_file(tmp_path: Path) -> tuple[Path, int]:
    """Job 4 has 16 fields instead of 18; returns (path, its 1-based line)."""
    lines = job_lines()
    lines[3] = " ".join(lines[3].split()[:16])
    return write_swf(tmp_path / "fields.swf", lines), FIRST_JOB_LINE + 3


def non_numeric_file(tmp_path: Path) -> tuple[Path, int]:
    """Job 3 has ``abc`` in field 4 (run time); returns (path, its 1-based line)."""
    lines = job_lines()
    parts = lines[2].split()
    parts[3] = "abc"
    lines[2] = " ".join(parts)
    return write_swf(tmp_path / "nan.swf", lines), FIRST_JOB_LINE + 2


def test_wrong_field_count_names_file_line_and_field(tmp_path: Path) -> None:
    trace, line = malformed_count_file(tmp_path)
    assert line == 7
    msg = assert_user_error(run_cli("simulate", trace), f"{trace}:{line}:", "fields.swf")
    # the first missing field is the 17th
    assert re.search(r"field 17\b", msg), msg
    assert "16" in msg and "18" in msg  # says how many fields there are and should be


def test_non_numeric_value_names_line_and_field(tmp_path: Path) -> None:
    trace, line = non_numeric_file(tmp_path)
    msg = assert_user_error(run_cli("simulate", trace), f"{trace}:{line}:", "abc")
    assert re.search(r"field 4\b", msg), msg


def test_trace_info_reports_malformed_lines_too(tmp_path: Path) -> None:
    trace, line = non_numeric_file(tmp_path)
    msg = assert_user_error(run_cli("trace", "info", trace), f"{trace}:{line}:")
    assert re.search(r"field 4\b", msg), msg


@pytest.mark.parametrize("make", [malformed_count_file, non_numeric_file],
                         ids=["field-count", "non-numeric"])
def test_lenient_skips_and_counts_malformed_lines(tmp_path: Path, make) -> None:
    trace, _line = make(tmp_path)
    out = tmp_path / "out"
    proc = run_cli("simulate", trace, "--lenient", "--out", out)
    assert_ok(proc)
    assert "malformed lines skipped: 1" in proc.stdout
    summary = read_summary(out)
    assert summary["malformed_skipped"] == 1
    assert summary["jobs"] == len(JOBS) - 1
    assert len(read_jobs(out)["job_id"]) == len(JOBS) - 1


def test_empty_file(tmp_path: Path) -> None:
    trace = tmp_path / "empty.swf"
    trace.write_text("")
    assert_user_error(run_cli("simulate", trace), str(trace), "no job")


def test_comments_only_file(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "comments.swf", [], header=(*HEADER, "; nothing else"))
    assert_user_error(run_cli("simulate", trace), str(trace), "no job")


def test_missing_file(tmp_path: Path) -> None:
    trace = tmp_path / "missing.swf"
    assert_user_error(run_cli("simulate", trace), str(trace), "no such file")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    trace = tmp_path / "folder.swf"
    trace.mkdir()
    assert_user_error(run_cli("simulate", trace), str(trace), "directory")


def test_gz_name_without_gzip_content(tmp_path: Path) -> None:
    trace = tmp_path / "plain.swf.gz"
    trace.write_text("this is not gzip\n")
    assert_user_error(run_cli("simulate", trace), str(trace), "gzip")


def test_truncated_gzip(tmp_path: Path) -> None:
    import gzip

    full = gzip.compress(("\n".join([*HEADER, *job_lines()]) + "\n").encode() * 20)
    trace = tmp_path / "cut.swf.gz"
    trace.write_bytes(full[: len(full) // 2])
    assert_user_error(run_cli("simulate", trace), str(trace), "gzip")


def one_job_file(tmp_path: Path, index: int, value: str) -> Path:
    """A one-job trace whose 0-based field ``index`` holds ``value`` (line 2)."""
    parts = swf_line(1, 0, 100, 2, 200).split()
    parts[index] = value
    return write_swf(tmp_path / "one.swf", [" ".join(parts)], header=("; MaxProcs: 8",))


def test_integer_at_or_above_2_pow_53_is_an_error(tmp_path: Path) -> None:
    trace = one_job_file(tmp_path, 3, str(2**53 + 1))
    msg = assert_user_error(run_cli("simulate", trace), f"{trace}:2:")
    assert re.search(r"field 4\b", msg), msg


def test_exponent_at_or_above_2_pow_53_is_an_error(tmp_path: Path) -> None:
    trace = one_job_file(tmp_path, 3, "1e16")
    msg = assert_user_error(run_cli("simulate", trace), f"{trace}:2:", "out of range")
    assert re.search(r"field 4\b", msg), msg


@pytest.mark.parametrize(("index", "name"), [(1, "field 2 (submit)"),
                                           (8, "field 9 (req_time)")])
def test_times_too_large_for_the_engine(tmp_path: Path, index: int, name: str) -> None:
    # refused where the reader reads it (sim.limits), naming the line and the field
    trace = one_job_file(tmp_path, index, "9000000000000")
    assert_user_error(run_cli("simulate", trace), f"{trace}:2:", name,
                      "beyond the engine's time limit")


def test_unknown_trace_format(tmp_path: Path) -> None:
    trace = tmp_path / "jobs.txt"
    trace.write_text("job one\njob two\n")
    assert_user_error(run_cli("simulate", trace), str(trace), "unknown trace format",
                      ".swf", "--format")


def test_format_by_content(tmp_path: Path) -> None:
    """SWF lines in a file without the .swf name are read as SWF (content decides);
    --format names the format explicitly; a wrong --format is refused with a hint."""
    trace = tmp_path / "jobs.txt"
    trace.write_text("; MaxProcs: 64\n" + "\n".join(job_lines()) + "\n")
    assert_ok(run_cli("simulate", trace))
    assert_ok(run_cli("simulate", trace, "--format", "swf"))
    assert_user_error(run_cli("simulate", trace, "--format", "slurm"), "--format",
                      "unknown format 'slurm'")
    assert_user_error(run_cli("simulate", trace, "--timezone", "UTC"), "--timezone",
                      "does not apply to swf traces")


# ------------------------------------------------------------------ simulate: bad options

# (option values, the option that must be named, the value as the message quotes it).
# The option is named as a field (``field --x:`` or ``field x:``) or, for click's own
# type checks, as ``'--x'``.
BAD_OPTIONS = [
    pytest.param(["--dispatcher", "foo"], "dispatcher", "'foo'", id="dispatcher"),
    pytest.param(["--predictor", "foo"], "predictor", "'foo'", id="predictor"),
    pytest.param(["--overrun", "maybe"], "overrun", "'maybe'", id="overrun"),
    pytest.param(["--tau", "-1"], "tau", "-1", id="tau-negative"),
    pytest.param(["--tau", "0"], "tau", "0", id="tau-zero"),
    pytest.param(["--tau", "abc"], "tau", "'abc'", id="tau-not-a-number"),
    pytest.param(["--reservations", "0"], "reservations", "0", id="reservations-0"),
    pytest.param(["--order", "backwards"], "order", "'backwards'", id="order"),
    pytest.param(["--allocator", "worst-fit"], "allocator", "'worst-fit'", id="allocator"),
    pytest.param(["--measure", "nonsense"], "measure", "'nonsense'", id="measure"),
    pytest.param(["--window", "5"], "window", "'5'", id="window"),
    pytest.param(["--window", "100:50"], "window", "(100, 50)", id="window-reversed"),
    pytest.param(["--jobs", "5"], "jobs", "'5'", id="jobs"),
    pytest.param(["--fraction", "middle:0.2"], "fraction", "'middle:0.2'", id="fraction"),
    pytest.param(["--fraction", "first:2"], "fraction", "2", id="fraction-range"),
    pytest.param(["--extra-fields", "maybe"], "extra-fields", "'maybe'", id="extra-fields"),
    pytest.param(["--nodes", "4"], "nodes", "--cores-per-node",
                 id="nodes-without-cores-per-node"),
    pytest.param(["--cores-per-node", "4"], "nodes", "--cores-per-node",
                 id="cores-per-node-without-nodes"),
    pytest.param(["--platform", "eurora", "--nodes", "2"], "platform", "--nodes",
                 id="platform-and-nodes"),
]


def names_option(msg: str, option: str) -> bool:
    return bool(re.search(rf"field (--)?{re.escape(option)}:", msg)) or f"'--{option}'" in msg


@pytest.mark.parametrize(("args", "option", "value"), BAD_OPTIONS)
def test_bad_option_value(tmp_path: Path, args: list[str], option: str, value: str) -> None:
    trace = write_swf(tmp_path / "small.swf")
    out = tmp_path / "out"
    msg = assert_user_error(run_cli("simulate", trace, *args, "--out", out), value)
    assert names_option(msg, option), f"the message does not name --{option}: {msg}"
    assert not out.exists()  # nothing written on a usage error


@pytest.mark.parametrize(
    ("args", "option", "dispatcher"),
    [
        (["--skip"], "skip", "easy"),
        (["--reservations", "2", "--dispatcher", "fifo"], "reservations", "fifo"),
        (["--order", "sjf", "--dispatcher", "sjf"], "order", "sjf"),
    ],
    ids=["skip-with-easy", "reservations-with-fifo", "order-with-sjf"],
)
def test_option_that_does_not_apply(tmp_path: Path, args: list[str], option: str,
                                    dispatcher: str) -> None:
    trace = write_swf(tmp_path / "small.swf")
    msg = assert_user_error(run_cli("simulate", trace, *args))
    assert names_option(msg, option), msg
    assert repr(dispatcher) in msg, msg


def test_missing_platform_file(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "small.swf")
    platform = tmp_path / "missing.toml"
    assert_user_error(run_cli("simulate", trace, "--platform", platform), str(platform),
                      "not found")


VALID_NODE = 'name = "a"\ncount = 2\ncapacity = { core = 4 }\n'


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        pytest.param('name = "x"\n[[node_type]\ncount = 2\n', ("TOML", "line 2"),
                     id="syntax-error"),
        pytest.param('[[node_type]]\nname = "a"\ncount = 0\ncapacity = { core = 4 }\n',
                     ("field node_type[0].count",), id="count-0"),
        pytest.param('[[node_type]]\nname = "a"\ncount = 2\ncapacity = { core = -4 }\n',
                     ("field node_type[0].capacity.core", "-4"), id="negative-capacity"),
        pytest.param(f"[[node_type]]\n{VALID_NODE}[[node_type]]\nname = \"b\"\ncount = 1\n"
                     "capacity = { core = 4 }\nspeed = 2\n",
                     ("field node_type[1]", "speed"), id="unknown-key"),
        pytest.param('name = "x"\n', ("node_type",), id="no-node-type"),
    ],
)
def test_invalid_platform_toml(tmp_path: Path, text: str, needles: tuple[str, ...]) -> None:
    trace = write_swf(tmp_path / "small.swf")
    platform = tmp_path / "bad.toml"
    platform.write_text(text)
    assert_user_error(run_cli("simulate", trace, "--platform", platform), str(platform),
                      *needles)


def test_platform_file_not_utf8(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "small.swf")
    platform = tmp_path / "latin1.toml"
    platform.write_bytes(b'name = "caf\xe9"\n[[node_type]]\n' + VALID_NODE.encode())
    assert_user_error(run_cli("simulate", trace, "--platform", platform), str(platform))


@pytest.mark.parametrize("capacity", ["{ core = 4 }", "{ core = 4, mem = 1000 }"],
                         ids=["core-only", "core-and-mem"])
def test_platform_toml_is_used(tmp_path: Path, capacity: str) -> None:
    trace = write_swf(tmp_path / "small.swf")
    platform = tmp_path / "two.toml"
    platform.write_text(f'name = "two"\n[[node_type]]\nname = "a"\ncount = 2\n'
                        f"capacity = {capacity}\n")
    out = tmp_path / "out"
    proc = run_cli("simulate", trace, "--platform", platform, "--out", out)
    assert_ok(proc)
    assert "2 x a" in proc.stdout
    summary = read_summary(out)
    assert summary["cores"] == 8 and summary["jobs"] == len(JOBS)
    table = read_jobs(out)
    assert max_in_use(table["start"], table["end"], table["procs"]) <= 8
    if "mem" not in capacity:
        # core-only platform and one core per unit: placement is not simulated
        assert set(table["allocation"]) == {None}
        return
    # node-level run: every job has an allocation "node:units,..." over nodes 0 and 1
    per_node: dict[int, list[int]] = {0: [0] * len(JOBS), 1: [0] * len(JOBS)}
    for k, (alloc, procs) in enumerate(zip(table["allocation"], table["procs"], strict=True)):
        parts = [p.split(":") for p in alloc.split(",")]
        assert {int(node) for node, _ in parts} <= {0, 1}
        assert sum(int(units) for _, units in parts) == procs
        for node, units in parts:
            per_node[int(node)][k] = int(units)
    for units in per_node.values():  # no node ever holds more than its 4 cores
        assert max_in_use(table["start"], table["end"], units) <= 4


# ------------------------------------------------------- rejection and estimate fallback


def test_job_too_big_for_the_platform_is_rejected(tmp_path: Path) -> None:
    jobs = list(JOBS)
    jobs[1] = (10, 50, 16, 100, 2)  # job 2 asks for 16 processors, MaxProcs is 8
    trace = write_swf(tmp_path / "big.swf", job_lines(jobs))
    out = tmp_path / "out"
    proc = run_cli("simulate", trace, "--out", out)
    assert_ok(proc)
    assert "rejected (cannot fit the platform): 1" in proc.stdout

    table = read_jobs(out)
    assert len(table["job_id"]) == len(JOBS)  # the rejected job is kept in the output
    k = table["job_id"].index(2)
    assert table["status"][k] == "rejected"
    assert table["start"][k] == -1 and table["end"][k] == -1
    assert table["reject_reason"][k] and "16" in table["reject_reason"][k]
    others = [s for j, s in enumerate(table["status"]) if j != k]
    assert set(others) == {"completed"}
    assert all(r is None for j, r in enumerate(table["reject_reason"]) if j != k)

    summary = read_summary(out)
    assert summary["rejected"] == 1
    assert summary["rejected_total"] == 1
    assert summary["jobs"] == len(JOBS) - 1


@pytest.mark.parametrize(
    ("header", "expected", "source"),
    [
        pytest.param(HEADER, 3600, "MaxRuntime", id="max-runtime-header"),
        pytest.param(("; MaxProcs: 8",), 400, "max requested time", id="largest-in-file"),
    ],
)
def test_requested_time_minus_one_fallback(tmp_path: Path, header: tuple[str, ...],
                                           expected: int, source: str) -> None:
    trace = write_swf(tmp_path / "fallback.swf", header=header)
    out = tmp_path / "out"
    proc = run_cli("simulate", trace, "--out", out)
    assert_ok(proc)
    assert f"requested time -1 replaced for 1 jobs ({source})" in proc.stdout
    table = read_jobs(out)
    k = table["job_id"].index(9)  # the job with requested time -1
    assert table["requested_time"][k] == expected
    assert table["estimate"][k] == expected
    others = [r for j, r in enumerate(table["requested_time"]) if j != k]
    assert others == [req for _s, _r, _p, req, _u in JOBS if req != -1]
    summary = read_summary(out)
    assert summary["estimate_fallbacks"] == 1
    assert summary["estimate_fallback_source"] == source


# ---------------------------------------------------------------- other commands


def test_trace_info_prints_header_facts(tmp_path: Path) -> None:
    trace = write_swf(tmp_path / "small.swf")
    proc = run_cli("trace", "info", trace)
    assert_ok(proc)
    assert re.search(r"MaxProcs\s*│\s*8\b", proc.stdout), proc.stdout
    assert "MaxRuntime" in proc.stdout
    assert re.search(r"jobs\s*│\s*10\b", proc.stdout)


@pytest.mark.parametrize("args", [["--help"], [], ["-h"], ["simulate", "--help"],
                                  ["trace", "--help"]],
                         ids=["help", "no-args", "h", "simulate-help", "trace-help"])
def test_help(args: list[str]) -> None:
    proc = run_cli(*args)
    assert_ok(proc)
    assert proc.stdout.startswith("Usage: dispatchlab")
    assert proc.stderr == ""


def test_installed_console_script() -> None:
    script = Path(sys.executable).with_name("dispatchlab")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable}")
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert_ok(proc)
    assert "simulate" in proc.stdout and "demo" in proc.stdout


def test_demo() -> None:
    proc = run_cli("demo", "--jobs", "300")
    assert_ok(proc)
    for name in ("fifo", "sjf", "easy", "conservative"):
        # one column per run: the names head the table
        assert re.search(rf"┃\s+{name}\s+┃", proc.stdout), f"{name} missing:\n{proc.stdout}"
    assert "300 jobs" in proc.stdout
    # the runs go through the run layer (engine auto): the compiled core runs all six
    assert ("engine: native for fifo, sjf, easy, easy-sjbf, conservative, easy (real run "
            "times)") in " ".join(proc.stdout.split()), proc.stdout


def test_demo_bad_value() -> None:
    msg = assert_user_error(run_cli("demo", "--jobs", "0"), "0")
    assert "jobs" in msg


# ---------------------------------------------------------------------- determinism


def synthetic_swf(path: Path, n: int = 400, cores: int = 64, seed: int = 20240611) -> Path:
    """A contended synthetic trace: offered load about 1.2 on ``cores`` pooled cores."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(250.0, n)).astype(np.int64)
    procs = rng.choice([1, 2, 4, 8, 16, 32, 64], size=n,
                       p=[0.25, 0.2, 0.15, 0.15, 0.1, 0.1, 0.05])
    run = rng.integers(10, 3600, n)
    req = np.ceil(run * rng.uniform(1.0, 3.0, n)).astype(np.int64)
    user = rng.integers(1, 20, n)
    lines = [swf_line(k + 1, int(submit[k]), int(run[k]), int(procs[k]), int(req[k]),
                      int(user[k])) for k in range(n)]
    return write_swf(path, lines, header=(f"; MaxProcs: {cores}",))


#: summary keys that measure wall-clock time (they differ between runs)
TIMING = re.compile(r"seconds|decision_time")


def run_twice(trace: Path, tmp_path: Path, *args: str) -> tuple[Path, Path]:
    outs = []
    for seed in ("1", "12345"):
        out = tmp_path / f"out-{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        assert_ok(run_cli("simulate", trace, *args, "--out", out, env=env))
        outs.append(out)
    return outs[0], outs[1]


def assert_same_outputs(a: Path, b: Path) -> None:
    assert (a / "jobs.parquet").read_bytes() == (b / "jobs.parquet").read_bytes()
    sa, sb = read_summary(a), read_summary(b)
    assert {k: v for k, v in sa.items() if not TIMING.search(k)} == \
        {k: v for k, v in sb.items() if not TIMING.search(k)}


@pytest.mark.parametrize("dispatcher", ["easy", "conservative"])
def test_parquet_is_deterministic_across_hash_seeds(tmp_path: Path, dispatcher: str) -> None:
    trace = synthetic_swf(tmp_path / "synthetic.swf")
    a, b = run_twice(trace, tmp_path, "--dispatcher", dispatcher)
    assert_same_outputs(a, b)
    table = read_jobs(a)
    assert len(table["job_id"]) == 400
    assert backfilled(table["submit"], table["start"]), "no backfilling: not enough contention"
    assert max_in_use(table["start"], table["end"], table["procs"]) <= 64


def test_kth_easy_is_deterministic_across_hash_seeds(tmp_path: Path, kth_trace: Path) -> None:
    a, b = run_twice(kth_trace, tmp_path, "--dispatcher", "easy")
    assert_same_outputs(a, b)
    assert read_summary(a)["jobs"] == 28475
