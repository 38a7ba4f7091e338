"""An independent, deliberately simple reference simulator (pooled cores only).

This module shares no code with :mod:`dispatchlab`. It is written to be *obviously*
correct rather than fast: plain lists, linear scans, and a free-core profile that is
recomputed by brute force. The property tests compare the real engine with it.

Model
-----
The machine is one pool of ``capacity`` cores; job ``i`` needs ``units[i]`` cores.
Jobs are given in file order and must already be sorted by ``submit`` (ties keep file
order), so *queue order* is simply the job index order.

* ``predictor="walltime"``: estimate = requested_time; ``"real"``: estimate = run
  (see :class:`Semantics` for the variant under ``overrun="kill"``).
* ``overrun="run"``: a job runs its actual run time; ``"kill"``: it runs
  ``min(run, requested_time)`` and is reported ``"killed"`` when that cut it short.
* A job with ``units > capacity`` is rejected at submission (start = end = -1).
* Clock: at every timestamp with a submission or a completion: (1) completions,
  (2) submissions in file order, (3) one dispatch pass; while a pass started jobs that
  end at that very timestamp (0-second jobs), complete them and run another pass.
* Planning duration ``d = max(estimate, 1)``. A running job (including one started
  earlier in the current pass because it fitted in queue order) holds its cores, for
  planning, until its *effective end* ``max(start + estimate, now)`` (see
  :class:`Semantics` for ``start + d``); a job started in the current pass on a
  reservation or by backfilling holds them on ``[now, now + d)``.
* A job is only ever started when it physically fits (``units <= free cores``). The
  planning profile can show more cores than are really free at ``now`` (a running job
  whose estimated end is past counts as ending now); a job whose reservation is ``now``
  but which does not physically fit keeps its reservation and does not start.

Policies (see :class:`Policy`): ``fifo``, ``sjf``/``ljf`` (strict or ``skip``),
``easy`` (textbook EASY, backfill scan in queue or SJF order; or, with
``reservations=K``, K waiting jobs get conservative reservations),
``conservative``.

Three points on which the written spec and the engine's docstrings differ are
switches of :class:`Semantics`: ``SPEC`` (the written spec, the default) and
``ENGINE_DOCS`` (what the engine's docstrings describe).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PREDICTORS = ("walltime", "real")
OVERRUNS = ("run", "kill")


@dataclass(frozen=True)
class Semantics:
    """The points where the written spec and the engine's docstrings differ.

    ``real_estimate``: what predictor "real" predicts. ``"run"`` (written spec:
    "estimate = run") or ``"simulated"`` (engine: the duration the job is simulated
    for, i.e. ``min(run, requested_time)`` with ``overrun="kill"``).

    ``running_end``: when a running job releases its cores for planning, before
    clamping to now. ``"estimate"`` (written spec: "a running job's estimated end =
    start + estimate") or ``"planned"`` (engine: ``start + max(estimate, 1)``). They
    differ only for 0-second estimates.

    ``k_counts_started``: which K jobs ``easy(reservations=K)`` reserves. ``True``
    (written spec): after starting jobs in queue order while they fit, "the first K
    waiting jobs in queue order get reservations (those reserved at now start)", so a
    reserved job that starts now still uses one of the K. ``False`` (engine): walking
    the queue in order, a job whose reservation is now and that physically fits starts
    "and does not count"; reservations are handed out until K jobs hold one.
    """

    real_estimate: str = "run"
    running_end: str = "estimate"
    k_counts_started: bool = True

    def __post_init__(self) -> None:
        if self.real_estimate not in ("run", "simulated"):
            raise ValueError(f"unknown real_estimate {self.real_estimate!r}")
        if self.running_end not in ("estimate", "planned"):
            raise ValueError(f"unknown running_end {self.running_end!r}")


SPEC = Semantics()
ENGINE_DOCS = Semantics(real_estimate="simulated", running_end="planned",
                        k_counts_started=False)


@dataclass(frozen=True)
class Policy:
    """A dispatching policy for the reference.

    ``name``: ``"fifo" | "sjf" | "ljf" | "easy" | "conservative"``.
    ``skip``: sjf/ljf only; keep walking the sorted list past jobs that do not fit.
    ``order``: easy only; ``"fifo"`` (queue order) or ``"sjf"`` for the backfill scan.
    ``reservations``: easy only; ``None`` = textbook EASY (only the head is reserved,
    shadow/extra rules), ``K`` = K waiting jobs get profile reservations (which K:
    see :attr:`Semantics.k_counts_started`).
    """

    name: str
    skip: bool = False
    order: str = "fifo"
    reservations: int | None = None

    def __post_init__(self) -> None:
        if self.name not in ("fifo", "sjf", "ljf", "easy", "conservative"):
            raise ValueError(f"unknown policy {self.name!r}")
        if self.order not in ("fifo", "sjf"):
            raise ValueError(f"unknown backfill order {self.order!r}")
        if self.reservations is not None and self.reservations < 1:
            raise ValueError("reservations must be >= 1")


@dataclass
class RefResult:
    """What the reference computed, per job (index = file order)."""

    start: list[int]
    end: list[int]
    status: list[str]
    estimate: list[int]
    #: textbook EASY only: job -> shadow time computed the first time it was the
    #: blocked head of the queue.
    first_shadow: dict[int, int] = field(default_factory=dict)
    #: counts of interesting things that happened (blocked heads, backfills by rule,
    #: repeat passes, overrunning jobs, ...), for the "it did happen" checks.
    stats: Counter = field(default_factory=Counter)


class _Profile:
    """Free cores over time, as a plain list of holds ``[begin, end)``."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.holds: list[tuple[int, int, int]] = []

    def add(self, begin: int, end: int, units: int) -> None:
        if end > begin:
            self.holds.append((begin, end, units))

    def free_at(self, s: int) -> int:
        used = 0
        for begin, end, units in self.holds:
            if begin <= s < end:
                used += units
        return self.capacity - used

    def breakpoints(self) -> list[int]:
        points = set()
        for begin, end, _ in self.holds:
            points.add(begin)
            points.add(end)
        return sorted(points)

    def fits(self, t: int, d: int, units: int) -> bool:
        """``free(s) >= units`` for every ``s`` in ``[t, t + d)``."""
        # free() is piecewise constant and only changes at breakpoints, so checking t
        # and every breakpoint inside (t, t + d) checks the whole interval.
        points = [t] + [p for p in self.breakpoints() if t < p < t + d]
        return all(self.free_at(p) >= units for p in points)

    def earliest(self, now: int, d: int, units: int) -> int:
        """Earliest ``t >= now`` (now or a breakpoint) where ``units`` fit for ``d``."""
        candidates = [now] + [p for p in self.breakpoints() if p > now]
        for t in candidates:
            if self.fits(t, d, units):
                return t
        raise AssertionError("unreachable: after the last breakpoint the pool is empty")


class _Reference:
    def __init__(
        self,
        submit: list[int],
        run: list[int],
        units: list[int],
        requested_time: list[int],
        capacity: int,
        policy: Policy,
        predictor: str,
        overrun: str,
        semantics: Semantics,
    ) -> None:
        n = len(submit)
        if not (len(run) == len(units) == len(requested_time) == n):
            raise ValueError("all job lists must have the same length")
        for i in range(1, n):
            if submit[i] < submit[i - 1]:
                raise ValueError("jobs must be sorted by submit time")
        if predictor not in PREDICTORS:
            raise ValueError(f"unknown predictor {predictor!r}")
        if overrun not in OVERRUNS:
            raise ValueError(f"unknown overrun mode {overrun!r}")
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        for i in range(n):
            if run[i] < 0 or requested_time[i] < 0 or units[i] < 1:
                raise ValueError(f"job {i}: bad run/requested_time/units")

        self.n = n
        self.submit = [int(x) for x in submit]
        self.run_time = [int(x) for x in run]
        self.units = [int(x) for x in units]
        self.req = [int(x) for x in requested_time]
        self.capacity = capacity
        self.policy = policy
        self.overrun = overrun
        self.semantics = semantics

        if overrun == "run":
            self.dur = list(self.run_time)
        else:
            self.dur = [min(self.run_time[i], self.req[i]) for i in range(n)]
        if predictor == "walltime":
            self.est = list(self.req)
        elif semantics.real_estimate == "run":
            self.est = list(self.run_time)
        else:  # "simulated": the duration the job will really be simulated for
            self.est = list(self.dur)

        self.start = [-1] * n
        self.end = [-1] * n
        self.status = [""] * n
        self.running: list[int] = []
        self.waiting: list[int] = []  # queue order (job index order)
        self.free = capacity
        self.first_shadow: dict[int, int] = {}
        self.stats: Counter = Counter()

    # ------------------------------------------------------------------ helpers
    def planned(self, j: int) -> int:
        """Planning duration of job ``j``."""
        return max(self.est[j], 1)

    def effective_end(self, j: int, now: int) -> int:
        """When running job ``j`` is planned to release its cores."""
        if self.semantics.running_end == "estimate":
            return max(self.start[j] + self.est[j], now)
        return max(self.start[j] + self.planned(j), now)

    def start_job(self, j: int, now: int) -> None:
        assert self.units[j] <= self.free, "reference bug: starting a job that does not fit"
        self.start[j] = now
        self.end[j] = now + self.dur[j]
        self.free -= self.units[j]
        self.waiting.remove(j)
        self.running.append(j)
        if self.overrun == "kill" and self.run_time[j] > self.req[j]:
            self.status[j] = "killed"
        else:
            self.status[j] = "completed"
        if self.dur[j] > self.est[j]:
            self.stats["started_job_outlives_estimate"] += 1

    def complete_jobs_ending_at(self, now: int) -> None:
        for j in list(self.running):
            if self.end[j] == now:
                self.running.remove(j)
                self.free += self.units[j]

    def profile_of_running(self, now: int) -> _Profile:
        profile = _Profile(self.capacity)
        for j in self.running:
            eff = self.effective_end(j, now)
            if eff == now and self.end[j] > now:
                self.stats["running_job_past_its_estimate"] += 1
            profile.add(now, eff, self.units[j])
        return profile

    # ------------------------------------------------------------------ main loop
    def simulate(self) -> RefResult:
        nxt = 0
        while nxt < self.n or self.running:
            candidates = [self.end[j] for j in self.running]
            if nxt < self.n:
                candidates.append(self.submit[nxt])
            now = min(candidates)

            self.complete_jobs_ending_at(now)

            while nxt < self.n and self.submit[nxt] == now:
                if self.units[nxt] > self.capacity:
                    self.status[nxt] = "rejected"
                    self.stats["rejected"] += 1
                else:
                    self.waiting.append(nxt)
                nxt += 1

            while True:
                started = self.dispatch(now)
                if not any(self.end[j] == now for j in started):
                    break
                self.complete_jobs_ending_at(now)
                self.stats["repeat_pass"] += 1

        assert not self.waiting, "reference bug: jobs left waiting at the end"
        return RefResult(
            start=self.start,
            end=self.end,
            status=self.status,
            estimate=self.est,
            first_shadow=self.first_shadow,
            stats=self.stats,
        )

    # ------------------------------------------------------------------ policies
    def dispatch(self, now: int) -> list[int]:
        """One dispatch pass; returns the jobs it started."""
        before = set(self.running)
        if len(self.waiting) > 64:
            self.stats["queue_longer_than_64"] += 1
        if self.waiting:
            name = self.policy.name
            if name == "fifo":
                self.pass_fifo(now)
            elif name in ("sjf", "ljf"):
                self.pass_sorted(now)
            elif name == "easy" and self.policy.reservations is None:
                self.pass_easy(now)
            elif name == "easy":
                self.pass_easy_reservations(now, self.policy.reservations)
            else:
                self.pass_conservative(now)
        return [j for j in self.running if j not in before]

    def start_heads_while_they_fit(self, now: int) -> None:
        while self.waiting and self.units[self.waiting[0]] <= self.free:
            self.start_job(self.waiting[0], now)

    def sjf_key(self, j: int) -> tuple[int, int]:
        # queue order == job index order
        return (self.est[j], j)

    def pass_fifo(self, now: int) -> None:
        self.start_heads_while_they_fit(now)
        if self.waiting:
            self.stats["blocked_head"] += 1

    def pass_sorted(self, now: int) -> None:
        if self.policy.name == "sjf":
            order = sorted(self.waiting, key=self.sjf_key)
        else:
            order = sorted(self.waiting, key=lambda j: (-self.est[j], j))
        blocked = False
        for j in order:
            if self.units[j] <= self.free:
                self.start_job(j, now)
                if blocked:
                    self.stats["skip_started_past_blocked"] += 1
            else:
                blocked = True
                if not self.policy.skip:
                    break
        if blocked:
            self.stats["blocked_head"] += 1

    def pass_easy(self, now: int) -> None:
        self.start_heads_while_they_fit(now)
        if not self.waiting:
            return
        head = self.waiting[0]
        self.stats["blocked_head"] += 1

        # When each running job (including those just started) releases its cores.
        release = {j: self.effective_end(j, now) for j in self.running}

        # Shadow time: the smallest release time T such that the head fits once all
        # running jobs releasing at or before T have released their cores.
        shadow = None
        for t in sorted(release.values()):
            released = sum(self.units[j] for j in release if release[j] <= t)
            if self.free + released >= self.units[head]:
                shadow = t
                break
        assert shadow is not None, "reference bug: the head never fits"
        released = sum(self.units[j] for j in release if release[j] <= shadow)
        extra = self.free + released - self.units[head]
        self.first_shadow.setdefault(head, shadow)
        if shadow == now:
            self.stats["shadow_is_now"] += 1

        rest = self.waiting[1:]
        if self.policy.order == "sjf":
            rest = sorted(rest, key=self.sjf_key)
        for j in rest:
            if self.units[j] > self.free:
                continue
            if now + self.planned(j) <= shadow:
                self.start_job(j, now)
                self.stats["backfill_before_shadow"] += 1
            elif self.units[j] <= extra:
                self.start_job(j, now)
                extra -= self.units[j]
                self.stats["backfill_in_extra"] += 1

    def reserve(self, profile: _Profile, j: int, now: int) -> bool:
        """Give job ``j`` its earliest reservation; start it if that is now and it fits.

        Returns whether the job started."""
        d = self.planned(j)
        t = profile.earliest(now, d, self.units[j])
        profile.add(t, t + d, self.units[j])
        if t == now:
            if self.units[j] <= self.free:
                self.start_job(j, now)
                return True
            self.stats["reserved_now_but_does_not_fit"] += 1
        else:
            self.stats["reserved_later"] += 1
        return False

    def pass_conservative(self, now: int) -> None:
        profile = self.profile_of_running(now)
        for j in list(self.waiting):
            self.reserve(profile, j, now)

    def pass_easy_reservations(self, now: int, k: int) -> None:
        i = 0
        if self.semantics.k_counts_started:
            # start jobs in queue order while they fit (they are running jobs now) ...
            self.start_heads_while_they_fit(now)
            if not self.waiting:
                return
            # ... then the next K jobs get reservations (those reserved now start)
            profile = self.profile_of_running(now)
            queue = list(self.waiting)
            for j in queue[:k]:
                if self.reserve(profile, j, now):
                    self.stats["reserved_job_started_now"] += 1
            i = k
        else:
            profile = self.profile_of_running(now)
            queue = list(self.waiting)
            held = 0
            while i < len(queue) and held < k:
                if not self.reserve(profile, queue[i], now):
                    held += 1
                elif held:
                    self.stats["reserved_job_started_now"] += 1
                i += 1
            if held == 0:
                return
        self.stats["blocked_head"] += 1
        rest = queue[i:]
        if self.policy.order == "sjf":
            rest = sorted(rest, key=self.sjf_key)
        for j in rest:
            d = self.planned(j)
            if self.units[j] <= self.free and profile.fits(now, d, self.units[j]):
                profile.add(now, now + d, self.units[j])
                self.start_job(j, now)
                self.stats["backfill_unreserved"] += 1


def simulate(
    submit: list[int],
    run: list[int],
    units: list[int],
    requested_time: list[int],
    capacity: int,
    policy: Policy | str = "fifo",
    *,
    predictor: str = "walltime",
    overrun: str = "run",
    semantics: Semantics = SPEC,
) -> RefResult:
    """Simulate the jobs (sorted by submit, file order) on a pool of ``capacity`` cores."""
    if isinstance(policy, str):
        policy = Policy(policy)
    ref = _Reference(
        submit, run, units, requested_time, capacity, policy, predictor, overrun, semantics
    )
    return ref.simulate()
