//! The adapter of a duration predictor written in Python: a [`Predictor`] of the core
//! that takes the GIL (the run otherwise runs without it) at each of its calls and
//! calls a Python function (`dispatchlab.sim.native_predict` makes them):
//!
//! * `at_time(now, started, start_times, completed, submitted)` at each time point
//!   with submissions (or, when the predictor observes, completions): the jobs that
//!   started since the previous call and their start times (the Python side writes
//!   them into the predictor's live start times first), the jobs completed now (to
//!   observe, in completion order) and the jobs submitted now that fit the platform
//!   (in row order); returns their estimates, a list of ints, one per submission;
//! * `on_expiry(now, started, start_times, expired)` at a pass with running jobs at
//!   or past their planned end (`expired`: their rows, in the running set's order);
//!   returns one new estimate per job (int) or None.
//!
//! Job rows and times cross as tuples of ints. One call per time point, as the Python
//! engine makes its calls in that order (completions observed, then submissions
//! predicted). Whatever a function raises stops the run: the exception is kept (the
//! binding raises it unchanged) and the core is asked to stop.

use dispatchlab_core::{Error, Predictor};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::python_dispatcher::ErrorSlot;

/// The message of the core's stop when the Python predictor raised (never shown: the
/// binding raises the kept exception instead).
pub const STOPPED: &str = "the Python predictor raised";

/// A predictor written in Python, seen by the core.
pub struct PyPredictor {
    at_time_fn: Py<PyAny>,
    expiry_fn: Py<PyAny>,
    observes: bool,
    /// the jobs started since the previous call, and their start times
    started: Vec<u32>,
    start_times: Vec<i64>,
    error: ErrorSlot,
}

impl PyPredictor {
    /// An adapter calling `at_time_fn` and `expiry_fn` (see the module docs);
    /// `observes`: whether `at_time_fn` needs the time points with completions only.
    pub fn new(
        at_time_fn: Py<PyAny>,
        expiry_fn: Py<PyAny>,
        observes: bool,
        error: ErrorSlot,
    ) -> Self {
        PyPredictor {
            at_time_fn,
            expiry_fn,
            observes,
            started: Vec::new(),
            start_times: Vec::new(),
            error,
        }
    }

    /// The error the core gets for `err` (kept for the binding).
    fn stop(&self, err: PyErr) -> Error {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(err);
        }
        Error::Dispatch(STOPPED.to_string())
    }

    /// Call `f(now, started, start_times, *rest)` and extract its answer.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&Self, Python<'_>, Bound<'_, PyTuple>, Bound<'_, PyTuple>) -> PyResult<T>,
    ) -> Result<T, Error> {
        let answer = Python::attach(|py| -> PyResult<T> {
            let started = PyTuple::new(py, &self.started)?;
            let times = PyTuple::new(py, &self.start_times)?;
            f(self, py, started, times)
        });
        self.started.clear();
        self.start_times.clear();
        answer.map_err(|e| self.stop(e))
    }
}

impl Predictor for PyPredictor {
    fn name(&self) -> &'static str {
        "python"
    }

    fn observes(&self) -> bool {
        self.observes
    }

    fn started(&mut self, job: u32, now: i64) {
        self.started.push(job);
        self.start_times.push(now);
    }

    fn at_time(
        &mut self,
        now: i64,
        completed: &[u32],
        submitted: &[u32],
        out: &mut Vec<i64>,
    ) -> Result<(), Error> {
        let estimates = self.call(|this, py, started, times| {
            let args = (
                now,
                started,
                times,
                PyTuple::new(py, completed)?,
                PyTuple::new(py, submitted)?,
            );
            this.at_time_fn.call1(py, args)?.extract::<Vec<i64>>(py)
        })?;
        out.extend(estimates);
        Ok(())
    }

    fn on_expiry(
        &mut self,
        now: i64,
        expired: &[(u32, i64)],
        out: &mut Vec<Option<i64>>,
    ) -> Result<(), Error> {
        let new = self.call(|this, py, started, times| {
            let rows = PyTuple::new(py, expired.iter().map(|&(j, _)| j))?;
            this.expiry_fn
                .call1(py, (now, started, times, rows))?
                .extract::<Vec<Option<i64>>>(py)
        })?;
        out.extend(new);
        Ok(())
    }
}
