"""Time reading a Slurm ``sacct`` export against reading the same jobs as SWF.

Usage::

    python benchmarks/bench_sacct.py                  # 1,000,000 jobs, ISO times in UTC
    python benchmarks/bench_sacct.py --columns long   # 23 columns, text Timelimit
    python benchmarks/bench_sacct.py --jobs 200000 --times epoch --timezone Europe/Rome

The synthetic export has the shape of ``sacct --parsable2 --allusers`` of Slurm 23.02
(``ReqMem`` is the job's total, step lines have no user, limit, ``ReqMem`` or
``ReqTRES``), with the reader's recommended ``--format`` (20 columns, ``--columns
recommended``) or 23 columns including three the reader skips (``--columns long``):
each job line is followed by its ``.batch`` and ``.extern`` steps and, for half of the
jobs, a ``.0`` step (2.5 step lines per job); 10 % of the jobs are array tasks
(``JobID`` ``123_4``), 10 % ask for GPUs, 5 % were cancelled, 5 % timed out. Times are
ISO local times (sacct's default) or epoch seconds (``SLURM_TIME_FORMAT=%s``). The
same jobs are written as SWF with :func:`~dispatchlab.workload.swf.write_swf`. Each
read runs in a fresh Python process (best of ``--repeat``), so that its peak RSS
(``VmHWM``) is its own; both files are written to a temporary folder and deleted
afterwards.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: Column sets: ``recommended`` is the reader's documented ``--format``
#: (:data:`~dispatchlab.workload.sacct.SACCT_FORMAT`); ``long`` adds columns the reader
#: skips and has the text ``Timelimit`` instead of ``TimelimitRaw``.
FORMATS = {
    "recommended": (
        "JobID,JobIDRaw,JobName,User,Group,Account,QOS,Partition,Submit,Eligible,Start,End,"
        "State,AllocCPUS,ReqCPUS,NNodes,TimelimitRaw,ReqMem,ReqTRES,NodeList"
    ),
    "long": (
        "JobID,JobIDRaw,JobName,User,Group,Account,QOS,Partition,Submit,Eligible,Start,End,"
        "State,AllocCPUS,ReqCPUS,NNodes,Timelimit,ReqMem,ReqTRES,AllocTRES,NodeList,ExitCode,"
        "Elapsed"
    ),
}
T0 = 1_700_000_000
STATES = np.array(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 1234", "OUT_OF_MEMORY"],
                  dtype=object)


def peak_rss_mb() -> float:
    """This process's peak RSS in MiB (VmHWM, not inherited across ``exec``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover - Linux only


def _strs(values: np.ndarray) -> np.ndarray:
    return values.astype(str).astype(object)


def _times(epoch: np.ndarray, kind: str, timezone: str) -> np.ndarray:
    """Epoch seconds as sacct prints them: ``%s`` or local ISO ``YYYY-MM-DDTHH:MM:SS``."""
    if kind == "epoch":
        return _strs(epoch)
    import pyarrow as pa
    import pyarrow.compute as pc

    ts = pa.array(epoch.astype("datetime64[s]")).cast(pa.timestamp("s", tz="UTC"))
    if timezone != "UTC":
        ts = ts.cast(pa.timestamp("s", tz=timezone))
    local = pc.local_timestamp(ts) if timezone != "UTC" else ts.cast(pa.timestamp("s"))
    return np.datetime_as_string(local.to_numpy(zero_copy_only=False), unit="s").astype(object)


def _limit_text(minutes: np.ndarray) -> np.ndarray:
    """``Timelimit`` as sacct prints it: ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    d, rem = np.divmod(minutes, 1440)
    h, m = np.divmod(rem, 60)
    hms = np.char.add(np.char.add(np.char.zfill(h.astype(str), 2), ":"),
                      np.char.add(np.char.zfill(m.astype(str), 2), ":00"))
    with_days = np.char.add(np.char.add(d.astype(str), "-"), hms)
    return np.where(d > 0, with_days, hms).astype(object)


def make_jobs(n: int, seed: int = 1) -> dict[str, np.ndarray]:
    """The synthetic jobs: epoch times, sizes, states, names (numpy arrays)."""
    rng = np.random.default_rng(seed)
    raw = 10_000_000 + np.arange(n)
    submit = T0 + np.cumsum(rng.integers(0, 60, n))
    wait = rng.integers(0, 20_000, n)
    limit_min = rng.choice([30, 60, 240, 720, 1440, 2880, 4320], n)
    run = np.minimum(rng.integers(1, 200_000, n), limit_min * 60)
    state = rng.choice(5, n, p=[0.8, 0.08, 0.05, 0.05, 0.02])
    run = np.where(state == 2, limit_min * 60, run)  # TIMEOUT: ran to the limit
    cpus = 2 ** rng.integers(0, 9, n)
    nodes = (cpus + 63) // 64
    gpus = np.where(rng.random(n) < 0.1, rng.choice([1, 2, 4], n), 0)
    array = rng.random(n) < 0.1
    return {
        "raw": raw, "submit": submit, "start": submit + wait, "end": submit + wait + run,
        "run": run, "wait": wait, "limit_min": limit_min, "state": state, "cpus": cpus,
        "nodes": nodes, "gpus": gpus, "array": array, "mem_mb": cpus * 2000,
        "user": rng.integers(0, 500, n), "group": rng.integers(0, 50, n),
        "part": rng.integers(0, 5, n), "app": rng.integers(0, 1000, n),
        "node": rng.integers(1000, 5000, n),
    }


def write_sacct(path: Path, jobs: dict[str, np.ndarray], times: str = "iso",
                timezone: str = "UTC", columns: str = FORMATS["recommended"]) -> None:
    """Write ``jobs`` as a sacct ``--parsable2`` export of ``columns`` (comma-separated
    names) with step lines."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    n = len(jobs["raw"])
    raw = _strs(jobs["raw"])
    jid = np.where(jobs["array"], np.char.add(np.char.add(
        _strs(jobs["raw"] - 7).astype(str), "_"), "7").astype(object), raw)
    tres = np.char.add(np.char.add(np.char.add("billing=", jobs["cpus"].astype(str)),
                                   np.char.add(",cpu=", jobs["cpus"].astype(str))),
                       np.char.add(",mem=", np.char.add(jobs["mem_mb"].astype(str), "M")))
    tres = np.char.add(tres, np.char.add(",node=", jobs["nodes"].astype(str)))
    tres = np.where(jobs["gpus"] > 0,
                    np.char.add(np.char.add(tres, ",gres/gpu="), jobs["gpus"].astype(str)),
                    tres).astype(object)
    first = jobs["node"].astype(str)
    last = (jobs["node"] + jobs["nodes"] - 1).astype(str)
    ranged = np.char.add(np.char.add(np.char.add("n[", first), "-"), np.char.add(last, "]"))
    nodelist = np.where(jobs["nodes"] > 1, ranged, np.char.add("n", first)).astype(object)
    sub, sta, end = (_times(jobs[k], times, timezone) for k in ("submit", "start", "end"))
    empty = np.full(n, "", dtype=object)
    job_cols = {
        "JobID": jid, "JobIDRaw": raw, "JobName": np.char.add("job", jobs["app"].astype(str)),
        "User": np.char.add("user", jobs["user"].astype(str)),
        "Group": np.char.add("grp", jobs["group"].astype(str)),
        "Account": np.char.add("acct", (jobs["user"] % 40).astype(str)),
        "QOS": np.full(n, "normal", dtype=object),
        "Partition": np.char.add("part", jobs["part"].astype(str)),
        "Submit": sub, "Eligible": sub, "Start": sta, "End": end,
        "State": STATES[jobs["state"]], "AllocCPUS": _strs(jobs["cpus"]),
        "ReqCPUS": _strs(jobs["cpus"]), "NNodes": _strs(jobs["nodes"]),
        "Timelimit": _limit_text(jobs["limit_min"]), "TimelimitRaw": _strs(jobs["limit_min"]),
        "ReqMem": np.char.add(jobs["mem_mb"].astype(str), "M"),
        "ReqTRES": tres, "AllocTRES": tres, "NodeList": nodelist,
        "ExitCode": np.full(n, "0:0", dtype=object), "Elapsed": _limit_text(jobs["run"] // 60),
    }
    parts = [job_cols]
    for step, keep in ((".batch", None), (".extern", None), (".0", 0.5)):
        sel = np.ones(n, bool) if keep is None else (jobs["raw"] % 2 == 0)
        st = {k: v[sel] for k, v in job_cols.items()}
        st["JobID"] = np.char.add(st["JobID"].astype(str), step).astype(object)
        st["JobIDRaw"] = np.char.add(st["JobIDRaw"].astype(str), step).astype(object)
        st["JobName"] = np.full(sel.sum(), step[1:], dtype=object)
        for k in ("User", "Group", "Timelimit", "TimelimitRaw", "ReqMem", "ReqTRES"):
            st[k] = empty[sel]
        st["Submit"] = st["Eligible"] = st["Start"]
        st["State"] = np.full(sel.sum(), "COMPLETED", dtype=object)
        st["_order"] = np.flatnonzero(sel) * 4 + len(parts)
        parts.append(st)
    job_cols["_order"] = np.arange(n) * 4
    order = np.argsort(np.concatenate([p["_order"] for p in parts]), kind="stable")
    names = columns.split(",")
    table = pa.table({k: pa.array(np.concatenate([p[k] for p in parts])[order].astype(str))
                      for k in names})
    path.write_text("|".join(names) + "\n")
    with open(path, "ab") as fh:
        pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=False, delimiter="|",
                                                      quoting_style="none"))


def write_twin_swf(path: Path, jobs: dict[str, np.ndarray]) -> None:
    """The same jobs as SWF (submit re-based to 0)."""
    from dispatchlab.workload.jobs import JobTable
    from dispatchlab.workload.swf import write_swf

    status = np.array([1, 0, 1, 5, 0])[jobs["state"]]
    table = JobTable.from_arrays(
        submit=jobs["submit"] - jobs["submit"].min(), run=jobs["run"], units=jobs["cpus"],
        requested_time=jobs["limit_min"] * 60, wait=jobs["wait"], alloc_procs=jobs["cpus"],
        req_mem=jobs["mem_mb"] * 1024 // jobs["cpus"], status=status,
        user=jobs["user"], group=jobs["group"], queue=jobs["part"], app=jobs["app"],
        job_id=jobs["raw"])
    write_swf(table, path)


def _child(path: str, fmt: str, repeat: int, timezone: str) -> None:
    from dispatchlab.workload.sacct import read_sacct
    from dispatchlab.workload.swf import read_swf

    base = peak_rss_mb()
    times, n = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        table = read_swf(path) if fmt == "swf" else read_sacct(path, timezone=timezone)
        times.append(time.perf_counter() - t0)
        n = len(table)
        del table
    print(json.dumps({"jobs": n, "seconds": min(times), "base_mb": base,
                      "peak_mb": peak_rss_mb()}))


def measure(path: Path, fmt: str, repeat: int, timezone: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--fmt", fmt, "--repeat", str(repeat),
         "--timezone", timezone],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--times", choices=["iso", "epoch"], default="iso")
    parser.add_argument("--timezone", default="UTC")
    parser.add_argument("--columns", choices=list(FORMATS), default="recommended")
    parser.add_argument("--repeat", type=int, default=3, help="reads per process (best time)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--fmt", default="sacct", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.fmt, args.repeat, args.timezone)
        return
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        jobs = make_jobs(args.jobs)
        sacct, swf = Path(tmp) / "export.sacct", Path(tmp) / "same.swf"
        write_sacct(sacct, jobs, args.times, args.timezone, FORMATS[args.columns])
        write_twin_swf(swf, jobs)
        with open(sacct, "rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
        print(f"wrote {args.jobs:,} jobs in {time.perf_counter() - t0:.1f} s: sacct "
              f"{lines:,} lines {sacct.stat().st_size / 2**20:.0f} MiB ({args.columns} "
              f"columns, {args.times} times, {args.timezone}), SWF "
              f"{swf.stat().st_size / 2**20:.0f} MiB")
        print(f"{'reader':8s} {'jobs':>10s} {'seconds':>8s} {'base MB':>8s} {'peak MB':>8s}")
        res = {}
        for fmt, path in (("swf", swf), ("sacct", sacct)):
            r = res[fmt] = measure(path, fmt, args.repeat, args.timezone)
            print(f"{fmt:8s} {r['jobs']:10,d} {r['seconds']:8.2f} {r['base_mb']:8.0f} "
                  f"{r['peak_mb']:8.0f}")
        print(f"ratio sacct / swf: {res['sacct']['seconds'] / res['swf']['seconds']:.2f}")


if __name__ == "__main__":
    main()
