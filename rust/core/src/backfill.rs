//! Backfilling on counting platforms (`dispatchlab.dispatch.backfill`, the reference
//! planners `ReferenceEASY` and `ReferenceConservative`, whose decisions the fast
//! Python classes `EASY` and `Conservative` make): EASY with K reservations and
//! conservative backfilling.

use crate::dispatch::{Dispatcher, Order, OrderParam, Params, View};
use crate::planned;
use crate::profile::CoreProfile;
use crate::state::Running;
use crate::waiting::WaitingTree;
use crate::Error;

/// What an EASY pass leaves for the next one when only submissions happen between
/// them (see [`Backfill::easy`]).
#[derive(Debug, Clone, Copy)]
struct EasyKept {
    /// the pass's [`View::changes`]
    changes: u64,
    /// the free cores after its starts
    free: i64,
    /// the head's row and cores
    head: u32,
    need: i64,
    /// the shadow time and the extra cores left (None: not computed, no job fitted)
    shadow: Option<(i64, i64)>,
    /// the last job row in its queue
    last: u32,
}

/// EASY (`reservations = Some(K)`) and conservative (`None`) backfilling.
///
/// **The queue** is walked in *reservation order*: queue order, or with a queue
/// priority (`scope = "queue"`) the priority's order.
///
/// **EASY, K = 1** (Mu'alem & Feitelson 2001):
/// 1. start jobs in reservation order while they fit;
/// 2. the first job that does not fit (the head) gets a reservation at its shadow
///    time: the earliest time it fits, releasing running jobs in planned-end order (a
///    planned end already past counts as now) and the jobs started in step 1 at
///    `now + max(estimate, 1)`. The extra cores are those free at the shadow time,
///    counting every job whose planned end is at or before it, minus the head's;
/// 3. the jobs after the head, put back in queue order and then in the backfill scan
///    order (`order`: fifo, sjf, or a static ordering), are scanned: a job that fits
///    now starts if `now + max(estimate, 1) <= shadow`, or else if it also fits in the
///    extra cores, which it then consumes.
///
/// **K >= 2 and conservative** (every waiting job reserved): walking the queue in
/// reservation order, each job takes its earliest fit in the availability profile
/// ([`CoreProfile`]: the running jobs' releases and earlier reservations); it starts
/// now when that fit is now and it physically fits the free cores, else it holds the
/// reservation, until K jobs hold one; every later job, in the scan order, starts now
/// iff it fits the free cores and the profile over `[now, now + max(estimate, 1))`.
#[derive(Debug, Clone)]
pub struct Backfill {
    name: &'static str,
    /// K; None: every waiting job (conservative)
    reservations: Option<usize>,
    /// the backfill scan order
    scan: Order,
    /// the queue priority when the queue is sorted by it (scope "queue")
    priority: Option<Order>,
    jobs: Vec<u32>,
    rest: Vec<u32>,
    started: Vec<(i64, i64)>,
    prof: CoreProfile,
    prefix_min: Vec<i64>,
    /// EASY: what the previous pass left (see [`Backfill::easy`])
    easy_kept: Option<EasyKept>,
    /// EASY: the waiting jobs in the backfill scan order (see [`Backfill::easy`])
    tree: Option<WaitingTree>,
    /// the waiting jobs in the queue priority's order (scope "queue"; see the
    /// dispatch)
    priority_tree: Option<WaitingTree>,
    /// conservative: the kept plan's [`View::changes`], free cores and number of
    /// queue jobs planned (see [`Backfill::conservative`])
    kept: Option<(u64, i64, usize)>,
}

/// `easy` (K = `params.reservations`, default 1) or `conservative` (`name`) with the
/// `order`, `priority` and `scope` of `params` (defaults fifo, fcfs, backfill), as
/// [`crate::make_dispatcher_with`] builds them (the caller checks the parameters
/// there first).
pub fn make_backfill(name: &str, params: &Params) -> Result<Backfill, Error> {
    let order = params
        .order
        .clone()
        .unwrap_or(OrderParam::Order(Order::Fifo));
    if name == "conservative" {
        return Backfill::new("conservative", None, order, Order::Fifo, "backfill");
    }
    let k = params.reservations.unwrap_or(1).max(1);
    Backfill::new(
        "easy",
        Some(usize::try_from(k).unwrap_or(usize::MAX)),
        order,
        params.priority.clone().unwrap_or(Order::Fifo),
        params.scope.as_deref().unwrap_or("backfill"),
    )
}

impl Backfill {
    /// A backfilling dispatcher named `name` with K = `reservations` (None: every job),
    /// the backfill scan `order`, the queue `priority` and its `scope`, checked and
    /// combined as `dispatchlab.dispatch.backfill._Backfilling` does: with a priority
    /// other than fifo, scope `"backfill"` makes the priority the scan order (then
    /// `order` must be fifo) and scope `"queue"` sorts the queue by it;
    /// `order = Priority` scans in the priority's order.
    pub fn new(
        name: &'static str,
        reservations: Option<usize>,
        order: OrderParam,
        priority: Order,
        scope: &str,
    ) -> Result<Backfill, Error> {
        let fail = |field, message: &str| Error::Input {
            field,
            row: None,
            message: message.to_string(),
        };
        if scope != "backfill" && scope != "queue" {
            return Err(fail(
                "scope",
                &format!("scope must be one of backfill, queue, got {scope:?}"),
            ));
        }
        let fcfs = priority.is_fifo();
        let scan = match order {
            OrderParam::Priority if fcfs => {
                return Err(fail(
                    "order",
                    "order=priority needs a priority other than fcfs",
                ))
            }
            OrderParam::Priority => priority.clone(),
            OrderParam::Order(o) if scope == "backfill" && !fcfs => {
                if !o.is_fifo() {
                    return Err(fail(
                        "order",
                        "with scope=backfill the priority orders the backfill scan: give \
                         either order or priority, not both",
                    ));
                }
                priority.clone()
            }
            OrderParam::Order(o) => o,
        };
        Ok(Backfill {
            name,
            reservations,
            scan,
            priority: (scope == "queue" && !fcfs).then_some(priority),
            jobs: Vec::new(),
            rest: Vec::new(),
            started: Vec::new(),
            prof: CoreProfile::default(),
            prefix_min: Vec::new(),
            kept: None,
            easy_kept: None,
            tree: None,
            priority_tree: None,
        })
    }

    /// K (None: every job), the backfill scan order and the queue priority (scope
    /// "queue" only), for the node-level planner ([`crate::backfill_nodes`]).
    pub fn plan_params(&self) -> (Option<usize>, Order, Option<Order>) {
        (self.reservations, self.scan.clone(), self.priority.clone())
    }

    /// The head's shadow time and extra cores: `need` (> `free`) cores, releasing the
    /// running jobs (in planned-end order, a past end counting as `now`) and the
    /// `(planned end, cores)` of the jobs `started` in this pass (any order) in time
    /// order, all releases at one time together. Only the releases up to the shadow
    /// time are read (the running set is already sorted).
    pub fn shadow_and_extra(
        free: i64,
        need: i64,
        now: i64,
        running: &[Running],
        started: &mut [(i64, i64)],
    ) -> (i64, i64) {
        started.sort_unstable();
        let (mut a, mut b) = (0, 0);
        let mut avail = free;
        loop {
            let ta = running.get(a).map(|e| e.est_end.max(now));
            let tb = started.get(b).map(|s| s.0);
            let t = match (ta, tb) {
                (Some(x), Some(y)) => x.min(y),
                (Some(x), None) | (None, Some(x)) => x,
                // unreachable for a head that fits the empty platform: the engine
                // rejects the others at submission
                (None, None) => return (i64::MAX, 0),
            };
            while a < running.len() && running[a].est_end.max(now) == t {
                avail += running[a].units;
                a += 1;
            }
            while b < started.len() && started[b].0 == t {
                avail += started[b].1;
                b += 1;
            }
            if avail >= need {
                return (t, avail - need);
            }
        }
    }

    /// `self.rest` := the jobs `jobs` (a tail of the reservation order) in queue
    /// order, then in the backfill scan order.
    fn rest_in_scan_order(&mut self, view: &View<'_>, jobs: &[u32]) {
        self.rest.clear();
        self.rest.extend_from_slice(jobs);
        if self.priority.is_some() || !self.scan.is_fifo() {
            self.scan.sort(&mut self.rest, view.estimate);
        }
    }

    /// EASY with one reservation (steps 1-3 of the type's docs).
    ///
    /// **The backfill scan** walks the waiting jobs in the scan order through the
    /// [`WaitingTree`] kept in that order (built by [`Dispatcher::start`]): the next job
    /// that may start is found in about O(log n) however long the queue; without
    /// `start` (a caller outside the engine) the rest of the queue is sorted and walked.
    /// In queue order (fifo scan, no queue priority) the tree is kept in step only
    /// while the queue is long ([`WaitingTree::sync_if_long`]): a short queue is walked
    /// job by job, which costs less than keeping a tree over every job row in step
    /// (the same jobs are found either way).
    ///
    /// **Only submissions since the previous pass** (the same [`View::changes`] and
    /// free cores, a running job and none at or past its planned end; no queue
    /// priority): every job already waiting fails again (the head still does not fit;
    /// the free cores, the shadow time and the extra cores are those the previous pass
    /// left, and `now + max(estimate, 1) <= shadow` only gets harder), so only the jobs
    /// queued since need a look, as the Python `EASY` does.
    fn easy(&mut self, view: &View<'_>, jobs: &[u32], out: &mut Vec<u32>) {
        let now = view.now;
        let units = view.units;
        let mut free = view.free_cores;
        let kept = self.easy_kept.take().filter(|k| {
            k.changes == view.changes
                && k.free == free
                && self.priority.is_none()
                && view.running.first_end().is_some_and(|e| e > now)
        });
        let mut tree = self.tree.take();
        // the tree walks the backfill scan; in queue order (fifo scan, no queue
        // priority) only a long queue is worth keeping it in step: a short one is
        // walked job by job below
        let walk = match tree.as_mut() {
            Some(tree) if self.priority.is_none() && self.scan.is_fifo() => tree.sync_if_long(view),
            Some(tree) => {
                tree.sync(view);
                true
            }
            None => false,
        };
        let (head, need, mut shadow, i) = match kept {
            Some(k) => {
                // the jobs the previous pass started run now: none started in this one
                self.started.clear();
                let first_new = jobs.partition_point(|&j| j <= k.last);
                (k.head, k.need, k.shadow, first_new)
            }
            None => {
                let mut i = 0;
                while i < jobs.len() && units[jobs[i] as usize] <= free {
                    free -= units[jobs[i] as usize];
                    out.push(jobs[i]);
                    i += 1;
                }
                if let Some(tree) = tree.as_mut() {
                    tree.remove(&jobs[..i]);
                }
                if i == jobs.len() {
                    self.tree = tree;
                    return;
                }
                self.started.clear();
                self.started.extend(jobs[..i].iter().map(|&j| {
                    let j = j as usize;
                    (now + planned(view.estimate[j]), units[j])
                }));
                (jobs[i], units[jobs[i] as usize], None, i + 1)
            }
        };
        // the shadow time and extra cores are computed when a job first fits the free
        // cores (before any backfilling, so with the free cores after step 1)
        let free_after_step_1 = free;
        let mut extra_used = 0;
        if let Some(tree) = tree.as_mut().filter(|_| walk) {
            // the leaves to scan: after the kept pass in queue order, those of the new
            // jobs (the old ones fail again); else all (the jobs started in step 1 are
            // out, and the head, which does not fit the free cores, never qualifies)
            let mut from = match kept {
                Some(_) if self.scan.is_fifo() => jobs.get(i).map_or(usize::MAX, |&j| j as usize),
                _ => 0,
            };
            let scanned = out.len();
            while free > 0 {
                let (shadow_t, extra) = match shadow {
                    Some(found) => found,
                    None if tree.next(from, free, i64::MAX, 0).is_none() => break,
                    None => {
                        let found = Self::shadow_and_extra(
                            free_after_step_1,
                            need,
                            now,
                            view.running.entries(),
                            &mut self.started,
                        );
                        shadow = Some(found);
                        found
                    }
                };
                let Some(leaf) = tree.next(from, free, shadow_t - now, extra - extra_used) else {
                    break;
                };
                let job = tree.row(leaf);
                let u = units[job as usize];
                if now + planned(view.estimate[job as usize]) > shadow_t {
                    extra_used += u;
                }
                free -= u;
                out.push(job);
                from = leaf as usize + 1;
            }
            tree.remove(&out[scanned..]);
        } else {
            // the rest of the queue in queue order, then in the scan order
            self.rest_in_scan_order(view, &jobs[i..]);
            for &job in &self.rest {
                if free <= 0 {
                    break;
                }
                let u = units[job as usize];
                if u > free {
                    continue;
                }
                let (shadow_t, extra) = match shadow {
                    Some(found) => found,
                    None => {
                        let found = Self::shadow_and_extra(
                            free_after_step_1,
                            need,
                            now,
                            view.running.entries(),
                            &mut self.started,
                        );
                        shadow = Some(found);
                        found
                    }
                };
                if now + planned(view.estimate[job as usize]) > shadow_t {
                    if u > extra - extra_used {
                        continue;
                    }
                    extra_used += u;
                }
                free -= u;
                out.push(job);
            }
        }
        self.tree = tree;
        let shadow = shadow.map(|(t, extra)| (t, extra - extra_used));
        self.easy_kept = Some(EasyKept {
            changes: view.changes,
            free,
            head,
            need,
            shadow,
            last: *view.queue.last().expect("the queue is not empty"),
        });
    }

    /// Whether a job of `u` cores and planning duration `d` passes the test every job
    /// starting now passes: it fits the free cores and the profile over its window.
    fn may_start(&self, now: i64, free: i64, u: i64, d: i64) -> bool {
        u <= free && u <= self.prof.min_over(now, d)
    }

    /// Conservative's stop rule: the last job among `jobs[i..=last]` that may start now
    /// ([`Backfill::may_start`]), or None. Both limits only shrink during a pass, so a
    /// job that fails once fails for the rest of the pass: the jobs after the last
    /// candidate start nothing, and planning stops there.
    fn last_candidate(
        &mut self,
        view: &View<'_>,
        jobs: &[u32],
        free: i64,
        i: usize,
        last: Option<usize>,
    ) -> Option<usize> {
        let last = last?;
        if last < i || free <= 0 {
            return None;
        }
        let now = view.now;
        let job = |c: usize| {
            let j = jobs[c] as usize;
            (view.units[j], planned(view.estimate[j]))
        };
        let (u, d) = job(last);
        if self.may_start(now, free, u, d) {
            return Some(last);
        }
        self.prof.prefix_min(&mut self.prefix_min);
        (i..last).rev().find(|&c| {
            let (u, d) = job(c);
            u <= free && u <= self.prof.min_until(&self.prefix_min, now + d)
        })
    }

    /// Conservative backfilling: every job reserved in queue order, with the decisions
    /// of a plan from scratch at every pass, and:
    ///
    /// * **the stop rule** ([`Backfill::last_candidate`]): planning stops after the
    ///   last job that may still start now (re-tested after every start and every
    ///   reservation overlapping its window);
    /// * **a bound on each placement**: a job with at least the cores and the duration
    ///   of the job placed just before it is placed no earlier ([`CoreProfile::place`]);
    /// * **the plan kept between passes** when only submissions happened (the same
    ///   [`View::changes`] and free cores, no running job at or past its planned end): a
    ///   plan from scratch would reserve the jobs planned before exactly where they are
    ///   (the same running jobs release at the same times and no breakpoint lies
    ///   between the two passes), so the kept profile is moved to now and only the jobs
    ///   not planned yet are planned.
    fn conservative(&mut self, view: &View<'_>, jobs: &[u32], out: &mut Vec<u32>) {
        let now = view.now;
        let (units, estimate) = (view.units, view.estimate);
        let mut free = view.free_cores;
        let n = jobs.len();
        let first_end = view.running.first_end();
        let mut i = match self.kept.take() {
            Some((changes, kept_free, planned))
                if changes == view.changes
                    && kept_free == free
                    && first_end.is_none_or(|e| e > now)
                    && planned <= n =>
            {
                self.prof.advance(now);
                planned
            }
            _ => {
                self.prof.reset(now, free, view.releases());
                0
            }
        };
        let mut n_started = 0;
        let (mut pu, mut pd, mut pt) = (-1, -1, now); // the previous placement
        let mut last = self.last_candidate(view, jobs, free, i, n.checked_sub(1));
        while let Some(l) = last.filter(|&l| i <= l) {
            let j = jobs[i] as usize;
            let (u, d) = (units[j], planned(estimate[j]));
            let t = self.prof.place(u, d, (u >= pu && d >= pd).then_some(pt));
            (pu, pd, pt) = (u, d, t);
            i += 1;
            if t == now && u <= free {
                free -= u;
                out.push(jobs[i - 1]);
                n_started += 1;
                last = self.last_candidate(view, jobs, free, i, Some(l));
            } else if t < now + planned(estimate[jobs[l] as usize]) {
                // the reservation overlaps the last candidate's window
                last = self.last_candidate(view, jobs, free, i, Some(l));
            }
        }
        self.kept = Some((view.changes, free, i - n_started));
    }

    /// K reservations with the availability profile (steps of the type's docs).
    ///
    /// The backfill scan after the K reservations walks the [`WaitingTree`] kept in the
    /// scan order (without [`Dispatcher::start`]: the rest of the queue, sorted): the
    /// next job that fits the free cores and the profile over its window is found
    /// without looking at the others. The reserved jobs stay in the tree: none of them
    /// fits both now (its earliest fit was later, or now without the free cores, and
    /// both only shrink).
    ///
    /// `walk`: the queue priority's tree, from which the reservation order is read
    /// (then `jobs` is empty); None: `jobs` is that order.
    fn plan(
        &mut self,
        view: &View<'_>,
        jobs: &[u32],
        walk: Option<&WaitingTree>,
        k: Option<usize>,
        out: &mut Vec<u32>,
    ) {
        let Some(k) = k else {
            return self.conservative(view, jobs, out);
        };
        let mut tree = self.tree.take();
        if let Some(tree) = tree.as_mut() {
            tree.sync(view);
        }
        let before = out.len();
        self.plan_k(view, jobs, walk, k, tree.as_ref(), out);
        if let Some(tree) = tree.as_mut() {
            tree.remove(&out[before..]);
        }
        self.tree = tree;
    }

    /// [`Backfill::plan`] with `tree` in step with the queue (or None); the jobs it
    /// starts stay in the tree.
    fn plan_k(
        &mut self,
        view: &View<'_>,
        jobs: &[u32],
        walk: Option<&WaitingTree>,
        k: usize,
        tree: Option<&WaitingTree>,
        out: &mut Vec<u32>,
    ) {
        let now = view.now;
        let (units, estimate) = (view.units, view.estimate);
        let mut free = view.free_cores;
        let first = out.len();
        self.prof.reset(now, free, view.releases());
        // no waiting job can start once min(free, free at now) is below its cores
        let smallest = match tree {
            Some(tree) => tree.min_units(),
            None => jobs
                .iter()
                .map(|&j| units[j as usize])
                .min()
                .unwrap_or(i64::MAX),
        };
        // the jobs in reservation order, one at a time
        let mut walk_from = 0;
        let mut next = |i: usize| match walk {
            None => jobs.get(i).copied(),
            Some(order) => {
                let leaf = order.next_by(walk_from, &|u, _| u < i64::MAX)?;
                walk_from = leaf as usize + 1;
                Some(order.row(leaf))
            }
        };
        let mut reserved = 0;
        let mut i = 0;
        while reserved < k {
            if free.min(self.prof.levels()[0]) < smallest {
                return;
            }
            let Some(job) = next(i) else {
                break;
            };
            let (u, d) = (units[job as usize], planned(estimate[job as usize]));
            let t = self.prof.place(u, d, None);
            if t == now && u <= free {
                free -= u;
                out.push(job);
            } else {
                reserved += 1;
            }
            i += 1;
        }
        if i == view.queue.len() || free <= 0 {
            return;
        }
        let Some(tree) = tree else {
            self.rest_in_scan_order(view, &jobs[i..]);
            let rest = std::mem::take(&mut self.rest);
            for &job in &rest {
                if free <= 0 {
                    break;
                }
                let (u, d) = (units[job as usize], planned(estimate[job as usize]));
                if self.may_start(now, free, u, d) {
                    self.prof.reserve(now, d, u);
                    free -= u;
                    out.push(job);
                }
            }
            self.rest = rest;
            return;
        };
        // the jobs started above are still in the tree: skip them
        let started = out[first..].to_vec();
        let mut from = 0;
        while free > 0 {
            self.prof.prefix_min(&mut self.prefix_min);
            let (prof, pm) = (&self.prof, &self.prefix_min);
            let test = |u: i64, d: i64| u <= free && u <= prof.min_until(pm, now + d);
            let Some(leaf) = tree.next_by(from, &test) else {
                break;
            };
            from = leaf as usize + 1;
            let job = tree.row(leaf);
            if started.contains(&job) {
                continue;
            }
            let (u, d) = (units[job as usize], planned(estimate[job as usize]));
            self.prof.reserve(now, d, u);
            free -= u;
            out.push(job);
        }
    }
}

impl Dispatcher for Backfill {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(&mut self, estimates: &[i64]) {
        let rows = || -> Vec<u32> {
            (0..estimates.len())
                .map(|j| u32::try_from(j).expect("at most u32::MAX jobs"))
                .collect()
        };
        if let Some(priority) = &self.priority {
            // the waiting jobs in the priority's order (see dispatch)
            let mut order = rows();
            priority.sort(&mut order, estimates);
            self.priority_tree = Some(WaitingTree::in_order(&order));
        }
        if self.reservations.is_some() {
            // EASY's waiting jobs in the backfill scan order (see Backfill::easy, plan)
            self.tree = Some(if self.scan.is_fifo() {
                WaitingTree::default()
            } else {
                let mut order = rows();
                self.scan.sort(&mut order, estimates);
                WaitingTree::in_order(&order)
            });
        }
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let mut jobs = std::mem::take(&mut self.jobs);
        let mut ptree = self.priority_tree.take();
        let queue: &[u32] = match (&self.priority, ptree.as_mut()) {
            (None, _) => view.queue,
            (Some(_), Some(ptree)) => {
                // EASY: the queue's first jobs in the priority's order, those that fit
                // one after the other and the head (all the pass walks before the
                // backfill scan); K reservations read the order from the tree
                ptree.sync(view);
                jobs.clear();
                let mut free = view.free_cores;
                let mut from = 0;
                while self.reservations == Some(1) {
                    let Some(leaf) = ptree.next_by(from, &|u, _| u < i64::MAX) else {
                        break;
                    };
                    let job = ptree.row(leaf);
                    jobs.push(job);
                    from = leaf as usize + 1;
                    let u = view.units[job as usize];
                    if u > free {
                        break; // the head
                    }
                    free -= u;
                }
                &jobs
            }
            (Some(priority), None) => {
                jobs.clear();
                jobs.extend_from_slice(view.queue);
                priority.sort(&mut jobs, view.estimate);
                &jobs
            }
        };
        let before = out.len();
        match self.reservations {
            Some(1) => self.easy(view, queue, out),
            k => {
                let walk = if self.priority.is_some() {
                    ptree.as_ref()
                } else {
                    None
                };
                self.plan(view, queue, walk, k, out)
            }
        }
        if let Some(ptree) = ptree.as_mut() {
            ptree.remove(&out[before..]);
        }
        self.priority_tree = ptree;
        self.jobs = jobs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RunningSet;

    #[test]
    fn shadow_counts_every_release_at_the_shadow_time() {
        let mut running = RunningSet::default();
        running.insert(0, 2, 1); // planned end past: released at now = 5
        running.insert(1, 7, 2);
        running.insert(2, 9, 3);
        // 1 free, head needs 4: releases at 5 (1 core), 7 (2 running + 1 started),
        // 9 (3 cores)
        let mut started = vec![(7, 1)];
        let got = Backfill::shadow_and_extra(1, 4, 5, running.entries(), &mut started);
        assert_eq!(got, (7, 1));
        let got = Backfill::shadow_and_extra(1, 4, 5, running.entries(), &mut []);
        assert_eq!(got, (7, 0));
        let got = Backfill::shadow_and_extra(1, 6, 5, running.entries(), &mut [(8, 1)]);
        assert_eq!(got, (9, 2));
    }

    #[test]
    fn parameters_are_checked_as_the_python_class_checks_them() {
        let fifo = || OrderParam::Order(Order::Fifo);
        let rank = || Order::Rank(vec![1, 0]);
        let msg = |r: Result<Backfill, Error>| r.err().unwrap().to_string();
        assert_eq!(
            msg(Backfill::new(
                "easy",
                Some(1),
                OrderParam::Priority,
                Order::Fifo,
                "backfill"
            )),
            "order: order=priority needs a priority other than fcfs"
        );
        assert!(msg(Backfill::new(
            "easy",
            Some(1),
            OrderParam::Order(Order::Sjf),
            rank(),
            "backfill"
        ))
        .starts_with("order: with scope=backfill the priority orders"));
        assert!(msg(Backfill::new("easy", Some(1), fifo(), rank(), "all")).starts_with("scope:"));
        // scope=backfill: the priority is the scan order; scope=queue: the queue's
        let b = Backfill::new("easy", Some(1), fifo(), rank(), "backfill").unwrap();
        assert_eq!((b.scan, b.priority), (rank(), None));
        let q = Backfill::new(
            "easy",
            Some(1),
            OrderParam::Order(Order::Sjf),
            rank(),
            "queue",
        );
        let q = q.unwrap();
        assert_eq!((q.scan, q.priority), (Order::Sjf, Some(rank())));
    }
}
