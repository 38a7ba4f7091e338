"""Hand-computed schedules for the reference simulator, so that it can be trusted.

Every expected start time below is reasoned step by step in the comments. Jobs are
written as ``name(submit, run, units[, requested])``; unless a test says otherwise the
predictor is "real" (estimate = run) and the overrun mode is "run".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from reference_sim import ENGINE_DOCS, SPEC, Policy, Semantics, simulate
from strategies import Workload, workloads


def ref(jobs, capacity, policy, **kw):
    """jobs: list of (submit, run, units) or (submit, run, units, requested_time)."""
    submit = [j[0] for j in jobs]
    run = [j[1] for j in jobs]
    units = [j[2] for j in jobs]
    req = [j[3] if len(j) > 3 else j[1] for j in jobs]
    kw.setdefault("predictor", "real")
    if isinstance(policy, str):
        policy = Policy(policy)
    return simulate(submit, run, units, req, capacity, policy, **kw)


# C=4. A(0, 10, 3), B(0, 5, 2), C(1, 2, 1).
BLOCKING = [(0, 10, 3), (0, 5, 2), (1, 2, 1)]


def test_fifo_head_blocks_everything():
    # t=0: A starts (free 1); B needs 2 > 1 and blocks.
    # t=1: C arrives; it would fit (1 <= 1) but B blocks the queue.
    # t=10: A ends (free 4): B starts (free 2), C starts (free 1).
    r = ref(BLOCKING, 4, "fifo")
    assert r.start == [0, 10, 10]
    assert r.end == [10, 15, 12]
    assert r.status == ["completed"] * 3


def test_easy_backfills_a_job_that_ends_before_the_shadow():
    # t=0: A starts (free 1); head B blocked; shadow = 10 (A releases 3 -> 4 >= 2).
    # t=1: C fits now (1 <= 1) and 1 + 2 = 3 <= 10 -> backfilled at 1.
    # t=10: A ends, B starts.
    r = ref(BLOCKING, 4, "easy")
    assert r.start == [0, 10, 1]
    assert r.first_shadow == {1: 10}
    assert r.stats["backfill_before_shadow"] == 1


def test_easy_both_backfill_rules():
    # C=6. A(0,10,4) B(0,5,4) C(0,20,1) D(0,20,2) E(0,3,1).
    # t=0: A starts (free 2). Head B blocked: shadow 10 (2 + 4 >= 4), extra = 6 - 4 = 2.
    #   C: fits (1 <= 2), 0 + 20 > 10, 1 <= extra 2 -> starts (extra rule), extra 1, free 1.
    #   D: 2 > free 1 -> no.
    #   E: fits (1 <= 1), 0 + 3 <= 10 -> starts (shadow rule), free 0.
    # t=3: E ends (free 1). B blocked, shadow 10, extra = 1 + 4 - 4 = 1; D 2 > free 1.
    # t=10: A ends (free 5): B starts (free 1). Head D (2) blocked: running B ends 15
    #   (4 units), C ends 20: shadow 15. Nothing else waiting.
    # t=15: B ends (free 5): D starts. t=20: C ends. t=35: D ends.
    jobs = [(0, 10, 4), (0, 5, 4), (0, 20, 1), (0, 20, 2), (0, 3, 1)]
    r = ref(jobs, 6, "easy")
    assert r.start == [0, 10, 0, 15, 0]
    assert r.first_shadow == {1: 10, 3: 15}
    assert r.stats["backfill_in_extra"] == 1
    assert r.stats["backfill_before_shadow"] == 1
    # FIFO on the same jobs: t=0 A (free 2), B blocks. t=10 A ends: B (free 2), C (free 1),
    # D blocks (2 > 1). t=15: B ends (free 5): D (free 3), E (free 2).
    assert ref(jobs, 6, "fifo").start == [0, 10, 10, 15, 15]


def test_easy_extra_counts_every_job_ending_at_the_shadow():
    # C=10. A, B, C = (0, 10, 2) each (free 4). E(1, 5, 5), F(1, 50, 4).
    # t=1: head E blocked (5 > 4). Ends sorted: 10, 10, 10: after A 4+2 = 6 >= 5 ->
    #   shadow 10. extra = 4 + (2+2+2) - 5 = 5 (ALL jobs ending at 10 count, not just
    #   those released before the head fits).
    #   F: fits (4 <= 4), 1 + 50 > 10, 4 <= extra 5 -> starts at 1.
    # t=10: A, B, C end: free 10 - 4 = 6 >= 5: E starts.
    jobs = [(0, 10, 2), (0, 10, 2), (0, 10, 2), (1, 5, 5), (1, 50, 4)]
    r = ref(jobs, 10, "easy")
    assert r.start == [0, 0, 0, 10, 1]
    assert r.first_shadow == {3: 10}


def test_easy_delays_the_second_job_where_conservative_does_not():
    # C=4, all submitted at 0: A(10 s, 3), B(10 s, 2), C(10 s, 4), D(25 s, 1).
    # EASY:
    #   t=0: A starts (free 1). Head B blocked: shadow 10 (1 + 3 >= 2), extra = 4 - 2 = 2.
    #     C (4) does not fit. D fits (1 <= 1), 0 + 25 > 10, 1 <= extra 2 -> starts.
    #   t=10: A ends (free 3): B starts (free 1). Head C blocked: B releases 2 at 20
    #     (1 + 2 = 3 < 4), D releases 1 at 25 (4 >= 4) -> shadow 25.
    #   t=20: B ends; C still blocked. t=25: D ends: C starts.
    # Conservative:
    #   t=0: A -> [0,10) starts. B: free(0) = 1 < 2 -> [10,20). C: [20,30).
    #     D (25 s): at 0 the interval [0,25) hits C's [20,30) (0 free); at 10 and 20 too;
    #     at 30 it fits -> reserved [30,55), not started.
    #   t=10: re-plan: B [10,20) starts; C [20,30); D [30,55).
    #   t=20: C starts; D [30,55). t=30: D starts.
    # EASY with 2 reservations: B and C get the conservative reservations, D (unreserved)
    #   does not fit [0,25) -> same as conservative here.
    jobs = [(0, 10, 3), (0, 10, 2), (0, 10, 4), (0, 25, 1)]
    assert ref(jobs, 4, "easy").start == [0, 10, 25, 0]
    assert ref(jobs, 4, Policy("easy", reservations=1)).start == [0, 10, 25, 0]
    assert ref(jobs, 4, "conservative").start == [0, 10, 20, 30]
    assert ref(jobs, 4, Policy("easy", reservations=2)).start == [0, 10, 20, 30]


def test_which_k_jobs_are_reserved():
    # C=4, all at 0: R(10 s, 2), H(5 s, 4), X(3 s, 1), Y(5 s, 2), Z(6 s, 1). K=2.
    # Written spec (k_counts_started=True): start R (free 2); the next 2 jobs, H and X,
    #   get reservations: H [10,15); X [0,3) is now and fits -> starts (free 1). Y is not
    #   reserved: 2 > free 1. Z: fits (1 <= 1) and the profile over [0,6) has 1 free at
    #   0..3 and 2 at 3..6 -> starts.
    #   t=3: X ends (free 1): reserve H [10,15) and Y: [3,8) has 1 free (R, Z) -> no;
    #   6: [6,11) hits H -> no; 10 no; 15 -> [15,20). t=6: Z ends; Y still 15.
    #   t=10: R ends, H starts. t=15: Y starts.
    # Engine docstring (k_counts_started=False): walking the queue, R starts (does not
    #   count), H reserved [10,15) (1), X starts now (does not count), Y reserved [3,8)
    #   (2). Z: the profile at 3..6 has 4 - 2 (R) - 2 (Y) = 0 -> does not start.
    #   t=3: X ends (free 2): H [10,15) (1); Y [3,8) is now and fits -> starts; Z: 3 no
    #   (0 free), 8: [8,14) hits H, 10 no, 15 -> reserved (2). t=10: H starts. t=15: Z.
    jobs = [(0, 10, 2), (0, 5, 4), (0, 3, 1), (0, 5, 2), (0, 6, 1)]
    k2 = Policy("easy", reservations=2)
    assert ref(jobs, 4, k2, semantics=SPEC).start == [0, 10, 0, 15, 0]
    assert ref(jobs, 4, k2, semantics=ENGINE_DOCS).start == [0, 10, 0, 3, 15]
    # Textbook EASY: shadow 10, extra 0; X (0+3 <= 10) and Z (0+6 <= 10) backfill at 0;
    #   Y (2 cores) fits only at 6, when 6 + 5 > 10 and extra is 0 -> waits for H.
    assert ref(jobs, 4, "easy").start == [0, 10, 0, 15, 0]
    # Conservative: R, X start; H [10,15); Y [3,8); Z blocked by Y at 3 -> 15.
    assert ref(jobs, 4, "conservative").start == [0, 10, 0, 3, 15]


def test_running_end_of_a_zero_second_estimate():
    # walltime predictor, C=4, all at 0: J(run 5, 2 units, requested 0), H(run 5, 4 units,
    # requested 5), X(run 1, 2 units, requested 1). EASY.
    # t=0: J starts (free 2); head H blocked.
    # Written spec (running_end="estimate"): J's end is 0 + 0 = now -> shadow 0, extra =
    #   2 + 2 - 4 = 0. X fits, but 0 + 1 > 0 and 2 > extra 0 -> waits.
    #   t=5: J ends: H starts (free 0). t=10: X starts.
    # Engine (running_end="planned"): J's end is 0 + max(0, 1) = 1 -> shadow 1, extra 0;
    #   X: 0 + 1 <= 1 -> backfilled at 0. t=1: X ends; H still blocked. t=5: H starts.
    jobs = [(0, 5, 2, 0), (0, 5, 4, 5), (0, 1, 2, 1)]
    kw = dict(predictor="walltime")
    assert ref(jobs, 4, "easy", semantics=SPEC, **kw).start == [0, 5, 10]
    assert ref(jobs, 4, "easy", semantics=ENGINE_DOCS, **kw).start == [0, 5, 0]


def test_real_estimate_under_kill():
    # C=2, kill: A(0, run 10, 2 units, requested 3) is killed at 3.
    # Written spec: predictor "real" estimates run = 10; engine: the simulated 3 s.
    jobs = [(0, 10, 2, 3)]
    kw = dict(predictor="real", overrun="kill")
    assert ref(jobs, 2, "fifo", semantics=SPEC, **kw).estimate == [10]
    assert ref(jobs, 2, "fifo", semantics=ENGINE_DOCS, **kw).estimate == [3]
    # It changes schedules. C=2: A(0, run 10, 1, req 3), D(0, run 30, 1, req 30),
    # B(1, run 5, 1, req 5), C(1, run 20, 1, req 4); ljf, kill.
    # t=0: A (killed at 3) and D start. t=1: B and C wait (0 free).
    # t=3: A ends (1 free). ljf picks the longest estimate:
    #   written spec: C (estimate 20) starts at 3, killed at 7; then B at 7.
    #   engine: B (estimate 5 > 4) starts at 3, ends 8; then C at 8.
    jobs = [(0, 10, 1, 3), (0, 30, 1, 30), (1, 5, 1, 5), (1, 20, 1, 4)]
    assert ref(jobs, 2, "ljf", semantics=SPEC, **kw).start == [0, 0, 7, 3]
    assert ref(jobs, 2, "ljf", semantics=ENGINE_DOCS, **kw).start == [0, 0, 3, 8]


def test_easy_sjf_backfill_order():
    # C=4: A(0,10,3) B(0,5,4) C(0,8,1) D(0,2,1).
    # Head B blocked at t=0 (free 1): shadow 10, extra = 4 - 4 = 0.
    # Queue-order scan: C fits, 0 + 8 <= 10 -> starts (free 0); D does not fit.
    #   t=8: C ends (free 1): D: 8 + 2 <= 10 -> starts. t=10: A and D end: B starts.
    # SJF scan: D (2 s) first: starts (free 0); C does not fit.
    #   t=2: D ends (free 1): C: 2 + 8 = 10 <= 10 -> starts. t=10: A, C end: B starts.
    jobs = [(0, 10, 3), (0, 5, 4), (0, 8, 1), (0, 2, 1)]
    assert ref(jobs, 4, "easy").start == [0, 10, 0, 8]
    assert ref(jobs, 4, Policy("easy", order="sjf")).start == [0, 10, 2, 0]


def test_sjf_ljf_strict_and_skip():
    # C=4: A(0,10,3), then at t=1: B(1 s, 2 units), C(5 s, 1 unit). Free at t=1: 1.
    # sjf strict: order B, C; B does not fit -> stop. t=10: A ends: B, C start.
    # sjf skip: B does not fit, C fits -> C starts at 1. t=6: C ends (free 1), B needs 2.
    #   t=10: B starts.
    # ljf strict: order C, B: C starts at 1 (free 0), B does not fit. t=6: free 1 < 2.
    #   t=10: B starts.
    jobs = [(0, 10, 3), (1, 1, 2), (1, 5, 1)]
    assert ref(jobs, 4, "sjf").start == [0, 10, 10]
    assert ref(jobs, 4, Policy("sjf", skip=True)).start == [0, 10, 1]
    assert ref(jobs, 4, "ljf").start == [0, 10, 1]
    # ljf skip with a tie: C=4: A(0,10,3); t=1: B(5 s, 2), C(5 s, 1), D(1 s, 1).
    #   Sorted (estimate desc, ties by queue order): B, C, D. strict: B does not fit -> stop.
    #   skip: B no, C fits (free 0), D no. t=6: C ends (free 1): B no, D starts.
    #   t=7: D ends (free 1). t=10: A ends: B starts.
    jobs = [(0, 10, 3), (1, 5, 2), (1, 5, 1), (1, 1, 1)]
    assert ref(jobs, 4, "ljf").start == [0, 10, 10, 10]
    assert ref(jobs, 4, Policy("ljf", skip=True)).start == [0, 10, 1, 6]


def test_zero_second_jobs_trigger_another_pass():
    # C=2: A(0, 0 s, 2), B(0, 5 s, 2). t=0: A starts (free 0), B does not fit. A ends at
    # 0 -> completed, another pass at t=0: B starts.
    r = ref([(0, 0, 2), (0, 5, 2)], 2, "fifo")
    assert r.start == [0, 0]
    assert r.end == [0, 5]
    assert r.stats["repeat_pass"] == 1


def test_rejected_job_is_never_queued():
    # C=4: A(0, 3 s, 5 units) -> rejected. B(0, 3 s, 4) starts at 0.
    r = ref([(0, 3, 5), (0, 3, 4)], 4, "fifo")
    assert r.start == [-1, 0]
    assert r.end == [-1, 3]
    assert r.status == ["rejected", "completed"]


def test_kill_mode_cuts_overrunning_jobs():
    # C=4: A(0, run 10, 4 units, requested 4), B(0, run 2, 4, requested 2).
    # kill: A runs min(10, 4) = 4 -> "killed"; B starts at 4, ends 6, "completed".
    # run: A runs 10; B starts at 10.
    jobs = [(0, 10, 4, 4), (0, 2, 4, 2)]
    r = ref(jobs, 4, "fifo", predictor="walltime", overrun="kill")
    assert (r.start, r.end, r.status) == ([0, 4], [4, 6], ["killed", "completed"])
    r = ref(jobs, 4, "fifo", predictor="walltime", overrun="run")
    assert (r.start, r.end, r.status) == ([0, 10], [10, 12], ["completed", "completed"])


def test_overrunning_job_counts_as_ending_now():
    # walltime predictor, C=4: A(0, run 10, 4 units, requested 5), B(0, 3, 2, req 3),
    # C(6, 20, 2, req 20), D(6, 1, 1, req 1)... but nothing fits before A really ends.
    # t=0: A starts (free 0). Head B blocked: A's effective end = 5 -> shadow 5.
    # t=6: C, D arrive. A's estimated end 5 is past -> effective end = now = 6 -> shadow 6,
    #   extra = 0 + 4 - 2 = 2. Nothing fits physically (free 0).
    # t=10: A ends (free 4): B starts (free 2), C starts (free 0), D blocked.
    # t=13: B ends (free 2): D starts.
    jobs = [(0, 10, 4, 5), (0, 3, 2, 3), (6, 20, 2, 20), (6, 1, 1, 1)]
    r = ref(jobs, 4, "easy", predictor="walltime")
    assert r.start == [0, 10, 10, 13]
    assert r.first_shadow == {1: 5, 3: 13}
    # Conservative, t=6: A's effective end is 6, so the profile shows 4 free cores at 6:
    #   B is reserved [6, 9) but does not physically fit (free 0) -> it keeps the
    #   reservation and waits. C: [6, 26) needs 2 but free(6..9) = 2 ✓, then 4 ✓ ->
    #   reserved at 6 too, but does not physically fit either. D: free(6) = 0 -> waits
    #   until 9 (B's reservation ends): reserved [9, 10).
    # t=10: A ends. B [10,13) starts, C [10,30) starts, D: free 0 until 13 -> [13,14).
    # t=13: D starts.
    r = ref(jobs, 4, "conservative", predictor="walltime")
    assert r.start == [0, 10, 10, 13]
    assert r.stats["reserved_now_but_does_not_fit"] >= 2


def test_shadow_now_only_extra_rule_backfills():
    # walltime predictor, C=4: A(0, run 10, 2 units, req 2); at t=5: B(5 s, 4 units),
    # X(5, run 3, 1 unit, req 3), Y(5, run 1, 2 units, req 1).
    # t=0: A starts (free 2). t=5: A's estimated end 2 is past -> effective end 5 = now.
    #   Head B (4) blocked (free 2): shadow = 5 (now), extra = 2 + 2 - 4 = 0.
    #   X fits but 5 + 3 > 5 and 1 > extra 0 -> no. Y fits, 5 + 1 > 5, 2 > 0 -> no.
    # t=10: A ends (free 4): B starts (free 0). t=15: B ends: X (free 3), Y (free 1) start.
    jobs = [(0, 10, 2, 2), (5, 5, 4, 5), (5, 3, 1, 3), (5, 1, 2, 1)]
    r = ref(jobs, 4, "easy", predictor="walltime")
    assert r.start == [0, 10, 15, 15]
    assert r.first_shadow[1] == 5
    assert r.stats["shadow_is_now"] >= 1


def test_conservative_fills_a_hole_without_delaying_anyone():
    # C=4, all at 0: A(10 s, 2), B(10 s, 4), C(5 s, 2), D(12 s, 2).
    # t=0: A [0,10) starts (free 2). B: free(0..10) = 2 < 4 -> [10,20).
    #   C: [0,5) free 2 -> starts now. D: [0,12) overlaps B at 10 -> no; 5: [5,17) no;
    #   10: no; 20: [20,32) -> reserved.
    # t=5: C ends. Re-plan: A [5,10) running. B [10,20). D: at 5 [5,17) hits B -> 20.
    # t=10: A ends: B starts. t=20: D starts.
    jobs = [(0, 10, 2), (0, 10, 4), (0, 5, 2), (0, 12, 2)]
    assert ref(jobs, 4, "conservative").start == [0, 10, 0, 20]
    # EASY: head B shadow 10, extra = 2 + 2 - 4 = 0. C: 5 <= 10 -> starts (free 0).
    #   D does not fit. t=5: C ends (free 2): D: 5 + 12 > 10, 2 > extra 0 -> no.
    #   t=10: B starts. t=20: D starts.
    assert ref(jobs, 4, "easy").start == [0, 10, 0, 20]


def test_zero_estimate_needs_one_second_of_free_cores():
    # Conservative, C=2, all at 0: A(run 5, 2 units) B(run 0, 2 units).
    # A [0,5) starts. B: planned duration max(0, 1) = 1; [0,1) has 0 free -> t=5.
    # t=5: A ends; B starts at 5 and ends at 5 (another pass, nothing left).
    r = ref([(0, 5, 2), (0, 0, 2)], 2, "conservative")
    assert r.start == [0, 5]
    assert r.end == [5, 5]
    # EASY, C=3: A(0, 4 s, 2) running, head B(0, 4 s, 3) blocked (free 1): shadow 4,
    # extra = 1 + 2 - 3 = 0. Z(0, 0 s, 1): fits, 0 + max(0,1) = 1 <= 4 -> backfilled at 0.
    r = ref([(0, 4, 2), (0, 4, 3), (0, 0, 1)], 3, "easy")
    assert r.start == [0, 4, 0]


@pytest.mark.parametrize("bad", [dict(units=[0]), dict(run=[-1]), dict(submit=[1, 0])])
def test_reference_rejects_bad_input(bad):
    base = dict(submit=[0], run=[1], units=[1], requested_time=[1])
    base.update(bad)
    n = len(base["submit"])
    for key in ("run", "units", "requested_time"):
        if len(base[key]) != n:
            base[key] = base[key] * n
    with pytest.raises(ValueError):
        simulate(capacity=4, **base)


# --------------------------------------------------------------------- self-consistency

ALL_POLICIES = [
    Policy("fifo"),
    Policy("sjf"),
    Policy("sjf", skip=True),
    Policy("ljf"),
    Policy("ljf", skip=True),
    Policy("easy"),
    Policy("easy", order="sjf"),
    Policy("easy", reservations=2),
    Policy("easy", reservations=3),
    Policy("conservative"),
]
ALL_SEMANTICS = [
    Semantics(real_estimate=r, running_end=e, k_counts_started=k)
    for r in ("run", "simulated")
    for e in ("estimate", "planned")
    for k in (True, False)
]
CASES = [(p, o) for p in ("walltime", "real") for o in ("run", "kill")]


def run_ref(w: Workload, policy: Policy, predictor: str, overrun: str, semantics=SPEC):
    return simulate(
        **w.as_lists(), capacity=w.capacity, policy=policy, predictor=predictor,
        overrun=overrun, semantics=semantics,
    )


def check_schedule(w: Workload, r) -> None:
    events = []
    for i in range(w.n):
        if w.units[i] > w.capacity:
            assert r.start[i] == r.end[i] == -1
            assert r.status[i] == "rejected"
            continue
        assert r.start[i] >= w.submit[i]
        assert r.end[i] >= r.start[i]
        if r.end[i] == r.start[i]:
            continue  # a 0-second job occupies the empty interval [start, start)
        events.append((r.start[i], 1, w.units[i]))
        events.append((r.end[i], 0, -w.units[i]))
    used = 0
    for _, _, delta in sorted(events):  # ends (0) before starts (1) at equal times
        used += delta
        assert 0 <= used <= w.capacity


@settings(max_examples=40, deadline=None)
@given(workloads(max_jobs=25))
def test_reference_schedules_are_feasible(w):
    for semantics in ALL_SEMANTICS:
        for policy in ALL_POLICIES:
            for predictor, overrun in CASES:
                check_schedule(w, run_ref(w, policy, predictor, overrun, semantics))


@settings(max_examples=60, deadline=None)
@given(workloads(max_jobs=25))
def test_reference_easy_one_reservation_is_textbook_easy(w):
    # Two independent code paths (shadow/extra vs profile) must agree. (Not with
    # running_end="estimate" and k_counts_started=False together: the walk plans a job
    # it starts on [now, now + max(estimate, 1)), EASY plans it as running, ending at
    # now + estimate.)
    for semantics in (SPEC, ENGINE_DOCS, Semantics(running_end="planned")):
        for order in ("fifo", "sjf"):
            for predictor, overrun in CASES:
                a = run_ref(w, Policy("easy", order=order), predictor, overrun, semantics)
                one = Policy("easy", order=order, reservations=1)
                b = run_ref(w, one, predictor, overrun, semantics)
                assert a.start == b.start


@settings(max_examples=60, deadline=None)
@given(workloads(max_jobs=25))
def test_reference_many_reservations_is_conservative(w):
    # With K >= queue length, easy-K is conservative when running jobs are planned like
    # reservations (running_end="planned"); with the written spec's running_end
    # ("start + estimate") only when no estimate is 0.
    k = Policy("easy", reservations=w.n)
    for semantics in ALL_SEMANTICS:
        for predictor, overrun in CASES:
            a = run_ref(w, Policy("conservative"), predictor, overrun, semantics)
            if semantics.running_end == "estimate" and min(a.estimate) < 1:
                continue
            b = run_ref(w, k, predictor, overrun, semantics)
            assert a.start == b.start


@settings(max_examples=60, deadline=None)
@given(workloads(max_jobs=25))
def test_reference_easy_head_never_later_than_its_first_shadow_with_exact_estimates(w):
    for semantics in ALL_SEMANTICS:
        for order in ("fifo", "sjf"):
            for overrun in ("run", "kill"):
                r = run_ref(w, Policy("easy", order=order), "real", overrun, semantics)
                for job, shadow in r.first_shadow.items():
                    assert r.start[job] <= shadow
