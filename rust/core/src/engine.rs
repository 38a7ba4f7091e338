//! The discrete-event engine (`dispatchlab.sim.engine`), on counting platforms (free
//! cores) and node-level ones (a free matrix, allocations per running job).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::alloc::{total_units, Allocation, NodeMatrix, Nodes};
use crate::dispatch::{Dispatcher, NodeView, Params, PassContext, PassRequests, Placement, View};
use crate::node_profile::fit_total;
use crate::predict::Predictor;
use crate::state::{RunningSet, WaitingQueue};
use crate::workload::{CountingWorkload, NodeWorkload, Overrun};
use crate::{planned, time_limit, Error, COMPLETED, FUTURE, KILLED, REJECTED, RUNNING, WAITING};

/// The per-job results of a finished run, in job-row order, and the run's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// start time (s); -1 for a rejected job
    pub start: Vec<i64>,
    /// end time (s); -1 for a rejected job
    pub end: Vec<i64>,
    /// [`COMPLETED`], [`KILLED`] or [`REJECTED`]
    pub status: Vec<i8>,
    /// each job's estimate at submission (s); -1 for a rejected job
    pub estimate: Vec<i64>,
    /// events handled: submissions (rejected ones too) and completions
    pub events: u64,
    /// dispatch passes (a pass on an empty queue counts, though the dispatcher is not
    /// called)
    pub passes: u64,
    /// node-level runs: every job row's allocation (empty for a rejected job); empty
    /// on counting runs
    pub allocations: Vec<Allocation>,
}

impl Outcome {
    /// The allocations as flat columns: `offsets` (one per job row and one more: job
    /// row `j`'s nodes are `nodes[offsets[j]..offsets[j + 1]]`), the node indices and
    /// the units on each, in the order the allocator took the nodes. Empty offsets on
    /// counting runs.
    pub fn flat_allocations(&self) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
        if self.allocations.is_empty() {
            return (Vec::new(), Vec::new(), Vec::new());
        }
        let total: usize = self.allocations.iter().map(|a| a.nodes.len()).sum();
        let mut offsets = Vec::with_capacity(self.allocations.len() + 1);
        let (mut nodes, mut counts) = (Vec::with_capacity(total), Vec::with_capacity(total));
        offsets.push(0);
        for a in &self.allocations {
            nodes.extend(a.nodes.iter().map(|&n| i64::from(n)));
            counts.extend_from_slice(&a.counts);
            offsets.push(nodes.len() as i64);
        }
        (offsets, nodes, counts)
    }
}

/// The node-level state of a run: the free matrix and every started job's allocation.
struct NodeState {
    nodes: Nodes,
    /// every job row's per-unit request (jobs x resources)
    requests: NodeMatrix,
    free: NodeMatrix,
    /// by job row (empty until it starts; kept after it ends: the run's log)
    allocations: Vec<Allocation>,
    /// the `core` column, if the platform has one (the view's free cores)
    core: Option<usize>,
    placements: Vec<Placement>,
}

/// One simulation of a workload under a dispatcher and a predictor, on a counting
/// platform ([`Engine::new`]) or a node-level one ([`Engine::with_nodes`]).
pub struct Engine {
    jobs: CountingWorkload,
    dispatcher: Box<dyn Dispatcher>,
    predictor: Box<dyn Predictor>,
    limit: i64,
    now: i64,
    free_cores: i64,
    /// whether each job fits the empty platform (else it is rejected at submission)
    fits: Vec<bool>,
    /// node-level runs: the free matrix and the allocations
    nodes: Option<NodeState>,
    start: Vec<i64>,
    end: Vec<i64>,
    est0: Vec<i64>,
    est_end: Vec<i64>,
    status: Vec<i8>,
    /// running jobs past their planned end with no later estimate (count as ending now)
    final_expired: Vec<bool>,
    n_final: usize,
    queue: WaitingQueue,
    running: RunningSet,
    /// scheduled ends: (end, job row), earliest first, ties by row
    ends: BinaryHeap<Reverse<(i64, u32)>>,
    decisions: Vec<u32>,
    /// completions, expiries and rejections handled so far (see [`View::changes`])
    changes: u64,
    events: u64,
    passes: u64,
    /// what happened since the dispatcher's previous call (see [`PassContext`])
    submitted: Vec<u32>,
    completed: Vec<u32>,
    reestimated: Vec<u32>,
    requests: PassRequests,
    /// wake-ups asked for (times, earliest first) and, per time, how many of them
    /// were withdrawn
    wakes: BinaryHeap<Reverse<i64>>,
    withdrawn: HashMap<i64, u32>,
    /// a wake-up fired at the current time point
    woken: bool,
    /// the predictor's calls at this time point: the jobs completed (when it observes)
    /// and submitted (fitting the platform), and their estimates
    observed: Vec<u32>,
    arrived: Vec<u32>,
    arrived_est: Vec<i64>,
    /// whether the predictor observes completions ([`Predictor::observes`])
    observes: bool,
}

impl Engine {
    /// A simulation of `jobs` on a counting platform (at most `u32::MAX` jobs).
    pub fn new(
        jobs: CountingWorkload,
        dispatcher: Box<dyn Dispatcher>,
        predictor: Box<dyn Predictor>,
    ) -> Result<Engine, Error> {
        let fits = jobs.units.iter().map(|&u| u <= jobs.total_cores).collect();
        Engine::build(jobs, None, fits, dispatcher, predictor)
    }

    /// A simulation of `jobs` on a node-level platform (at most `u32::MAX` jobs): the
    /// dispatcher must place jobs on nodes ([`crate::dispatch::make_node_dispatcher`]).
    /// A job fits the empty platform when the nodes' capacities can host its units
    /// and the request fitting did not find it unservable (the Python engine's
    /// `_fits_empty_platform`); the others are rejected.
    pub fn with_nodes(
        jobs: NodeWorkload,
        dispatcher: Box<dyn Dispatcher>,
        predictor: Box<dyn Predictor>,
    ) -> Result<Engine, Error> {
        let NodeWorkload {
            jobs,
            nodes,
            requests,
            core,
            unservable,
        } = jobs;
        let cap = &nodes.capacity;
        // whether the whole platform, empty, hosts each job: the nodes are counted
        // only until its units are reached (most jobs fit on the first few nodes)
        let fits = (0..jobs.len())
            .map(|j| {
                let (units, request) = (jobs.units[j], requests.row(j));
                !unservable.get(j).copied().unwrap_or(false)
                    && units
                        <= if request.is_empty() {
                            total_units(request, cap)
                        } else {
                            fit_total(request, units, cap.data())
                        }
            })
            .collect();
        let state = NodeState {
            free: cap.clone(),
            allocations: vec![Allocation::default(); jobs.len()],
            core,
            placements: Vec::new(),
            nodes,
            requests,
        };
        Engine::build(jobs, Some(state), fits, dispatcher, predictor)
    }

    fn build(
        jobs: CountingWorkload,
        nodes: Option<NodeState>,
        fits: Vec<bool>,
        dispatcher: Box<dyn Dispatcher>,
        predictor: Box<dyn Predictor>,
    ) -> Result<Engine, Error> {
        let n = jobs.len();
        if u32::try_from(n).is_err() {
            return Err(Error::Input {
                field: "submit",
                row: None,
                message: format!("{n} jobs: at most {} fit one run", u32::MAX),
            });
        }
        Ok(Engine {
            limit: time_limit(n),
            jobs,
            dispatcher,
            predictor,
            now: 0,
            free_cores: 0,
            fits,
            nodes,
            start: vec![-1; n],
            end: vec![-1; n],
            est0: vec![-1; n],
            est_end: vec![-1; n],
            status: vec![FUTURE; n],
            final_expired: vec![false; n],
            n_final: 0,
            queue: WaitingQueue::default(),
            running: RunningSet::default(),
            ends: BinaryHeap::new(),
            decisions: Vec::new(),
            changes: 0,
            events: 0,
            passes: 0,
            submitted: Vec::new(),
            completed: Vec::new(),
            reestimated: Vec::new(),
            requests: PassRequests::default(),
            wakes: BinaryHeap::new(),
            withdrawn: HashMap::new(),
            woken: false,
            observed: Vec::new(),
            arrived: Vec::new(),
            arrived_est: Vec::new(),
            observes: false,
        })
    }

    /// Simulate every job to completion.
    pub fn run(mut self) -> Result<Outcome, Error> {
        let n = self.jobs.len();
        self.free_cores = self.jobs.total_cores;
        self.observes = self.predictor.observes();
        // estimates known before the run (a predictor that learns nothing) reach the
        // dispatcher's start; else they exist only from each job's submission on
        if let Some(estimates) = self.predictor.in_advance() {
            self.dispatcher.start(&estimates);
        }
        if let Some(state) = &self.nodes {
            self.dispatcher.start_nodes(&state.nodes);
        }
        let mut next_sub = 0;
        loop {
            // the next time point with an event
            let mut now = if next_sub < n {
                self.jobs.submit[next_sub]
            } else {
                i64::MAX
            };
            if let Some(&Reverse((t, _))) = self.ends.peek() {
                now = now.min(t);
            }
            if let Some(&Reverse(t)) = self.wakes.peek() {
                now = now.min(t);
            }
            if now == i64::MAX {
                break;
            }
            if now != self.now {
                self.woken = false;
            }
            self.now = now;
            let events_before = self.events;
            // 1. completions of jobs ending now, in row order
            while let Some(&Reverse((t, job))) = self.ends.peek() {
                if t != now {
                    break;
                }
                self.ends.pop();
                self.complete(job);
            }
            // 2. submissions at this time, in row order
            while next_sub < n && self.jobs.submit[next_sub] == now {
                self.submit(next_sub);
                next_sub += 1;
            }
            // the predictor observes the completions, then estimates the submissions
            if !self.arrived.is_empty() || !self.observed.is_empty() {
                self.predict()?;
            }
            // then the wake-ups asked for now (a withdrawn one is no event)
            while let Some(&Reverse(t)) = self.wakes.peek() {
                if t != now {
                    break;
                }
                self.wakes.pop();
                match self.withdrawn.get_mut(&now) {
                    Some(left) if *left > 0 => *left -= 1,
                    _ => {
                        self.events += 1;
                        self.woken = true;
                    }
                }
            }
            if self.withdrawn.get(&now) == Some(&0) {
                self.withdrawn.remove(&now);
            }
            if self.events == events_before {
                continue; // only withdrawn wake-ups: nothing happened, no pass
            }
            // 3. one dispatch pass
            self.pass()?;
        }
        if let Some(row) = self.status.iter().position(|&s| s == WAITING) {
            return Err(Error::Dispatch(format!(
                "{} left job row {row} waiting forever though it fits the platform",
                self.dispatcher.name()
            )));
        }
        Ok(Outcome {
            start: self.start,
            end: self.end,
            status: self.status,
            estimate: self.est0,
            events: self.events,
            passes: self.passes,
            allocations: self.nodes.map_or_else(Vec::new, |s| s.allocations),
        })
    }

    fn submit(&mut self, job: usize) {
        self.events += 1;
        if !self.fits[job] {
            self.status[job] = REJECTED;
            return;
        }
        self.arrived.push(job as u32);
    }

    /// The predictor's call at this time point ([`Predictor::at_time`]): the jobs
    /// submitted now get their estimates and join the queue, in row order.
    fn predict(&mut self) -> Result<(), Error> {
        let mut est = std::mem::take(&mut self.arrived_est);
        est.clear();
        self.predictor
            .at_time(self.now, &self.observed, &self.arrived, &mut est)?;
        self.observed.clear();
        if est.len() != self.arrived.len() {
            return Err(Error::Dispatch(format!(
                "predictor {} gave {} estimates for {} submissions",
                self.predictor.name(),
                est.len(),
                self.arrived.len()
            )));
        }
        for (&job, &e) in self.arrived.iter().zip(&est) {
            if !(0..self.limit / 4).contains(&e) {
                return Err(Error::Dispatch(format!(
                    "predictor {} predicted {e} for job row {job}; estimates are seconds >= 0 \
                     (and below {})",
                    self.predictor.name(),
                    self.limit / 4
                )));
            }
            self.est0[job as usize] = e;
            self.status[job as usize] = WAITING;
            self.queue.push(job);
            self.submitted.push(job);
        }
        self.arrived.clear();
        self.arrived_est = est;
        Ok(())
    }

    fn complete(&mut self, job: u32) {
        let j = job as usize;
        self.events += 1;
        self.changes += 1;
        match &mut self.nodes {
            None => self.free_cores += self.jobs.units[j],
            Some(state) => {
                let request = state.requests.row(j);
                state.free.give(&state.allocations[j], request);
                if let Some(k) = state.core {
                    self.free_cores += self.jobs.units[j] * request[k];
                }
            }
        }
        self.running.remove(job, self.est_end[j]);
        if self.final_expired[j] {
            self.final_expired[j] = false;
            self.n_final -= 1;
        }
        self.end[j] = self.now;
        self.completed.push(job);
        if self.observes {
            self.observed.push(job);
        }
        let killed =
            self.jobs.overrun == Overrun::Kill && self.jobs.requested[j] < self.jobs.run[j];
        self.status[j] = if killed { KILLED } else { COMPLETED };
    }

    fn pass(&mut self) -> Result<(), Error> {
        self.passes += 1;
        if self.running.first_end().is_some_and(|e| e <= self.now) {
            self.expire()?;
        }
        if self.queue.is_empty() && !self.woken && !self.dispatcher.call_on_empty_queue() {
            return Ok(()); // (no native dispatcher asks for a pass on an empty queue)
        }
        let mut decisions = std::mem::take(&mut self.decisions);
        decisions.clear();
        if self.nodes.is_some() {
            return self.node_pass(decisions);
        }
        let mut requests = std::mem::take(&mut self.requests);
        requests.clear();
        let view = View {
            now: self.now,
            free_cores: self.free_cores,
            queue: self.queue.jobs(),
            units: &self.jobs.units,
            estimate: &self.est0,
            running: &self.running,
            changes: self.changes,
        };
        let context = PassContext {
            start: &self.start,
            submitted: &self.submitted,
            completed: &self.completed,
            reestimated: &self.reestimated,
            woken: self.woken,
        };
        self.dispatcher
            .dispatch_in(&view, &context, &mut decisions, &mut requests);
        self.after_call(&mut requests)?;
        for &job in &decisions {
            self.start_job(job)?;
        }
        self.end_pass(requests, decisions)
    }

    /// After the dispatcher's call: the logs of what happened since its previous call
    /// are cleared, and a stop it asked for ends the run.
    fn after_call(&mut self, requests: &mut PassRequests) -> Result<(), Error> {
        self.submitted.clear();
        self.completed.clear();
        self.reestimated.clear();
        match requests.stop.take() {
            Some(message) => Err(Error::Dispatch(message)),
            None => Ok(()),
        }
    }

    /// The end of a pass whose starts are made (`left`: the started rows): the
    /// rejections and wake-ups asked for applied, the rows that left the queue removed
    /// from it, the buffers kept for the next pass.
    fn end_pass(&mut self, requests: PassRequests, mut left: Vec<u32>) -> Result<(), Error> {
        if !requests.is_empty() {
            self.apply_requests(&requests, &mut left)?;
        }
        self.queue.remove_sorted(&mut left);
        self.decisions = left;
        self.requests = requests;
        Ok(())
    }

    /// Rejections and wake-ups asked for at a pass (the rejected rows join `left`,
    /// the rows that leave the queue).
    fn apply_requests(
        &mut self,
        requests: &PassRequests,
        left: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let name = self.dispatcher.name();
        for &job in &requests.reject {
            let j = job as usize;
            if self.status.get(j) != Some(&WAITING) {
                return Err(Error::Dispatch(format!(
                    "{name} rejected job row {j}, which is not waiting"
                )));
            }
            self.changes += 1;
            self.status[j] = REJECTED;
            left.push(job);
        }
        for &t in &requests.wake {
            if t <= self.now {
                return Err(Error::Dispatch(format!(
                    "{name} asked to wake at {t}, not after now ({})",
                    self.now
                )));
            }
            self.wakes.push(Reverse(t));
        }
        for &t in &requests.withdraw {
            let pending = self.wakes.iter().filter(|w| w.0 == t).count();
            let withdrawn = self.withdrawn.entry(t).or_insert(0);
            if t <= self.now || pending <= *withdrawn as usize {
                return Err(Error::Dispatch(format!(
                    "{name} withdrew a wake-up at {t}, but none is pending then (now {})",
                    self.now
                )));
            }
            *withdrawn += 1;
        }
        Ok(())
    }

    /// A node-level pass: the dispatcher's placements, each checked and started.
    fn node_pass(&mut self, mut decisions: Vec<u32>) -> Result<(), Error> {
        let state = self.nodes.as_mut().expect("a node-level run");
        let mut placements = std::mem::take(&mut state.placements);
        placements.clear();
        let view = View {
            now: self.now,
            free_cores: self.free_cores,
            queue: self.queue.jobs(),
            units: &self.jobs.units,
            estimate: &self.est0,
            running: &self.running,
            changes: self.changes,
        };
        let nodes = NodeView {
            free: &state.free,
            nodes: &state.nodes,
            requests: &state.requests,
            allocations: &state.allocations,
        };
        let context = PassContext {
            start: &self.start,
            submitted: &self.submitted,
            completed: &self.completed,
            reestimated: &self.reestimated,
            woken: self.woken,
        };
        let mut requests = std::mem::take(&mut self.requests);
        requests.clear();
        self.dispatcher
            .dispatch_nodes_in(&view, &nodes, &context, &mut placements, &mut requests);
        self.after_call(&mut requests)?;
        for p in placements.drain(..) {
            decisions.push(p.job);
            self.place(p)?;
        }
        if let Some(state) = &mut self.nodes {
            state.placements = placements;
        }
        self.end_pass(requests, decisions)
    }

    /// Start a placement after the Python engine's checks: the job waits, its
    /// allocation holds exactly its units (each count > 0, each node once) and fits
    /// the free matrix.
    fn place(&mut self, p: Placement) -> Result<(), Error> {
        let j = p.job as usize;
        let name = self.dispatcher.name();
        if self.status.get(j) != Some(&WAITING) {
            return Err(Error::Dispatch(format!(
                "{name} started job row {j}, which is not waiting"
            )));
        }
        let units = self.jobs.units[j];
        let state = self.nodes.as_mut().expect("a node-level run");
        let alloc = p.allocation;
        let positive = alloc.counts.iter().all(|&c| c > 0);
        if !positive || alloc.counts.iter().try_fold(0i64, |a, &c| a.checked_add(c)) != Some(units)
        {
            return Err(Error::Dispatch(format!(
                "{name} started job row {j} without a valid allocation of its {units} units"
            )));
        }
        let request = state.requests.row(j);
        if !state.free.can_take(&alloc, request) {
            return Err(Error::Dispatch(format!(
                "{name} allocated job row {j} beyond the free resources"
            )));
        }
        state.free.take(&alloc, request);
        if let Some(k) = state.core {
            self.free_cores -= units * request[k];
        }
        state.allocations[j] = alloc;
        self.begin(p.job);
        Ok(())
    }

    fn start_job(&mut self, job: u32) -> Result<(), Error> {
        let j = job as usize;
        let name = self.dispatcher.name();
        if self.status.get(j) != Some(&WAITING) {
            return Err(Error::Dispatch(format!(
                "{name} started job row {j}, which is not waiting"
            )));
        }
        let units = self.jobs.units[j];
        if units > self.free_cores {
            return Err(Error::Dispatch(format!(
                "{name} started job row {j} ({units} cores) with only {} free",
                self.free_cores
            )));
        }
        self.free_cores -= units;
        self.begin(job);
        Ok(())
    }

    /// The start of waiting job `job` now (its resources already taken): running,
    /// with its planned end and its scheduled end.
    fn begin(&mut self, job: u32) {
        let j = job as usize;
        let now = self.now;
        self.start[j] = now;
        self.status[j] = RUNNING;
        let est_end = now + planned(self.est0[j]);
        self.est_end[j] = est_end;
        self.running.insert(job, est_end, self.jobs.units[j]);
        self.ends
            .push(Reverse((now + self.jobs.sim_run_of(j), job)));
        self.predictor.started(job, now);
    }

    /// Running jobs at or past their planned end get a new estimate from the
    /// predictor's expiry rule, or count as ending now.
    fn expire(&mut self) -> Result<(), Error> {
        let now = self.now;
        let k = self.running.count_ending_by(now);
        if k <= self.n_final {
            return Ok(()); // every expired job already counts as ending now
        }
        self.changes += 1;
        let expired: Vec<(u32, i64)> = self.running.entries()[..k]
            .iter()
            .map(|e| e.job)
            .filter(|&job| !self.final_expired[job as usize])
            .map(|job| (job, self.start[job as usize]))
            .collect();
        let mut new_estimates = Vec::with_capacity(expired.len());
        self.predictor
            .on_expiry(now, &expired, &mut new_estimates)?;
        if new_estimates.len() != expired.len() {
            return Err(Error::Dispatch(format!(
                "predictor {} gave {} new estimates for {} expired jobs",
                self.predictor.name(),
                new_estimates.len(),
                expired.len()
            )));
        }
        for (&(job, started), new) in expired.iter().zip(new_estimates) {
            let j = job as usize;
            match new {
                Some(new) if now < started + new && started + new < self.limit / 2 => {
                    self.running.remove(job, self.est_end[j]);
                    self.est_end[j] = started + new;
                    self.running.insert(job, started + new, self.jobs.units[j]);
                    self.reestimated.push(job);
                }
                _ => {
                    self.final_expired[j] = true;
                    self.n_final += 1;
                }
            }
        }
        Ok(())
    }
}

/// Simulate `jobs` on a node-level platform under the native dispatcher named with
/// `params` (its `allocator` among them; see [`crate::dispatch::make_node_dispatcher`])
/// and the predictor named (`walltime` or `real`); the [`Outcome`] holds every job's
/// allocation.
pub fn simulate_nodes_with(
    jobs: NodeWorkload,
    dispatcher: &str,
    params: &Params,
    predictor: &str,
) -> Result<Outcome, Error> {
    let j = &jobs.jobs;
    let predictor = crate::predict::make_predictor(predictor, &j.run, &j.requested, j.overrun)?;
    let dispatcher = crate::dispatch::make_node_dispatcher(dispatcher, params, Some(j.len()))?;
    Engine::with_nodes(jobs, dispatcher, predictor)?.run()
}

/// Simulate `jobs` under the native dispatcher named with its default parameters and
/// the predictor named (see [`simulate_counting_with`]).
pub fn simulate_counting(
    jobs: CountingWorkload,
    dispatcher: &str,
    predictor: &str,
) -> Result<Outcome, Error> {
    simulate_counting_with(jobs, dispatcher, &Params::default(), predictor)
}

/// Simulate `jobs` under the native dispatcher named (`fifo`, `sjf`, `ljf`, `easy`,
/// `conservative`) with `params` ([`Params`]) and the predictor named (`walltime` or
/// `real`).
pub fn simulate_counting_with(
    jobs: CountingWorkload,
    dispatcher: &str,
    params: &Params,
    predictor: &str,
) -> Result<Outcome, Error> {
    let predictor =
        crate::predict::make_predictor(predictor, &jobs.run, &jobs.requested, jobs.overrun)?;
    let dispatcher = crate::dispatch::make_dispatcher_with(dispatcher, params, Some(jobs.len()))?;
    Engine::new(jobs, dispatcher, predictor)?.run()
}

/// Simulate `jobs` on their node-level platform under `dispatcher` (any implementation
/// of [`Dispatcher`] that places jobs on nodes, e.g. the binding's adapter of a
/// dispatcher written in Python) and the predictor named (`walltime` or `real`).
pub fn simulate_nodes_by(
    jobs: NodeWorkload,
    dispatcher: Box<dyn Dispatcher>,
    predictor: &str,
) -> Result<Outcome, Error> {
    let j = &jobs.jobs;
    let predictor = crate::predict::make_predictor(predictor, &j.run, &j.requested, j.overrun)?;
    Engine::with_nodes(jobs, dispatcher, predictor)?.run()
}

/// Simulate `jobs` under `dispatcher` (any implementation of [`Dispatcher`], e.g. the
/// binding's adapter of a dispatcher written in Python) and the predictor named
/// (`walltime` or `real`).
pub fn simulate_counting_by(
    jobs: CountingWorkload,
    dispatcher: Box<dyn Dispatcher>,
    predictor: &str,
) -> Result<Outcome, Error> {
    let predictor =
        crate::predict::make_predictor(predictor, &jobs.run, &jobs.requested, jobs.overrun)?;
    Engine::new(jobs, dispatcher, predictor)?.run()
}

/// Simulate `jobs` under the native dispatcher named with `params` (see
/// [`simulate_counting_with`]) and `predictor` (any implementation of [`Predictor`],
/// e.g. the binding's adapter of a predictor written in Python, whose estimates are
/// known only at submission: the dispatcher's start is then not called).
pub fn simulate_counting_predicted(
    jobs: CountingWorkload,
    dispatcher: &str,
    params: &Params,
    predictor: Box<dyn Predictor>,
) -> Result<Outcome, Error> {
    let dispatcher = crate::dispatch::make_dispatcher_with(dispatcher, params, Some(jobs.len()))?;
    Engine::new(jobs, dispatcher, predictor)?.run()
}

/// Simulate `jobs` on a node-level platform under the native dispatcher named with
/// `params` (see [`simulate_nodes_with`]) and `predictor` (see
/// [`simulate_counting_predicted`]).
pub fn simulate_nodes_predicted(
    jobs: NodeWorkload,
    dispatcher: &str,
    params: &Params,
    predictor: Box<dyn Predictor>,
) -> Result<Outcome, Error> {
    let n = jobs.jobs.len();
    let dispatcher = crate::dispatch::make_node_dispatcher(dispatcher, params, Some(n))?;
    Engine::with_nodes(jobs, dispatcher, predictor)?.run()
}
