"""Write a seeded synthetic Slurm cluster: its ``slurm.conf`` and a ``sacct`` export.

Usage::

    python benchmarks/gen_slurm_cluster.py OUT_DIR [--jobs 100000] [--seed 0] [--load 0.85]
        [--gpu-share 0.2] [--platform-format slurm|toml|both]

writes ``OUT_DIR/slurm.conf`` (or ``OUT_DIR/cluster.toml``, or both) and
``OUT_DIR/jobs.sacct``. The same arguments give the same bytes (one
``numpy.random.default_rng(seed)`` draws everything, in a fixed order).

The cluster (:data:`SLURM_CONF`, independent of the seed)
----------------------------------------------------------
1,000 nodes: 900 CPU nodes ``cn[0001-0900]`` (64 cores, ``RealMemory=262144`` MB =
256 GiB) and 100 GPU nodes ``gn[001-100]`` (32 cores, 4 A100 GPUs as
``Gres=gpu:a100:4``, 512 GiB, ``Feature=a100``). ``CPUs`` counts cores (no
``ThreadsPerCore``). Partitions: ``cpu`` (``cn[0001-0900]``, ``Default=YES``,
``MaxTime=2-00:00:00``), ``gpu`` (``gn[001-100]``, 2 days) and ``debug``
(``cn[0891-0900]``, 10 nodes shared with ``cpu``, ``MaxTime=00:30:00``, ``MaxNodes=2``,
``PriorityTier=2``). Weights: 1 for ``cn[0001-0890]``, 10 for the debug nodes (so
``cpu`` jobs take them last), 100 for the GPU nodes. ``--platform-format toml`` writes
the same node types as a platform TOML file that the platform reader of before
``slurm.conf`` support reads: node types and capacities only (``core``, ``gpu``,
``mem``), no partitions, weights or GPU type.

The jobs (rules; every draw from the one generator)
---------------------------------------------------
* **Class**: a share ``--gpu-share`` (default 20 %) are GPU jobs of partition ``gpu``;
  of the others, 6 % are ``debug`` jobs and the rest ``cpu`` jobs.
* **cpu jobs**: 60 % fit in one node: ``2**k`` cores, ``k`` = 0..6 with weights
  5, 3, 3, 3, 2, 2, 2; 5 % of these are ``--exclusive`` (``AllocCPUS`` = 64, the node's
  cores, ``ReqCPUS`` the request: how an export shows exclusivity). 40 % are whole-node
  jobs of 1, 2, 4, 8, 16, 32 or 64 nodes (weights 8, 6, 5, 4, 2, 1, 0.5) with 64 cores
  each.
* **debug jobs**: 1..64 cores on one node (``2**k``, ``k`` uniform in 0..6) or, 20 %,
  two whole nodes; limit 30 minutes.
* **GPU jobs**: 1, 2, 4 or 8 nodes (weights 75, 15, 7, 3); one node asks 1..4 GPUs
  (uniform), more nodes 4 GPUs each; 8 cores and 128 GiB per GPU on each node. Half of
  them write the type (``gres/gpu:a100=N`` beside ``gres/gpu=N``, as Slurm does when
  typed GPUs are tracked).
* **Memory** (``ReqMem``, the job's total, Slurm 21.08+): 4,096 MB per core (a CPU
  node's memory over its cores), except 15 % of the cpu jobs that fit in one node,
  which ask 2, 3 or 4 times that, at most a node's memory (a 16-core job at 16 GiB
  per core needs a whole CPU node's memory: memory binds); whole-node cpu jobs ask
  240,000 MB per node. Every job fits its partition's nodes (a log shows no job its
  cluster could never run).
* **Time limits** (``TimelimitRaw``, minutes): cpu and GPU jobs 60, 120, 240, 480,
  720, 1,440 or 2,880 (weights 20, 15, 15, 10, 15, 15, 10); debug 30.
* **Run times and states**: 85 % ``COMPLETED`` with run time ``limit * u**2`` (``u``
  uniform in [0, 1): many jobs end well before their limit), at least 30 s; 8 %
  ``TIMEOUT`` at the limit; 4 % ``FAILED`` after 1..600 s; 3 % ``CANCELLED by UID``
  after ``limit * u``, at least 10 s.
* **Offered load** (ours): a job's footprint is its run time x nodes x its *dominant
  share* of one node, the largest of allocated cores/node cores, memory/node memory
  and GPUs/node GPUs on the node type of its partition (so a 1-core job with a whole
  node's memory counts as the whole node). First the run times of the completed GPU
  jobs are scaled by one factor (capped at their limits, at least 30 s; printed, about
  0.9 at seed 0) so that the gpu partition's footprints over its 100 nodes equal the
  cpu and debug partitions' over their 900. Submissions are then a Poisson process
  (one rate, no daily cycle) stretched to a span chosen so that the sum of footprints
  equals ``--load`` x 1,000 nodes x span: both parts of the cluster are offered
  ``--load``.
* **Users and accounts**: 300 users (Zipf-like: user ``k`` with weight ``1/(k+1)``),
  account ``acctK`` = the user's group of 10, QOS ``normal`` (``debug`` jobs: ``debug``;
  2 % of cpu and GPU jobs: ``high``). 10 % of the jobs are array tasks (``JobID``
  ``BASE_TASK``).
* **Recorded schedule** (``Start``, ``End``, ``NodeList``): **not** a simulated
  schedule. ``Start`` = submit + a recorded wait drawn as: 40 % 0..59 s, else
  log-normal with median 30 minutes (sigma 1.5), at most 3 days; ``End`` = ``Start`` +
  run time; ``NodeList`` is a run of consecutive hosts of the job's partition, starting
  at a uniform host. Overlaps are not checked (the nodes may be over-full at times):
  it is plausible row by row, not as a whole, so do not validate against it.
* Each job line is followed by its ``.batch`` and ``.extern`` step lines (the reader
  folds them), as in a real ``sacct --parsable2`` export; times are ISO UTC.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

#: the columns of the export, in order
COLUMNS = ("JobID|JobIDRaw|JobName|User|Group|Account|QOS|Partition|Submit|Eligible|Start|"
           "End|State|AllocCPUS|ReqCPUS|NNodes|ReqNodes|TimelimitRaw|ReqMem|ReqTRES|"
           "AllocTRES|NodeList")
#: epoch of the first submission (2024-01-01T00:00:00 UTC)
T0 = 1_704_067_200
CPU_NODES, GPU_NODES, DEBUG_NODES = 900, 100, 10
CPU_CORES, GPU_CORES, GPUS = 64, 32, 4
CPU_MEM, GPU_MEM = 262_144, 524_288  # MB
#: index of the first debug node among the CPU nodes (``cn[0891-0900]``)
DEBUG_FIRST = CPU_NODES - DEBUG_NODES

SLURM_CONF = f"""\
# A synthetic 1,000-node cluster (benchmarks/gen_slurm_cluster.py).
ClusterName=bench
SlurmctldHost=ctl01
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu

NodeName=DEFAULT CPUs={CPU_CORES} RealMemory={CPU_MEM} State=UNKNOWN
NodeName=cn[0001-{DEBUG_FIRST:04d}] Weight=1
NodeName=cn[{DEBUG_FIRST + 1:04d}-{CPU_NODES:04d}] Weight=10
NodeName=gn[001-{GPU_NODES:03d}] CPUs={GPU_CORES} RealMemory={GPU_MEM} \\
    Gres=gpu:a100:{GPUS} Feature=a100 Weight=100

PartitionName=cpu Nodes=cn[0001-{CPU_NODES:04d}] Default=YES MaxTime=2-00:00:00 State=UP
PartitionName=gpu Nodes=gn[001-{GPU_NODES:03d}] MaxTime=2-00:00:00 State=UP
PartitionName=debug Nodes=cn[{DEBUG_FIRST + 1:04d}-{CPU_NODES:04d}] MaxTime=00:30:00 \\
    MaxNodes=2 PriorityTier=2 State=UP
"""

#: the same node types as a platform TOML file (no partitions, weights or GPU type)
CLUSTER_TOML = f"""\
# The nodes of slurm.conf (benchmarks/gen_slurm_cluster.py) without its partitions,
# weights and GPU type.
name = "bench"

[[node_type]]
name = "cn"
count = {DEBUG_FIRST}
capacity = {{ core = {CPU_CORES}, gpu = 0, mem = {CPU_MEM} }}

[[node_type]]
name = "cn-debug"
count = {DEBUG_NODES}
capacity = {{ core = {CPU_CORES}, gpu = 0, mem = {CPU_MEM} }}

[[node_type]]
name = "gn"
count = {GPU_NODES}
capacity = {{ core = {GPU_CORES}, gpu = {GPUS}, mem = {GPU_MEM} }}
"""

PARTITIONS = np.array(["cpu", "debug", "gpu"], dtype=object)
CPU, DEBUG, GPU = 0, 1, 2
STATES = np.array(["COMPLETED", "TIMEOUT", "FAILED", "CANCELLED by 0"], dtype=object)
LIMITS_MIN = np.array([60, 120, 240, 480, 720, 1440, 2880])
LIMIT_WEIGHTS = np.array([20, 15, 15, 10, 15, 15, 10], dtype=float)
N_USERS = 300


def _p(weights: list[float] | np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return w / w.sum()


def make_jobs(n: int, seed: int = 0, load: float = 0.85,
              gpu_share: float = 0.2) -> dict[str, np.ndarray]:
    """The jobs by the rules of the module docstring, as numpy arrays (epoch times).

    Keys: ``part`` (0 cpu, 1 debug, 2 gpu), ``nodes``, ``req_cpus``, ``alloc_cpus``,
    ``gpus`` (per node), ``typed``, ``mem`` (MB, total), ``limit_min``, ``run``,
    ``state``, ``submit``, ``start``, ``end``, ``first`` (first host index within its
    partition's hosts), ``user``, ``qos`` (0 normal, 1 debug, 2 high), ``array``,
    ``raw``; and the scalars ``span``, ``gpu_scale``, ``load_cpu``, ``load_gpu``."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    part = np.where(u < gpu_share, GPU,
                    np.where(u < gpu_share + (1 - gpu_share) * 0.06, DEBUG, CPU))
    # cpu jobs
    small = rng.random(n) < 0.6
    k_small = rng.choice(7, n, p=_p([5, 3, 3, 3, 2, 2, 2]))
    whole = rng.choice(np.array([1, 2, 4, 8, 16, 32, 64]), n,
                       p=_p([8, 6, 5, 4, 2, 1, 0.5]))
    exclusive = rng.random(n) < 0.05
    mem_factor = np.where(rng.random(n) < 0.15, rng.choice(np.array([2, 3, 4]), n), 1)
    # debug jobs
    k_debug = rng.integers(0, 7, n)
    debug_two = rng.random(n) < 0.2
    # GPU jobs
    g_nodes = rng.choice(np.array([1, 2, 4, 8]), n, p=_p([75, 15, 7, 3]))
    g_one = rng.integers(1, GPUS + 1, n)
    typed = rng.random(n) < 0.5

    per_core = CPU_MEM // CPU_CORES
    nodes = np.ones(n, dtype=np.int64)
    req = np.ones(n, dtype=np.int64)
    gpus = np.zeros(n, dtype=np.int64)
    mem = np.zeros(n, dtype=np.int64)
    cpu = part == CPU
    c_small = cpu & small
    req[c_small] = 2 ** k_small[c_small]
    mem[c_small] = np.minimum(req[c_small] * per_core * mem_factor[c_small], CPU_MEM)
    c_whole = cpu & ~small
    nodes[c_whole] = whole[c_whole]
    req[c_whole] = CPU_CORES * nodes[c_whole]
    mem[c_whole] = 240_000 * nodes[c_whole]
    dbg = part == DEBUG
    d_two = dbg & debug_two
    nodes[d_two] = 2
    req[d_two] = 2 * CPU_CORES
    req[dbg & ~debug_two] = 2 ** k_debug[dbg & ~debug_two]
    mem[dbg] = req[dbg] * per_core
    gpu = part == GPU
    nodes[gpu] = g_nodes[gpu]
    gpus[gpu] = np.where(g_nodes[gpu] == 1, g_one[gpu], GPUS)
    req[gpu] = 8 * gpus[gpu] * nodes[gpu]
    mem[gpu] = 131_072 * gpus[gpu] * nodes[gpu]
    alloc = req.copy()
    excl = c_small & exclusive
    alloc[excl] = CPU_CORES

    limit_min = rng.choice(LIMITS_MIN, n, p=_p(LIMIT_WEIGHTS))
    limit_min[dbg] = 30
    state = rng.choice(4, n, p=[0.85, 0.08, 0.04, 0.03])
    u_run = rng.random(n)
    limit_s = limit_min * 60
    run = np.where(state == 0, np.maximum(30, (limit_s * u_run**2).astype(np.int64)),
                   limit_s)
    run = np.where(state == 2, 1 + (u_run * 600).astype(np.int64), run)
    run = np.where(state == 3, np.maximum(10, (limit_s * u_run).astype(np.int64)), run)
    run = np.minimum(run, limit_s)

    # offered load: dominant share of one node of the partition's type, times nodes
    node_cores = np.where(gpu, GPU_CORES, CPU_CORES)
    node_mem = np.where(gpu, GPU_MEM, CPU_MEM)
    share = np.maximum(alloc / nodes / node_cores, mem / nodes / node_mem)
    share = np.maximum(share, gpus / GPUS)
    width = nodes * share
    f_cpu = float((run * width)[~gpu].sum())
    f_gpu = float((run * width)[gpu].sum())
    # scale the run times of the GPU jobs that completed (the others ran to their limit
    # or failed early) by one factor, capped at their limits; a capped run loses
    # footprint, so the factor is iterated on what the caps leave
    done = gpu & (state == 0)
    d_run = run[done].astype(float)
    d_lim = limit_s[done].astype(float)
    d_width = width[done]
    target = f_cpu / CPU_NODES * GPU_NODES - float((run * width)[gpu & ~done].sum())
    scale = 1.0
    for _ in range(100):
        got = float((np.minimum(d_run * scale, d_lim) * d_width).sum())
        if not got or target <= 0 or abs(got - target) < 1e-9 * target:
            break
        scale *= target / got
    run[done] = np.maximum(30, np.minimum(d_run * scale, d_lim).astype(np.int64))
    f_gpu = float((run * width)[gpu].sum())
    span = (f_cpu + f_gpu) / (load * (CPU_NODES + GPU_NODES))
    # Poisson arrivals, stretched so that the last submission is at ``span``
    arrivals = np.cumsum(rng.exponential(1.0, n))
    arrivals -= arrivals[0]
    if n > 1:
        arrivals *= span / arrivals[-1]
    submit = T0 + np.floor(arrivals).astype(np.int64)

    quick = rng.random(n) < 0.4
    wait = np.where(quick, rng.integers(0, 60, n),
                    np.minimum(3 * 86400, rng.lognormal(np.log(1800), 1.5, n)).astype(np.int64))
    hosts = np.where(gpu, GPU_NODES, np.where(dbg, DEBUG_NODES, CPU_NODES))
    first = (rng.random(n) * (hosts - nodes + 1)).astype(np.int64)
    user = rng.choice(N_USERS, n, p=_p(1.0 / np.arange(1, N_USERS + 1)))
    qos = np.where(dbg, 1, np.where(rng.random(n) < 0.02, 2, 0))
    array = rng.random(n) < 0.1
    return {
        "part": part, "nodes": nodes, "req_cpus": req, "alloc_cpus": alloc, "gpus": gpus,
        "typed": typed & gpu, "mem": mem, "limit_min": limit_min, "run": run,
        "state": state, "submit": submit, "start": submit + wait,
        "end": submit + wait + run, "first": first, "user": user, "qos": qos,
        "array": array, "raw": 1_000_000 + np.arange(n),
        "span": np.float64(span), "gpu_scale": np.float64(scale),
        "load_cpu": np.float64(f_cpu / (CPU_NODES * span)),
        "load_gpu": np.float64(f_gpu / (GPU_NODES * span)),
    }


def _mem_text(mb: np.ndarray) -> np.ndarray:
    """Memory as Slurm prints it: ``NG`` when a whole number of GiB, else ``NM``."""
    return np.where(mb % 1024 == 0, np.char.add((mb // 1024).astype(str), "G"),
                    np.char.add(mb.astype(str), "M"))


def _iso(epoch: np.ndarray) -> np.ndarray:
    return np.datetime_as_string(epoch.astype("datetime64[s]"), unit="s")


def _hostlists(jobs: dict[str, np.ndarray]) -> list[str]:
    out = []
    for p, first, k in zip(jobs["part"].tolist(), jobs["first"].tolist(),
                           jobs["nodes"].tolist(), strict=True):
        if p == GPU:
            prefix, base, width = "gn", 1, 3
        else:
            prefix, base, width = "cn", 1 + (DEBUG_FIRST if p == DEBUG else 0), 4
        a = base + first
        out.append(f"{prefix}{a:0{width}d}" if k == 1 else
                   f"{prefix}[{a:0{width}d}-{a + k - 1:0{width}d}]")
    return out


def sacct_text(jobs: dict[str, np.ndarray]) -> str:
    """``jobs`` as a ``sacct --parsable2`` export (header, then each job line followed by
    its ``.batch`` and ``.extern`` steps)."""
    n = len(jobs["raw"])
    raw = jobs["raw"].astype(str)
    # an array task's JobID is BASE_TASK: the base is the id of the array's first task
    task = jobs["raw"] % 7
    jid = np.where(jobs["array"], np.char.add(np.char.add(
        (jobs["raw"] - task).astype(str), "_"), task.astype(str)), raw)
    alloc, nodes, gpus = jobs["alloc_cpus"], jobs["nodes"], jobs["gpus"]
    mem = _mem_text(jobs["mem"])
    total_gpus = (gpus * nodes).astype(str)

    def tres(cpus: np.ndarray) -> np.ndarray:
        c = cpus.astype(str)
        head = np.char.add(np.char.add("billing=", c), np.char.add(",cpu=", c))
        g = np.char.add(",gres/gpu=", total_gpus)
        g = np.where(jobs["typed"], np.char.add(np.char.add(g, ",gres/gpu:a100="),
                                                total_gpus), g)
        head = np.where(gpus > 0, np.char.add(head, g), head)
        tail = np.char.add(np.char.add(",mem=", mem), np.char.add(",node=",
                                                                  nodes.astype(str)))
        return np.char.add(head, tail)

    req_tres, alloc_tres = tres(jobs["req_cpus"]), tres(alloc)
    sub, sta, end = (_iso(jobs[k]) for k in ("submit", "start", "end"))
    hostlists = _hostlists(jobs)
    user = jobs["user"]
    lines = [COLUMNS]
    for i in range(n):
        u = int(user[i])
        name = f"job{(i * 7919) % 997}"
        acct = f"acct{u // 10}"
        qos = ("normal", "debug", "high")[int(jobs["qos"][i])]
        part = PARTITIONS[jobs["part"][i]]
        lines.append("|".join((
            jid[i], raw[i], name, f"user{u:03d}", f"grp{u // 10}", acct, qos, part,
            sub[i], sub[i], sta[i], end[i], STATES[jobs["state"][i]], str(alloc[i]),
            str(jobs["req_cpus"][i]), str(nodes[i]), str(nodes[i]),
            str(jobs["limit_min"][i]), mem[i], req_tres[i], alloc_tres[i], hostlists[i])))
        step_tres = alloc_tres[i]
        for step in ("batch", "extern"):
            lines.append("|".join((
                f"{jid[i]}.{step}", f"{raw[i]}.{step}", step, "", "", acct, "", "",
                sta[i], sta[i], sta[i], end[i],
                "COMPLETED" if step == "extern" or jobs["state"][i] == 0 else "FAILED",
                str(alloc[i]), "", str(nodes[i]), "", "", "", "", step_tres,
                hostlists[i])))
    return "\n".join(lines) + "\n"


def write_cluster(out: str | Path, jobs: int = 100_000, seed: int = 0, load: float = 0.85,
                  gpu_share: float = 0.2,
                  platform_format: str = "slurm") -> dict[str, object]:
    """Write ``jobs.sacct`` and the platform (``slurm.conf``, ``cluster.toml`` or both,
    by ``platform_format``: ``slurm``, ``toml``, ``both``) into the folder ``out``
    (created); returns the paths and the generator's figures (span, loads, GPU
    run-time factor)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = make_jobs(jobs, seed=seed, load=load, gpu_share=gpu_share)
    sacct = out / "jobs.sacct"
    sacct.write_text(sacct_text(table))
    written: dict[str, object] = {"sacct": sacct}
    if platform_format in ("slurm", "both"):
        (out / "slurm.conf").write_text(SLURM_CONF)
        written["slurm.conf"] = out / "slurm.conf"
    if platform_format in ("toml", "both"):
        (out / "cluster.toml").write_text(CLUSTER_TOML)
        written["toml"] = out / "cluster.toml"
    written.update({k: float(table[k]) for k in ("span", "gpu_scale", "load_cpu",
                                                  "load_gpu")})
    written["gpu_jobs"] = int((table["part"] == GPU).sum())
    written["debug_jobs"] = int((table["part"] == DEBUG).sum())
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder to write into (created)")
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load", type=float, default=0.85)
    parser.add_argument("--gpu-share", type=float, default=0.2)
    parser.add_argument("--platform-format", choices=["slurm", "toml", "both"],
                        default="both")
    args = parser.parse_args()
    t0 = time.perf_counter()
    w = write_cluster(args.out, args.jobs, args.seed, args.load, args.gpu_share,
                      args.platform_format)
    size = Path(str(w["sacct"])).stat().st_size / 2**20
    print(f"wrote {args.jobs:,} jobs ({w['gpu_jobs']:,} gpu, {w['debug_jobs']:,} debug) "
          f"in {time.perf_counter() - t0:.1f} s: {w['sacct']} ({size:.0f} MiB); span "
          f"{float(str(w['span'])) / 86400:.1f} days; offered load cpu+debug "
          f"{w['load_cpu']:.3f}, gpu {w['load_gpu']:.3f} (GPU run times x"
          f"{w['gpu_scale']:.3f})")


if __name__ == "__main__":
    main()
