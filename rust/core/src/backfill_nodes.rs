//! Backfilling on node-level platforms (`dispatchlab.dispatch.backfill`, the reference
//! planner `_Backfilling._reference_nodes`, whose decisions the fast Python classes
//! `EASY` and `Conservative` make): EASY with K reservations and conservative
//! backfilling, each start carrying its allocation.
//!
//! **The rule** (every pass from scratch): walking the queue in reservation order
//! (queue order, or a static queue priority's with `scope = "queue"`), each job gets
//! the earliest breakpoint of the availability profile ([`NodeProfile`]: the running
//! jobs' releases at their effective planned ends and the earlier placements of the
//! pass) at which the allocator places it for its planned duration (the profile's
//! minimum over the window); when that is now and the allocator also places it in the
//! minimum of the physically free resources and that window, it starts now with that
//! allocation; else it holds the reservation, until K jobs hold one (conservative:
//! every job). Every later job, put back in queue order and then in the backfill scan
//! order, starts now iff the allocator places it in the physically free resources and
//! the profile's minimum over `[now, now + max(estimate, 1))`; a start takes its
//! resources out of both.
//!
//! **Same decisions, less work** (the arguments of the Python fast planners, which
//! rest on the built-in allocators placing a job iff its units fit in total,
//! [`fit_total`]):
//!
//! * a job is offered to the allocator only where its units fit in total;
//! * **the stop rule**: a job can start now only if its units fit in total in the
//!   physically free resources and the profile's minimum from now over its window;
//!   starts and reservations only lower both, so planning stops after the last job
//!   that passes this test (re-tested after every start and every placement that
//!   overlaps its window);
//! * **a bound on each placement**: a job whose per-unit request, units and planned
//!   duration are each at least those of a job placed earlier in the pass at `t'` is
//!   placed no earlier than `t'`;
//! * **EASY (K = 1)** ([`NodeBackfill::easy`]): up to the head every job is placed now
//!   or is the head, so the profile is non-decreasing in time and a window's minimum
//!   is its first matrix: the head's start is found from per-node release events
//!   without building the matrices, and the backfill scan runs in a profile of the
//!   breakpoints now, the head's start and its end, whose windows from now have the
//!   minima of the full profile's (`_Backfill._plan_nodes_easy`);
//! * **EASY's kept plan**: after a pass that started nothing and reserved the head
//!   later than now, when only submissions happened (the same [`NodePass::changes`],
//!   no running job at or past its planned end), only the jobs queued since are
//!   scanned, in the kept profile moved to now (`_Backfill._plan_nodes`).

use crate::alloc::{Allocation, Allocator, MatrixRef, Nodes};
use crate::backfill::Backfill;
use crate::dispatch::{Dispatcher, NodeView, Order, Placement, View};
use crate::node_profile::{fit_total, node_fit, NodeProfile};
use crate::planned;
use crate::state::Running;

type Alloc = Allocation;

/// What a node-level backfilling pass sees.
#[derive(Debug, Clone, Copy)]
pub struct NodePass<'a> {
    /// the current time (s)
    pub now: i64,
    /// resources per node (R)
    pub resources: usize,
    /// the physically free (nodes x R) matrix, row-major
    pub free: &'a [i64],
    /// per job row, the per-unit request (R values each, row-major)
    pub requests: &'a [i64],
    /// units per job row
    pub units: &'a [i64],
    /// each job row's estimate at submission (s)
    pub estimate: &'a [i64],
    /// the waiting job rows, in queue order (ascending rows)
    pub queue: &'a [u32],
    /// the running jobs (raw planned ends), in planned-end order
    pub running: &'a [Running],
    /// by job row, the allocation of every job started so far (a running job's is
    /// where it runs)
    pub allocations: &'a [Allocation],
    /// completions and expiries so far (equal at two passes when only submissions
    /// happened between them)
    pub changes: u64,
}

impl NodePass<'_> {
    /// The pass of `view` and `nodes` (the engine's).
    pub fn of<'a>(view: &View<'a>, nodes: &NodeView<'a>) -> NodePass<'a> {
        NodePass {
            now: view.now,
            resources: nodes.free.cols(),
            free: nodes.free.data(),
            requests: nodes.requests.data(),
            units: view.units,
            estimate: view.estimate,
            queue: view.queue,
            running: view.running.entries(),
            allocations: nodes.allocations,
            changes: view.changes,
        }
    }

    fn request(&self, job: u32) -> &[i64] {
        let r = self.resources;
        &self.requests[job as usize * r..(job as usize + 1) * r]
    }
}

/// The allocator, as the planner calls it: `(per-unit request, units, free matrix)`
/// to an allocation, or None when the job does not fit.
pub type Allocate<'f> = dyn FnMut(&[i64], i64, &[i64]) -> Option<Alloc> + 'f;

/// What an EASY pass that started nothing leaves for the next one.
#[derive(Debug, Clone)]
struct Kept {
    changes: u64,
    /// the profile of the backfill scan (now, the head's start, its end)
    prof: NodeProfile,
    /// the last job row of the queue scanned
    last: u32,
}

/// A release or a start's return, for EASY's head search: `(time, node, units,
/// job row)`.
type Event = (i64, u32, i64, u32);

/// The node-level planner of EASY (`reservations = Some(K)`) and conservative
/// (`None`) (see the module docs), with the allocator given at each pass.
#[derive(Debug, Clone)]
pub struct Planner {
    reservations: Option<usize>,
    /// the backfill scan order
    scan: Order,
    /// the queue priority when the queue is sorted by it (scope "queue")
    priority: Option<Order>,
    prof: NodeProfile,
    kept: Option<Kept>,
    /// conservative: the kept plan's [`NodePass::changes`], free matrix (after its
    /// starts) and number of queue jobs planned (see [`Planner::plan`])
    plan_kept: Option<(u64, Vec<i64>, usize)>,
    /// whether plans are kept between passes (EASY's and conservative's; false: every
    /// pass from scratch, the same decisions)
    keep: bool,
    /// scratch: the physically free matrix and its column sums, a window, the running
    /// releases
    physical: Vec<i64>,
    totals: Vec<i64>,
    /// the stop rule's last candidate: nodes and their units in its window from now
    /// that show it may start (see [`Planner::may_start`])
    last_fits: Vec<(usize, i64)>,
    window: Vec<i64>,
    events: Vec<Event>,
}

impl Planner {
    /// K = `reservations` (None: every job), the backfill `scan` order and the queue
    /// `priority` (Some only with scope "queue"), as [`crate::Backfill`] combines them.
    pub fn new(reservations: Option<usize>, scan: Order, priority: Option<Order>) -> Self {
        Planner {
            reservations,
            scan,
            priority,
            prof: NodeProfile::default(),
            kept: None,
            plan_kept: None,
            keep: true,
            physical: Vec::new(),
            totals: Vec::new(),
            last_fits: Vec::new(),
            window: Vec::new(),
            events: Vec::new(),
        }
    }

    /// One pass: append to `out` the jobs to start now with their allocations.
    pub fn dispatch(
        &mut self,
        p: &NodePass<'_>,
        alloc: &mut Allocate<'_>,
        out: &mut Vec<(u32, Alloc)>,
    ) {
        if p.queue.is_empty() {
            return;
        }
        let kept = self.kept.take().filter(|_| self.keep);
        if self.reservations == Some(1) && self.priority.is_none() {
            if let Some(kept) = kept {
                let first_end = p.running.first().map(|e| e.est_end);
                if kept.changes == p.changes && first_end.is_some_and(|e| e > p.now) {
                    return self.easy_kept(p, kept, alloc, out);
                }
            }
        }
        let mut jobs = p.queue.to_vec();
        if let Some(priority) = &self.priority {
            priority.sort(&mut jobs, p.estimate);
        }
        match self.reservations {
            Some(1) => self.easy(p, &jobs, alloc, out),
            k => self.plan(p, &jobs, k.unwrap_or(usize::MAX), alloc, out),
        }
    }

    /// `jobs` (a tail of the reservation order) in queue order, then in the scan order.
    fn in_scan_order(&self, p: &NodePass<'_>, jobs: &[u32]) -> Vec<u32> {
        let mut rest = jobs.to_vec();
        if self.priority.is_some() || !self.scan.is_fifo() {
            self.scan.sort(&mut rest, p.estimate);
        }
        rest
    }

    /// Start `job` now with `a`: its resources leave `physical` (and the caller's
    /// profile).
    fn take(physical: &mut [i64], r: usize, request: &[i64], a: &Alloc) {
        for (&node, &count) in a.nodes.iter().zip(&a.counts) {
            let row = &mut physical[node as usize * r..(node as usize + 1) * r];
            for (f, &q) in row.iter_mut().zip(request) {
                *f -= count * q;
            }
        }
    }

    /// `physical` := `free` (and its column sums).
    fn set_physical(&mut self, free: &[i64], r: usize) {
        self.physical.clear();
        self.physical.extend_from_slice(free);
        self.totals.clear();
        self.totals.resize(r, 0);
        for row in free.chunks_exact(r) {
            for (t, &f) in self.totals.iter_mut().zip(row) {
                *t += f;
            }
        }
    }

    /// Start a job of per-unit `request` on `a`: its resources leave `physical`.
    fn take_physical(&mut self, r: usize, request: &[i64], a: &Alloc) {
        Self::take(&mut self.physical, r, request, a);
        let units = a.units();
        for (t, &q) in self.totals.iter_mut().zip(request) {
            *t -= units * q;
        }
    }

    /// Whether `units` units of `request` cannot fit the physically free resources
    /// whatever the nodes: some resource's free sum over all nodes is short.
    fn short_in_sum(&self, request: &[i64], units: i64) -> bool {
        self.totals
            .iter()
            .zip(request)
            .any(|(&t, &q)| q > 0 && units.saturating_mul(q) > t)
    }

    /// Whether `units` units of `request` do not fit the physically free resources in
    /// total ([`Planner::short_in_sum`], then [`fit_total`]).
    fn no_room(&self, request: &[i64], units: i64) -> bool {
        self.short_in_sum(request, units) || fit_total(request, units, &self.physical) < units
    }

    /// The backfill scan: each job of `rest`, in order, starts now iff the allocator
    /// places it in the minimum of `physical` and `prof` over its window from now.
    fn backfill(
        &mut self,
        p: &NodePass<'_>,
        prof: &mut NodeProfile,
        rest: &[u32],
        alloc: &mut Allocate<'_>,
        out: &mut Vec<(u32, Alloc)>,
    ) -> bool {
        let r = p.resources;
        let mut started = false;
        // Between two starts (which change `physical` and `prof`), the scan remembers
        // the window it built last (by the profile's breakpoint index) and, per matrix
        // (the physically free one: PHYSICAL; a window: its index) and per-unit
        // request, the fewest units found not to fit in total: a job of that request
        // with at least as many units does not fit either (a node hosting more than
        // that many would have made them fit), so it is skipped without a count.
        const PHYSICAL: usize = usize::MAX;
        let mut window_of: Option<usize> = None;
        let mut short: Vec<(usize, &[i64], i64)> = Vec::new();
        for &job in rest {
            let (u, d, req) = (
                p.units[job as usize],
                planned(p.estimate[job as usize]),
                p.request(job),
            );
            if Self::known_short(&short, PHYSICAL, req, u) {
                continue;
            }
            if self.no_room(req, u) {
                Self::note_short(&mut short, PHYSICAL, req, u);
                continue;
            }
            let k = prof.until_index(p.now + d);
            if Self::known_short(&short, k, req, u) {
                continue;
            }
            if window_of != Some(k) {
                let w = prof.min_until(p.now + d);
                self.window.clear();
                self.window
                    .extend(self.physical.iter().zip(w).map(|(&a, &b)| a.min(b)));
                window_of = Some(k);
            }
            if fit_total(req, u, &self.window) < u {
                Self::note_short(&mut short, k, req, u);
                continue;
            }
            if let Some(a) = alloc(req, u, &self.window) {
                prof.reserve(p.now, d, req, pairs(&a));
                self.take_physical(r, req, &a);
                out.push((job, a));
                started = true;
                window_of = None;
                short.clear();
            }
        }
        started
    }

    /// Whether `short` (see [`Planner::backfill`]) shows `u` units of `req` do not fit
    /// matrix `m`.
    fn known_short(short: &[(usize, &[i64], i64)], m: usize, req: &[i64], u: i64) -> bool {
        short.iter().any(|&(k, q, f)| k == m && f <= u && q == req)
    }

    /// Record in `short` that `u` units of `req` do not fit matrix `m`.
    fn note_short<'q>(short: &mut Vec<(usize, &'q [i64], i64)>, m: usize, req: &'q [i64], u: i64) {
        match short.iter_mut().find(|e| e.0 == m && e.1 == req) {
            Some(e) => e.2 = e.2.min(u),
            None => short.push((m, req, u)),
        }
    }

    /// Whether `job` may start now: its units fit in total in the minimum of the
    /// physically free resources and the profile over its window from now. Nodes are
    /// counted one by one (each stops at its first matrix where it hosts none) until
    /// the units are reached; those nodes and their units are left in
    /// `self.last_fits`, a witness for [`Planner::refit_last`].
    fn may_start(&mut self, p: &NodePass<'_>, prof: &mut NodeProfile, job: u32) -> bool {
        let (u, d, req) = (
            p.units[job as usize],
            planned(p.estimate[job as usize]),
            p.request(job),
        );
        self.last_fits.clear();
        if self.short_in_sum(req, u) {
            return false;
        }
        let r = p.resources;
        let (_, j) = prof.span(p.now, d);
        let c = prof.request_class(req, u);
        if (0..j).any(|k| prof.known_short(c, k)) {
            return false;
        }
        let mut total = 0;
        for (n, phys) in self.physical.chunks_exact(r).enumerate() {
            let mut f = node_fit(req, phys, u);
            for k in 0..j {
                if f == 0 {
                    break;
                }
                f = node_fit(req, &prof.matrix(k)[n * r..(n + 1) * r], f);
            }
            if f > 0 {
                self.last_fits.push((n, f));
                total += f;
                if total >= u {
                    return true;
                }
            }
        }
        false
    }

    /// The stop rule: the last job among `jobs[i..=last]` that may start now, or
    /// None.
    fn last_candidate(
        &mut self,
        p: &NodePass<'_>,
        prof: &mut NodeProfile,
        jobs: &[u32],
        i: usize,
        last: Option<usize>,
    ) -> Option<usize> {
        let last = last?;
        (i..=last).rev().find(|&c| self.may_start(p, prof, jobs[c]))
    }

    /// After a placement on the nodes `placed` (the profile and, after a start, the
    /// physically free resources only dropped there), whether the witness of the last
    /// candidate `job` (`self.last_fits`, see [`Planner::may_start`]) still shows it
    /// may start now: untouched when no witness node was placed on, else those nodes
    /// counted again. False says only that the witness no longer shows it.
    fn refit_last(
        &mut self,
        p: &NodePass<'_>,
        prof: &NodeProfile,
        job: u32,
        placed: &[u32],
    ) -> bool {
        if !self
            .last_fits
            .iter()
            .any(|&(n, _)| placed.contains(&(n as u32)))
        {
            return true;
        }
        let (u, d, req) = (
            p.units[job as usize],
            planned(p.estimate[job as usize]),
            p.request(job),
        );
        let r = p.resources;
        let (_, j) = prof.span(p.now, d);
        let mut total = 0;
        for (n, f) in self.last_fits.iter_mut() {
            let n = *n;
            let mut g = node_fit(req, &self.physical[n * r..(n + 1) * r], u);
            for k in 0..j {
                if g == 0 {
                    break;
                }
                g = node_fit(req, &prof.matrix(k)[n * r..(n + 1) * r], g);
            }
            *f = g;
            total += g;
        }
        total >= u
    }

    /// K reservations (conservative: `k = usize::MAX`), from scratch, but for
    /// conservative's **kept plan**: after a pass that started no job, when only
    /// submissions happened since (the same [`NodePass::changes`] and free matrix, no
    /// running job at or past its planned end), a plan from scratch would place the
    /// jobs that pass planned exactly where they are, with the same allocations (the
    /// same running jobs release at the same times, no breakpoint lies between the two
    /// passes, and a window from now holds the one from the previous now), so the kept
    /// profile is moved to now and only the jobs not planned yet are planned. (After a
    /// pass that started a job, a plan from scratch sees that job from now on while
    /// the jobs before it in the queue were placed without it: their allocations may
    /// differ, so such a plan is not kept. On counting platforms, where a placement is
    /// only a time, [`crate::Backfill`] keeps it.)
    fn plan(
        &mut self,
        p: &NodePass<'_>,
        jobs: &[u32],
        k: usize,
        alloc: &mut Allocate<'_>,
        out: &mut Vec<(u32, Alloc)>,
    ) {
        let now = p.now;
        let r = p.resources;
        let mut prof = std::mem::take(&mut self.prof);
        let first_end = p.running.first().map(|e| e.est_end);
        let mut i = match self.plan_kept.take() {
            Some((changes, free, planned))
                if k == usize::MAX
                    && self.keep
                    && changes == p.changes
                    && free == p.free
                    && first_end.is_none_or(|e| e > now)
                    && planned <= jobs.len() =>
            {
                prof.advance(now);
                planned
            }
            _ => {
                let mut releases: Vec<(i64, u32, i64, &[i64])> = Vec::new();
                for e in p.running {
                    let req = p.request(e.job);
                    let a = &p.allocations[e.job as usize];
                    for (&node, &count) in a.nodes.iter().zip(&a.counts) {
                        releases.push((e.est_end.max(now), node, count, req));
                    }
                }
                prof.reset(now, r, p.free, &mut releases);
                0
            }
        };
        self.set_physical(p.free, p.resources);
        // the placements of this pass: (job, units, duration, start), for the bound
        let mut placed: Vec<(u32, i64, i64, i64)> = Vec::new();
        let mut reserved = 0;
        let mut n_started = 0;
        let mut last = self.last_candidate(p, &mut prof, jobs, i, jobs.len().checked_sub(1));
        while let Some(l) = last.filter(|&l| i <= l && reserved < k) {
            let job = jobs[i];
            let (u, d, req) = (
                p.units[job as usize],
                planned(p.estimate[job as usize]),
                p.request(job),
            );
            let after = placed
                .iter()
                .filter(|&&(pj, pu, pd, _)| {
                    pu <= u && pd <= d && p.request(pj).iter().zip(req).all(|(a, b)| a <= b)
                })
                .map(|e| e.3)
                .max();
            let (t, a) = prof.earliest(req, u, d, after, |w| alloc(req, u, w));
            placed.push((job, u, d, t));
            let mut started = false;
            if t == now {
                let w = prof.min_until(now + d);
                self.window.clear();
                self.window
                    .extend(self.physical.iter().zip(w).map(|(&x, &y)| x.min(y)));
                if let Some(b) = alloc(req, u, &self.window) {
                    prof.reserve(now, d, req, pairs(&b));
                    self.take_physical(r, req, &b);
                    out.push((job, b));
                    started = true;
                    n_started += 1;
                }
            }
            if !started {
                prof.reserve(t, d, req, pairs(&a));
                reserved += 1;
            }
            i += 1;
            let d_last = planned(p.estimate[jobs[l] as usize]);
            if i <= l && t < now + d_last {
                // the placement overlaps the last candidate's window: test it again,
                // then (when it fails) walk down from the job before it
                let placed_on = match out.last() {
                    Some((j, b)) if started && *j == job => b,
                    _ => &a,
                };
                if !self.refit_last(p, &prof, jobs[l], &placed_on.nodes) {
                    last = self.last_candidate(p, &mut prof, jobs, i, Some(l));
                }
            }
        }
        if let Some(l) = last.filter(|&l| i <= l) {
            let rest = self.in_scan_order(p, &jobs[i..=l]);
            self.backfill(p, &mut prof, &rest, alloc, out);
        } else if k == usize::MAX && n_started == 0 {
            // conservative, a pass that started nothing: the plan of the queue's first
            // `i` jobs, which the next pass reuses if only submissions happen before it
            self.plan_kept = Some((p.changes, self.physical.clone(), i));
        }
        self.prof = prof;
    }

    /// EASY (one reservation) from scratch: the jobs before the head are placed in
    /// the profile of the running jobs' per-node release events (non-decreasing in
    /// time: a window's minimum is the matrix at its start), the head gets its
    /// reservation, and the rest is scanned in the profile of the breakpoints now, the
    /// head's start and its end (module docs).
    fn easy(
        &mut self,
        p: &NodePass<'_>,
        jobs: &[u32],
        alloc: &mut Allocate<'_>,
        out: &mut Vec<(u32, Alloc)>,
    ) {
        let now = p.now;
        let r = p.resources;
        let first = out.len();
        self.set_physical(p.free, p.resources);
        // base: the matrix at now (the releases at or before now added); events: the
        // later releases in time order, then the starts' returns
        let mut base = self.physical.clone();
        self.events.clear();
        for e in p.running {
            let (end, job) = (e.est_end, e.job);
            let req = p.request(job);
            let a = &p.allocations[job as usize];
            for (&node, &count) in a.nodes.iter().zip(&a.counts) {
                if end <= now {
                    let row = &mut base[node as usize * r..(node as usize + 1) * r];
                    for (f, &q) in row.iter_mut().zip(req) {
                        *f += count * q;
                    }
                } else {
                    self.events.push((end, node, count, job));
                }
            }
        }
        let mut returns: Vec<Event> = Vec::new();
        let mut m = Vec::new();
        let mut fits = Vec::new();
        let mut i = 0;
        while i < jobs.len() {
            let job = jobs[i];
            i += 1;
            let (u, d, req) = (
                p.units[job as usize],
                planned(p.estimate[job as usize]),
                p.request(job),
            );
            let (t, a) = self.head_start(p, &base, &returns, job, alloc, &mut m, &mut fits);
            if t == now {
                self.window.clear();
                self.window
                    .extend(self.physical.iter().zip(&base).map(|(&x, &y)| x.min(y)));
                if let Some(b) = alloc(req, u, &self.window) {
                    Self::take(&mut base, r, req, &b);
                    self.take_physical(r, req, &b);
                    returns.extend(
                        b.nodes
                            .iter()
                            .zip(&b.counts)
                            .map(|(&node, &count)| (now + d, node, count, job)),
                    );
                    out.push((job, b));
                    continue;
                }
            }
            // the head: the profile of two breakpoints, then its reservation
            let mut prof = if t == now {
                NodeProfile::from_rows(r, vec![now], vec![base.clone()])
            } else {
                NodeProfile::from_rows(r, vec![now, t], vec![base.clone(), m.clone()])
            };
            prof.reserve(t, d, req, pairs(&a));
            if i < jobs.len() {
                let rest = self.in_scan_order(p, &jobs[i..]);
                self.backfill(p, &mut prof, &rest, alloc, out);
            }
            if out.len() == first && t > now && self.priority.is_none() {
                self.kept = Some(Kept {
                    changes: p.changes,
                    prof,
                    last: *p.queue.last().expect("the queue is not empty"),
                });
            }
            return;
        }
    }

    /// EASY's kept plan: only the jobs queued since the kept pass are scanned.
    fn easy_kept(
        &mut self,
        p: &NodePass<'_>,
        mut kept: Kept,
        alloc: &mut Allocate<'_>,
        out: &mut Vec<(u32, Alloc)>,
    ) {
        let first_new = p.queue.partition_point(|&j| j <= kept.last);
        if first_new == p.queue.len() {
            self.kept = Some(kept);
            return;
        }
        let rest = self.in_scan_order(p, &p.queue[first_new..]);
        kept.prof.advance(p.now);
        self.set_physical(p.free, p.resources);
        if !self.backfill(p, &mut kept.prof, &rest, alloc, out) {
            kept.last = *p.queue.last().expect("the queue is not empty");
            self.kept = Some(kept);
        }
    }

    /// The earliest breakpoint (now, or a release or return time) at which the
    /// allocator places `job` in the matrix in force then (`base` at now, plus the
    /// events up to then): `(t, allocation)`, the matrix left in `m`. `fits`: scratch
    /// (each node's units, clipped to the job's).
    #[allow(clippy::too_many_arguments)]
    fn head_start(
        &self,
        p: &NodePass<'_>,
        base: &[i64],
        returns: &[Event],
        job: u32,
        alloc: &mut Allocate<'_>,
        m: &mut Vec<i64>,
        fits: &mut Vec<i64>,
    ) -> (i64, Alloc) {
        let r = p.resources;
        let (u, req) = (p.units[job as usize], p.request(job));
        m.clear();
        m.extend_from_slice(base);
        fits.clear();
        fits.extend(m.chunks_exact(r).map(|row| node_fit(req, row, u)));
        let mut total: i64 = fits.iter().sum();
        if total >= u {
            if let Some(a) = alloc(req, u, m) {
                return (p.now, a);
            }
        }
        // the running releases (in time order) merged with the starts' returns (all
        // at now + their duration: sorted here)
        let mut ret: Vec<Event> = returns.to_vec();
        ret.sort_unstable_by_key(|e| e.0);
        let (ev, mut a_i, mut b_i) = (&self.events, 0, 0);
        loop {
            let ta = ev.get(a_i).map(|e| e.0);
            let tb = ret.get(b_i).map(|e| e.0);
            let t = match (ta, tb) {
                (Some(x), Some(y)) => x.min(y),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => panic!("a job of {u} units never fits the platform"),
            };
            let mut apply = |e: &Event, m: &mut Vec<i64>, fits: &mut Vec<i64>| {
                let n = e.1 as usize;
                let ereq = p.request(e.3);
                let row = &mut m[n * r..(n + 1) * r];
                for (f, &q) in row.iter_mut().zip(ereq) {
                    *f += e.2 * q;
                }
                let f = node_fit(req, row, u);
                total += f - fits[n];
                fits[n] = f;
            };
            while a_i < ev.len() && ev[a_i].0 == t {
                apply(&ev[a_i], m, fits);
                a_i += 1;
            }
            while b_i < ret.len() && ret[b_i].0 == t {
                apply(&ret[b_i], m, fits);
                b_i += 1;
            }
            if total >= u {
                if let Some(a) = alloc(req, u, m) {
                    return (t, a);
                }
            }
        }
    }
}

/// An allocation's `(node, units)` pairs, for [`NodeProfile::reserve`].
fn pairs(a: &Allocation) -> impl Iterator<Item = (usize, i64)> + Clone + '_ {
    a.nodes
        .iter()
        .zip(&a.counts)
        .map(|(&n, &c)| (n as usize, c))
}

/// `easy` and `conservative` on both kinds of platform: the counting dispatcher
/// ([`Backfill`]) and, on node-level runs, the [`Planner`] with the allocator.
pub struct NodeBackfill {
    counting: Backfill,
    planner: Planner,
    allocator: Box<dyn Allocator>,
}

impl NodeBackfill {
    /// The node-level twin of `counting` (its K, scan order and queue priority), with
    /// `allocator`.
    pub fn new(counting: Backfill, allocator: Box<dyn Allocator>) -> NodeBackfill {
        let (k, scan, priority) = counting.plan_params();
        NodeBackfill {
            planner: Planner::new(k, scan, priority),
            counting,
            allocator,
        }
    }

    /// With `keep` false, every pass is planned from scratch (no plan kept between
    /// passes): the same decisions, more work (for tests).
    pub fn keeping_plans(mut self, keep: bool) -> NodeBackfill {
        self.planner.keep = keep;
        self
    }
}

impl Dispatcher for NodeBackfill {
    fn name(&self) -> &'static str {
        self.counting.name()
    }

    fn start(&mut self, estimates: &[i64]) {
        self.counting.start(estimates);
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        self.counting.dispatch(view, out);
    }

    fn start_nodes(&mut self, nodes: &Nodes) {
        self.allocator.start(nodes);
    }

    fn dispatch_nodes(&mut self, view: &View<'_>, nodes: &NodeView<'_>, out: &mut Vec<Placement>) {
        let pass = NodePass::of(view, nodes);
        let allocator = &mut self.allocator;
        let r = pass.resources;
        // the planner's matrices (window, profile rows) placed on as they are
        let mut alloc = |request: &[i64], units: i64, free: &[i64]| {
            allocator.allocate(request, units, MatrixRef::new(free.len() / r, r, free))
        };
        let mut placed = Vec::new();
        self.planner.dispatch(&pass, &mut alloc, &mut placed);
        out.extend(
            placed
                .into_iter()
                .map(|(job, allocation)| Placement { job, allocation }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First-fit (nodes in index order, as many units per node as fit), or with
    /// `reverse` the nodes in reverse order.
    fn fit_in_order(reverse: bool, request: &[i64], units: i64, free: &[i64]) -> Option<Alloc> {
        let rows: Vec<&[i64]> = free.chunks_exact(request.len()).collect();
        let order: Vec<usize> = if reverse {
            (0..rows.len()).rev().collect()
        } else {
            (0..rows.len()).collect()
        };
        let mut left = units;
        let mut out = Allocation::default();
        for n in order {
            if left == 0 {
                break;
            }
            let c = node_fit(request, rows[n], left);
            if c > 0 {
                out.nodes.push(n as u32);
                out.counts.push(c);
                left -= c;
            }
        }
        (left == 0).then_some(out)
    }

    /// The allocators the tests run: first-fit, first-fit over the nodes in reverse,
    /// then the native ones by name.
    const ALLOCATORS: [&str; 5] = [
        "first-fit",
        "reverse",
        "best-fit",
        "consolidate",
        "energy-consolidate",
    ];

    /// Allocator `which` of [`ALLOCATORS`] on the platform of `c`.
    fn allocator(c: &Case, which: usize) -> impl FnMut(&[i64], i64, &[i64]) -> Option<Alloc> {
        let r = c.r;
        let n = c.free.len() / r;
        let mut native = (which >= 2).then(|| {
            let mut a = crate::alloc::make_allocator(ALLOCATORS[which]).unwrap();
            a.start(&Nodes::plain(
                crate::alloc::NodeMatrix::new("cap", n, r, c.cap.clone()).unwrap(),
            ));
            a
        });
        move |q: &[i64], u: i64, f: &[i64]| match native.as_mut() {
            None => fit_in_order(which == 1, q, u, f),
            Some(a) => a.allocate(q, u, MatrixRef::new(n, r, f)),
        }
    }

    /// An allocation of `(node, units)` pairs.
    fn al(pairs: &[(u32, i64)]) -> Allocation {
        Allocation {
            nodes: pairs.iter().map(|p| p.0).collect(),
            counts: pairs.iter().map(|p| p.1).collect(),
        }
    }

    fn running(est_end: i64, job: u32) -> Running {
        Running {
            est_end,
            job,
            units: 0,
        }
    }

    /// A pass's inputs, owned.
    struct Case {
        now: i64,
        r: usize,
        cap: Vec<i64>,
        free: Vec<i64>,
        requests: Vec<i64>,
        units: Vec<i64>,
        estimate: Vec<i64>,
        queue: Vec<u32>,
        running: Vec<Running>,
        allocs: Vec<Alloc>,
    }

    impl Case {
        fn pass(&self) -> NodePass<'_> {
            NodePass {
                now: self.now,
                resources: self.r,
                free: &self.free,
                requests: &self.requests,
                units: &self.units,
                estimate: &self.estimate,
                queue: &self.queue,
                running: &self.running,
                allocations: &self.allocs,
                changes: 0,
            }
        }
    }

    /// The reference rule of the module docs, in plain loops (no fast path: every
    /// breakpoint tried, every window reduced, every job offered to the allocator).
    fn reference(c: &Case, k: usize, scan: &Order, which: usize) -> Vec<(u32, Alloc)> {
        let mut alloc = allocator(c, which);
        let p = c.pass();
        let (now, r) = (c.now, c.r);
        let req = |j: u32| &c.requests[j as usize * r..(j as usize + 1) * r];
        let mut releases = Vec::new();
        for e in &c.running {
            let a = &c.allocs[e.job as usize];
            for (&node, &count) in a.nodes.iter().zip(&a.counts) {
                releases.push((e.est_end.max(now), node, count, req(e.job)));
            }
        }
        let mut prof = NodeProfile::default();
        prof.reset(now, r, &c.free, &mut releases);
        let mut physical = c.free.clone();
        let mut out = Vec::new();
        let mut w = Vec::new();
        type A<'x> = dyn FnMut(&[i64], i64, &[i64]) -> Option<Alloc> + 'x;
        let mut start_now =
            |alloc: &mut A<'_>, prof: &mut NodeProfile, physical: &mut Vec<i64>, j: u32| {
                let (u, d) = (c.units[j as usize], planned(c.estimate[j as usize]));
                prof.window_min(now, d, &mut w);
                let m: Vec<i64> = physical.iter().zip(&w).map(|(&a, &b)| a.min(b)).collect();
                let Some(a) = alloc(req(j), u, &m) else {
                    return false;
                };
                prof.reserve(now, d, req(j), pairs(&a));
                Planner::take(physical, r, req(j), &a);
                out.push((j, a));
                true
            };
        let mut reserved = 0;
        let mut i = 0;
        while i < c.queue.len() && reserved < k {
            let j = c.queue[i];
            i += 1;
            let (u, d) = (c.units[j as usize], planned(c.estimate[j as usize]));
            // every breakpoint in turn, its window's minimum offered to the allocator
            let (t, a) = (0..prof.times().len())
                .find_map(|k| {
                    let t = prof.times()[k];
                    let mut win = Vec::new();
                    prof.window_min(t, d, &mut win);
                    alloc(req(j), u, &win).map(|a| (t, a))
                })
                .expect("fits the last matrix");
            if !(t == now && start_now(&mut alloc, &mut prof, &mut physical, j)) {
                prof.reserve(t, d, req(j), pairs(&a));
                reserved += 1;
            }
        }
        let mut rest = c.queue[i..].to_vec();
        scan.sort(&mut rest, &c.estimate);
        for j in rest {
            start_now(&mut alloc, &mut prof, &mut physical, j);
        }
        let _ = p;
        out
    }

    fn run(c: &Case, k: Option<usize>, scan: Order, which: usize) -> Vec<(u32, Alloc)> {
        let mut b = Planner::new(k, scan, None);
        let mut out = Vec::new();
        let mut alloc = allocator(c, which);
        b.dispatch(&c.pass(), &mut alloc, &mut out);
        out
    }

    #[test]
    fn hand_computed_easy_and_conservative() {
        // 2 nodes x (cores, GPUs): node 0 [4, 1], node 1 [4, 0]; now = 10; free: node 0
        // [2, 0], node 1 [0, 0]. Running: job 0 (1 unit of [2, 1] on node 0) to 50,
        // job 1 (2 units of [2, 0] on node 1) to 30. Waiting:
        // job 2: 1 unit of [3, 1], 100 s: node 0 at 50 (the head; node 0 [1, 0] left);
        // job 3: 2 units of [1, 0], 15 s: node 0 now (ends at 25, before 50);
        // job 4: 1 unit of [4, 0], 100 s: node 1 from 30 only;
        // job 5: 1 unit of [2, 0], 20 s: node 0's cores went to job 3, node 1 is busy.
        let c = Case {
            now: 10,
            r: 2,
            cap: vec![4, 1, 4, 0],
            free: vec![2, 0, 0, 0],
            requests: vec![2, 1, 2, 0, 3, 1, 1, 0, 4, 0, 2, 0],
            units: vec![1, 2, 1, 2, 1, 1],
            estimate: vec![100, 100, 100, 15, 100, 20],
            queue: vec![2, 3, 4, 5],
            running: vec![running(30, 1), running(50, 0)],
            allocs: vec![al(&[(0, 1)]), al(&[(1, 2)])],
        };
        let easy = run(&c, Some(1), Order::Fifo, 0);
        assert_eq!(easy, vec![(3, al(&[(0, 2)]))]);
        assert_eq!(easy, reference(&c, 1, &Order::Fifo, 0));
        let cons = run(&c, None, Order::Fifo, 0);
        assert_eq!(cons, vec![(3, al(&[(0, 2)]))]);
        assert_eq!(cons, reference(&c, usize::MAX, &Order::Fifo, 0));
        // with job 3 lasting 45 s (to 55, past job 2's start at 50) it cannot start (1
        // core of node 0 is left beside job 2): job 5 (ends at 30) takes node 0 instead
        let mut long = c;
        long.estimate[3] = 45;
        assert_eq!(
            run(&long, Some(1), Order::Fifo, 0),
            vec![(5, al(&[(0, 1)]))]
        );
        assert_eq!(run(&long, None, Order::Fifo, 0), vec![(5, al(&[(0, 1)]))]);
        // job 3 asking 1 unit then fits beside job 2 (and job 5 does not: 1 core left)
        long.units[3] = 1;
        assert_eq!(
            run(&long, Some(1), Order::Fifo, 0),
            vec![(3, al(&[(0, 1)]))]
        );
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> i64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n) as i64
        }
    }

    fn random_case(rng: &mut Rng) -> Case {
        let n = 1 + rng.below(4) as usize;
        let r = 1 + rng.below(3) as usize;
        let cap: Vec<i64> = (0..n * r).map(|_| rng.below(5)).collect();
        let now = 100;
        let mut free = cap.clone();
        let (mut requests, mut units, mut estimate) = (Vec::new(), Vec::new(), Vec::new());
        let (mut running, mut allocs, mut queue) = (Vec::new(), Vec::new(), Vec::new());
        let n_jobs = 2 + rng.below(12) as u32;
        for j in 0..n_jobs {
            // a request that fits the empty platform
            let (req, u) = loop {
                let req: Vec<i64> = (0..r).map(|_| rng.below(3)).collect();
                let u = 1 + rng.below(4);
                if fit_total(&req, u, &cap) >= u {
                    break (req, u);
                }
            };
            requests.extend_from_slice(&req);
            units.push(u);
            estimate.push(rng.below(60));
            let a = if rng.below(2) == 0 {
                fit_in_order(false, &req, u, &free)
            } else {
                None
            };
            match a {
                Some(a) => {
                    Planner::take(&mut free, r, &req, &a);
                    running.push(self::running(now - 30 + rng.below(80), j));
                    allocs.push(a);
                }
                None => {
                    queue.push(j);
                    allocs.push(Allocation::default());
                }
            }
        }
        running.sort_unstable();
        Case {
            now,
            r,
            cap,
            free,
            requests,
            units,
            estimate,
            queue,
            running,
            allocs,
        }
    }

    #[test]
    fn fast_paths_make_the_reference_decisions() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let c = random_case(&mut rng);
            if c.queue.is_empty() {
                continue;
            }
            for (which, name) in ALLOCATORS.iter().enumerate() {
                for scan in [Order::Fifo, Order::Sjf] {
                    for k in [Some(1), Some(2), None] {
                        let kk = k.unwrap_or(usize::MAX);
                        assert_eq!(
                            run(&c, k, scan.clone(), which),
                            reference(&c, kk, &scan, which),
                            "k {k:?} scan {scan:?} {} queue {:?}",
                            name,
                            c.queue
                        );
                    }
                }
            }
        }
    }
}
