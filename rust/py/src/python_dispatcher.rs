//! The adapter of a dispatcher written in Python: a [`Dispatcher`] of the core that, at
//! each pass, takes the GIL (the run otherwise runs without it) and calls a Python
//! function with the pass's state; the function (`dispatchlab.sim.native_view`) shows
//! the dispatcher the `View` protocol over that state, calls its `dispatch`, checks
//! the decisions as the Python engine checks them and returns what to apply.
//!
//! The function is called as `pass_fn(now, free_cores, changes, woken, submitted,
//! completed, reestimated, new_ends)`: the time, the free cores, the change counter
//! (`View::changes`), whether a wake-up fired, and what happened since the previous
//! call, in event order, as tuples of job rows (jobs queued, jobs ended, running jobs
//! given a new estimate) and the new planned ends of the last. The adapter keeps the
//! run's [`NativeQueue`] and [`NativeRunning`] (made by the Python side, handed to
//! `simulate_python`) equal to the core's waiting queue and running set, in native
//! code and without making a Python object: before each call the queue's rows are
//! compared and copied when they changed, and the running set is handed the changes
//! (applied when the Python side reads it). The Python side reads them as the Python
//! engine's containers (`dispatchlab.sim.state`), so it keeps no copy of its own and a
//! pass costs no per-job work in Python.
//!
//! `pass_fn` returns None (nothing to do), `(starts, rejects, wakes, withdraws)`,
//! lists of ints: job rows to start in order and to reject (checked already), times
//! of wake-ups to add and to withdraw, or the list `starts` alone. On a node-level
//! platform it returns None or `(starts, rejects, wakes, withdraws, allocations)`, one
//! allocation `(nodes, units)` per start (checked already: the engine checks it again,
//! as the Python engine does).
//!
//! Whatever the function raises stops the run: the exception is kept (the binding
//! raises it unchanged) and the core is asked to stop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dispatchlab_core::state::{Running, RunningSet};
use dispatchlab_core::{
    planned, Allocation, Dispatcher, NodeView, PassContext, PassRequests, Placement, View,
};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// NativeQueue(submit)
/// --
///
/// The waiting queue of a native run of a dispatcher written in Python, as
/// `dispatchlab.sim.native_view` reads it (the interface of
/// `dispatchlab.sim.state.WaitingQueue`): the core's queue as of the current call of
/// `pass_fn` (empty before the run). `submit`: every job row's submit time.
#[pyclass(module = "dispatchlab._core", name = "NativeQueue")]
pub struct NativeQueue {
    /// the waiting job rows, in queue order
    rows: Vec<u32>,
    /// every job row's units, estimate at submission (set when it is queued) and
    /// submit time
    units_of: Vec<i64>,
    estimate_of: Vec<i64>,
    submit_of: Vec<i64>,
    /// `columns()`, kept until the queue changes
    columns: Option<Py<PyTuple>>,
}

impl NativeQueue {
    /// Bring the copy up to the core's queue, `submitted`: the jobs queued since the
    /// previous call (their estimates are taken). The rows are compared and copied
    /// only when they changed (one `memcmp`, one `memcpy`); no per-job work.
    fn sync(&mut self, view: &View<'_>, submitted: &[u32]) {
        if self.units_of.len() != view.units.len() {
            self.units_of = view.units.to_vec(); // (once: the first call)
            self.estimate_of = vec![0; view.units.len()];
        }
        for &r in submitted {
            self.estimate_of[r as usize] = view.estimate[r as usize];
        }
        if self.rows.as_slice() != view.queue {
            self.rows.clear();
            self.rows.extend_from_slice(view.queue);
            self.columns = None;
        }
    }

    /// The column `of` (one value per job row) of the waiting jobs `rows`.
    fn gather(of: &[i64], rows: &[u32]) -> Vec<i64> {
        rows.iter().map(|&r| of[r as usize]).collect()
    }

    /// `(jobs, units, estimates)` of the waiting jobs `rows`, as lists.
    fn lists(&self, rows: &[u32]) -> (Vec<u32>, Vec<i64>, Vec<i64>) {
        (
            rows.to_vec(),
            Self::gather(&self.units_of, rows),
            Self::gather(&self.estimate_of, rows),
        )
    }
}

/// An int64 numpy array.
type Array<'py> = Bound<'py, PyArray1<i64>>;

/// A new int64 array holding `values` that owns its data, as numpy's own arrays do
/// (`PyArray1::from_iter` would borrow a Vec's: `base` set, `owndata` unset).
fn owned<'py>(py: Python<'py>, values: impl Iterator<Item = i64>) -> Array<'py> {
    PyArray1::from_slice(py, &values.collect::<Vec<i64>>())
}

/// `array` (new, not borrowed), made read-only.
fn readonly<'py>(array: Array<'py>) -> Array<'py> {
    drop(array.readwrite().make_nonwriteable());
    array
}

#[pymethods]
impl NativeQueue {
    #[new]
    fn new(submit: PyReadonlyArray1<'_, i64>) -> Self {
        NativeQueue {
            rows: Vec::new(),
            units_of: Vec::new(),
            estimate_of: Vec::new(),
            submit_of: submit.as_array().to_vec(),
            columns: None,
        }
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// columns()
    /// --
    ///
    /// `(jobs, units, estimates, submit)` as read-only int64 numpy arrays, in queue
    /// order, kept until the queue changes (as `WaitingQueue.columns`).
    fn columns<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if let Some(columns) = &self.columns {
            return Ok(columns.bind(py).clone());
        }
        let rows = &self.rows;
        let columns = PyTuple::new(
            py,
            [
                readonly(owned(py, rows.iter().map(|&r| i64::from(r)))),
                readonly(PyArray1::from_slice(
                    py,
                    &Self::gather(&self.units_of, rows),
                )),
                readonly(PyArray1::from_slice(
                    py,
                    &Self::gather(&self.estimate_of, rows),
                )),
                readonly(PyArray1::from_slice(
                    py,
                    &Self::gather(&self.submit_of, rows),
                )),
            ],
        )?;
        self.columns = Some(columns.clone().unbind());
        Ok(columns)
    }

    /// head(k)
    /// --
    ///
    /// The first `k` waiting jobs (`k` >= 0) as lists `(jobs, units, estimates)`.
    fn head(&self, k: usize) -> (Vec<u32>, Vec<i64>, Vec<i64>) {
        self.lists(&self.rows[..k.min(self.rows.len())])
    }

    /// after(job)
    /// --
    ///
    /// The waiting jobs after row `job` (those of a higher row) as lists `(jobs, units,
    /// estimates)`.
    fn after(&self, job: i64) -> (Vec<u32>, Vec<i64>, Vec<i64>) {
        let from = self.rows.partition_point(|&r| i64::from(r) <= job);
        self.lists(&self.rows[from..])
    }
}

/// NativeRunning()
/// --
///
/// The running set of a native run of a dispatcher written in Python, as
/// `dispatchlab.sim.native_view` reads it (the interface of
/// `dispatchlab.sim.state.RunningSet`): the core's running jobs as of the current
/// call of `pass_fn`, in planned-end order (raw planned ends; empty before the run).
///
/// The adapter hands it the run's changes (jobs started, ended, given a new planned
/// end) and it applies them when it is read, one binary search and one `memmove`
/// each, as the core does: a dispatcher that does not read the running set at a
/// pass costs no copy of it. After [`NativeRunning::PENDING`] unapplied changes it
/// takes a copy of the core's set instead (so a dispatcher that never reads it costs
/// one copy per that many changes).
#[pyclass(module = "dispatchlab._core", name = "NativeRunning")]
#[derive(Default)]
pub struct NativeRunning {
    /// the running jobs in planned-end order, but for the changes in `pending`
    entries: Vec<Running>,
    /// the changes not applied yet, in order: `(job, Some(entry), _)` adds `entry`,
    /// `(job, None, est_end)` removes the job's entry of planned end `est_end`
    pending: Vec<(u32, Option<Running>, i64)>,
    /// how many jobs run (the pending changes counted)
    count: usize,
    /// each running job row's planned end (as the core's)
    planned_end: Vec<i64>,
}

impl NativeRunning {
    /// Unapplied changes after which the copy is taken from the core's set instead.
    const PENDING: usize = 32;

    /// `job` started with planned end `est_end` and `units` units.
    fn start(&mut self, job: u32, est_end: i64, units: i64) {
        let j = job as usize;
        if self.planned_end.len() <= j {
            self.planned_end.resize(j + 1, 0);
        }
        self.planned_end[j] = est_end;
        let entry = Running {
            est_end,
            job,
            units,
        };
        self.pending.push((job, Some(entry), est_end));
        self.count += 1;
    }

    /// Running `job` left the set (it ended, or is given a new planned end).
    fn remove(&mut self, job: u32) {
        let est_end = self.planned_end[job as usize];
        self.pending.push((job, None, est_end));
        self.count = self.count.saturating_sub(1);
    }

    /// After a pass's changes: with too many unapplied, the copy of the core's set
    /// (`running`) replaces them.
    fn catch_up(&mut self, running: &RunningSet) {
        if self.pending.len() > Self::PENDING {
            self.pending.clear();
            self.entries.clear();
            self.entries.extend_from_slice(running.entries());
            debug_assert_eq!(self.count, self.entries.len());
        }
    }

    /// The running jobs, the pending changes applied.
    fn current(&mut self) -> &[Running] {
        for (job, entry, est_end) in self.pending.drain(..) {
            let pos = self
                .entries
                .binary_search_by(|e| (e.est_end, e.job).cmp(&(est_end, job)));
            match (entry, pos) {
                (Some(entry), Err(pos)) => self.entries.insert(pos, entry),
                (None, Ok(pos)) => {
                    self.entries.remove(pos);
                }
                _ => debug_assert!(false, "a change that does not apply: job row {job}"),
            }
        }
        &self.entries
    }

    fn column<'py>(&mut self, py: Python<'py>, f: impl Fn(&Running) -> i64) -> Array<'py> {
        owned(py, self.current().iter().map(f))
    }
}

#[pymethods]
impl NativeRunning {
    #[new]
    fn new() -> Self {
        NativeRunning::default()
    }

    fn __len__(&self) -> usize {
        self.count
    }

    /// columns()
    /// --
    ///
    /// `(jobs, units, est_end)` as new int64 numpy arrays, in planned-end order (as
    /// `RunningSet.columns`).
    fn columns<'py>(&mut self, py: Python<'py>) -> (Array<'py>, Array<'py>, Array<'py>) {
        (
            self.column(py, |e| i64::from(e.job)),
            self.column(py, |e| e.units),
            self.column(py, |e| e.est_end),
        )
    }

    /// The raw planned ends, in order (a new int64 array).
    #[getter]
    fn ends<'py>(&mut self, py: Python<'py>) -> Array<'py> {
        self.column(py, |e| e.est_end)
    }

    /// The running jobs' units, in planned-end order (a new int64 array).
    #[getter]
    fn units<'py>(&mut self, py: Python<'py>) -> Array<'py> {
        self.column(py, |e| e.units)
    }

    /// first_end()
    /// --
    ///
    /// The earliest raw planned end, or None when no job runs.
    fn first_end(&mut self) -> Option<i64> {
        self.current().first().map(|e| e.est_end)
    }
}

/// Where the adapter keeps the exception that stopped a run (shared with the binding,
/// which raises it once the core returns).
pub type ErrorSlot = Arc<Mutex<Option<PyErr>>>;

/// The message of the core's stop when the Python side raised (never shown: the
/// binding raises the kept exception instead).
pub const STOPPED: &str = "the Python dispatcher raised";

/// A dispatcher written in Python, seen by the core.
pub struct PyDispatcher {
    /// called at each pass (see the module docstring)
    pass_fn: Py<PyAny>,
    /// called at a pass on an empty queue (no wake-up fired): whether to call
    /// `pass_fn` then; None: always
    empty_fn: Option<Py<PyAny>>,
    /// the exception that stopped the run
    error: ErrorSlot,
    /// the copies of the queue and the running set the Python side reads
    queue: Py<NativeQueue>,
    running: Py<NativeRunning>,
}

impl PyDispatcher {
    /// An adapter calling `pass_fn` (and `empty_fn`, see the fields), keeping an
    /// exception in `error` and the core's queue and running set in `state`.
    pub fn new(
        pass_fn: Py<PyAny>,
        empty_fn: Option<Py<PyAny>>,
        error: ErrorSlot,
        state: (Py<NativeQueue>, Py<NativeRunning>),
    ) -> Self {
        PyDispatcher {
            pass_fn,
            empty_fn,
            error,
            queue: state.0,
            running: state.1,
        }
    }

    fn failed(&self) -> bool {
        self.error.lock().map(|e| e.is_some()).unwrap_or(true)
    }

    fn keep(&self, err: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(err);
        }
    }

    /// One call of `pass_fn`: its answer (see the module docstring). The copy of the
    /// queue is brought up to the core's, and the running set's is handed the changes
    /// since the previous call: the completions and new estimates here, the starts of
    /// the previous call by [`PyDispatcher::started`] (the core starts no job by
    /// itself).
    fn call<'py>(
        &self,
        py: Python<'py>,
        view: &View<'_>,
        ctx: &PassContext<'_>,
    ) -> PyResult<Py<PyAny>> {
        self.queue
            .bind(py)
            .try_borrow_mut()?
            .sync(view, ctx.submitted);
        // the new planned ends of the re-estimated jobs (rare: a scan of the running
        // set); None for a job that ended since
        let new_ends: Vec<Option<i64>> = if ctx.reestimated.is_empty() {
            Vec::new()
        } else {
            let ends: HashMap<u32, i64> = view
                .running
                .entries()
                .iter()
                .map(|e| (e.job, e.est_end))
                .collect();
            ctx.reestimated
                .iter()
                .map(|j| ends.get(j).copied())
                .collect()
        };
        {
            let mut running = self.running.bind(py).try_borrow_mut()?;
            for &job in ctx.completed {
                running.remove(job);
            }
            for (&job, end) in ctx.reestimated.iter().zip(&new_ends) {
                if let Some(end) = *end {
                    running.remove(job);
                    running.start(job, end, view.units[job as usize]);
                }
            }
            running.catch_up(view.running);
        }
        let rows = |rows: &[u32]| {
            if rows.is_empty() {
                Ok(PyTuple::empty(py))
            } else {
                PyTuple::new(py, rows)
            }
        };
        let new_ends = if new_ends.is_empty() {
            PyTuple::empty(py)
        } else {
            PyTuple::new(py, new_ends)?
        };
        let args = (
            view.now,
            view.free_cores,
            view.changes,
            ctx.woken,
            rows(ctx.submitted)?,
            rows(ctx.completed)?,
            rows(ctx.reestimated)?,
            new_ends,
        );
        self.pass_fn.call1(py, args)
    }

    /// The running set's copy is handed the jobs `started` now (the core starts them
    /// after the call, with these planned ends, as the Python side checked them).
    fn started(
        &self,
        py: Python<'_>,
        view: &View<'_>,
        started: impl Iterator<Item = u32>,
    ) -> PyResult<()> {
        let mut running = self.running.bind(py).try_borrow_mut()?;
        for job in started {
            let j = job as usize;
            running.start(job, view.now + planned(view.estimate[j]), view.units[j]);
        }
        Ok(())
    }

    /// A counting pass: `pass_fn`'s starts and requests.
    fn counting_pass(
        &self,
        py: Python<'_>,
        view: &View<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<u32>,
        requests: &mut PassRequests,
    ) -> PyResult<()> {
        let answer = self.call(py, view, ctx)?;
        if answer.is_none(py) {
            return Ok(());
        }
        let before = out.len();
        if let Ok(starts) = answer.extract::<Vec<i64>>(py) {
            out.extend(starts.into_iter().map(row));
        } else {
            let (starts, rejects, wakes, withdraws): Lists = answer.extract(py)?;
            out.extend(starts.into_iter().map(row));
            add_requests(requests, rejects, wakes, withdraws);
        }
        self.started(py, view, out[before..].iter().copied())
    }

    /// A node-level pass: `pass_fn`'s placements and requests.
    fn node_pass(
        &self,
        py: Python<'_>,
        view: &View<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<Placement>,
        requests: &mut PassRequests,
    ) -> PyResult<()> {
        let answer = self.call(py, view, ctx)?;
        if answer.is_none(py) {
            return Ok(());
        }
        let (starts, rejects, wakes, withdraws, allocations): NodeLists = answer.extract(py)?;
        let before = out.len();
        for (job, (nodes, counts)) in starts.into_iter().zip(allocations) {
            out.push(Placement {
                job: row(job),
                allocation: Allocation { nodes, counts },
            });
        }
        add_requests(requests, rejects, wakes, withdraws);
        self.started(py, view, out[before..].iter().map(|p| p.job))
    }

    /// Run `pass` with the GIL; an exception is kept and stops the run.
    fn attached(
        &mut self,
        requests: &mut PassRequests,
        pass: impl FnOnce(Python<'_>, &Self, &mut PassRequests) -> PyResult<()>,
    ) {
        if self.failed() {
            requests.stop = Some(STOPPED.to_string());
            return;
        }
        if let Err(err) = Python::attach(|py| pass(py, self, requests)) {
            self.keep(err);
            requests.stop = Some(STOPPED.to_string());
        }
    }
}

/// The counting answer: starts, rejects, wakes, withdraws.
type Lists = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>);
/// The node-level answer: the same and each start's allocation (nodes, units).
type NodeLists = (
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
    Vec<(Vec<u32>, Vec<i64>)>,
);

/// A job row the Python side checked (a waiting job: in range).
fn row(job: i64) -> u32 {
    u32::try_from(job).unwrap_or(u32::MAX)
}

fn add_requests(
    requests: &mut PassRequests,
    rejects: Vec<i64>,
    wakes: Vec<i64>,
    withdraws: Vec<i64>,
) {
    requests.reject.extend(rejects.into_iter().map(row));
    requests.wake.extend(wakes);
    requests.withdraw.extend(withdraws);
}

impl Dispatcher for PyDispatcher {
    fn name(&self) -> &'static str {
        "the Python dispatcher"
    }

    /// Not called by the engine ([`Dispatcher::dispatch_in`] is): a pass with an
    /// empty context.
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let ctx = PassContext {
            start: &[],
            submitted: &[],
            completed: &[],
            reestimated: &[],
            woken: false,
        };
        let mut requests = PassRequests::default();
        self.dispatch_in(view, &ctx, out, &mut requests);
    }

    fn dispatch_in(
        &mut self,
        view: &View<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<u32>,
        requests: &mut PassRequests,
    ) {
        self.attached(requests, |py, me, requests| {
            me.counting_pass(py, view, ctx, out, requests)
        });
    }

    fn dispatch_nodes(&mut self, view: &View<'_>, nodes: &NodeView<'_>, out: &mut Vec<Placement>) {
        let ctx = PassContext {
            start: &[],
            submitted: &[],
            completed: &[],
            reestimated: &[],
            woken: false,
        };
        let mut requests = PassRequests::default();
        self.dispatch_nodes_in(view, nodes, &ctx, out, &mut requests);
    }

    fn dispatch_nodes_in(
        &mut self,
        view: &View<'_>,
        _nodes: &NodeView<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<Placement>,
        requests: &mut PassRequests,
    ) {
        self.attached(requests, |py, me, requests| {
            me.node_pass(py, view, ctx, out, requests)
        });
    }

    fn call_on_empty_queue(&mut self) -> bool {
        let Some(empty_fn) = &self.empty_fn else {
            return true;
        };
        if self.failed() {
            return true; // the next call stops the run
        }
        match Python::attach(|py| empty_fn.call0(py).and_then(|v| v.is_truthy(py))) {
            Ok(call) => call,
            Err(err) => {
                self.keep(err);
                true
            }
        }
    }
}
