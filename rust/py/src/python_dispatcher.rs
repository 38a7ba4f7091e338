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
//! given a new estimate) and the new planned ends of the last. Nothing else crosses:
//! the Python side keeps its own copy of the queue and the running set from these and
//! from its own decisions (the Python engine's containers, updated as the Python
//! engine updates them), so a pass costs no copy of either, whatever their lengths.
//! It returns None (nothing to do), `(starts, rejects, wakes, withdraws)`, lists of
//! ints: job rows to start in order and to reject (checked already), times of
//! wake-ups to add and to withdraw, or the list `starts` alone. On a node-level
//! platform it returns None or `(starts, rejects, wakes, withdraws, allocations)`, one
//! allocation `(nodes, units)` per start (checked already: the engine checks it
//! again, as the Python engine does).
//!
//! Whatever the function raises stops the run: the exception is kept (the binding
//! raises it unchanged) and the core is asked to stop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dispatchlab_core::{
    Allocation, Dispatcher, NodeView, PassContext, PassRequests, Placement, View,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

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
}

impl PyDispatcher {
    /// An adapter calling `pass_fn` (and `empty_fn`, see the fields), keeping an
    /// exception in `error`.
    pub fn new(pass_fn: Py<PyAny>, empty_fn: Option<Py<PyAny>>, error: ErrorSlot) -> Self {
        PyDispatcher {
            pass_fn,
            empty_fn,
            error,
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

    /// One call of `pass_fn`: its answer (see the module docstring).
    fn call<'py>(
        &self,
        py: Python<'py>,
        view: &View<'_>,
        ctx: &PassContext<'_>,
    ) -> PyResult<Py<PyAny>> {
        let rows = |rows: &[u32]| {
            if rows.is_empty() {
                Ok(PyTuple::empty(py))
            } else {
                PyTuple::new(py, rows)
            }
        };
        // the new planned ends of the re-estimated jobs (rare: a scan of the running set)
        let new_ends = if ctx.reestimated.is_empty() {
            PyTuple::empty(py)
        } else {
            let ends: HashMap<u32, i64> = view
                .running
                .entries()
                .iter()
                .map(|e| (e.job, e.est_end))
                .collect();
            PyTuple::new(py, ctx.reestimated.iter().map(|j| ends.get(j).copied()))?
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
        if let Ok(starts) = answer.extract::<Vec<i64>>(py) {
            out.extend(starts.into_iter().map(row));
            return Ok(());
        }
        let (starts, rejects, wakes, withdraws): Lists = answer.extract(py)?;
        out.extend(starts.into_iter().map(row));
        add_requests(requests, rejects, wakes, withdraws);
        Ok(())
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
        for (job, (nodes, counts)) in starts.into_iter().zip(allocations) {
            out.push(Placement {
                job: row(job),
                allocation: Allocation { nodes, counts },
            });
        }
        add_requests(requests, rejects, wakes, withdraws);
        Ok(())
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
