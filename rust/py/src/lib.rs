//! The Python binding of `dispatchlab-core`: the extension module `dispatchlab._core`.
//!
//! Only conversions live here (numpy arrays in, numpy arrays out, errors and panics
//! to Python exceptions); every rule of the simulation is in the core crate.

use std::panic::{catch_unwind, AssertUnwindSafe};

use dispatchlab_core::{CountingWorkload, Error, Overrun};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The values of a one-dimensional int64 array (copied: the run owns its input).
fn column(a: &PyReadonlyArray1<'_, i64>) -> Vec<i64> {
    a.as_array().to_vec()
}

/// The message of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Run `f` without the GIL; a panic in it becomes a RuntimeError with its message.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(move || catch_unwind(AssertUnwindSafe(f)))
        .map_err(|payload| {
            PyRuntimeError::new_err(format!(
                "the native core panicked (a bug): {}",
                panic_message(payload.as_ref())
            ))
        })
}

type Columns<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i8>>,
);

/// simulate_counting(submit, run, requested, units, total_cores, dispatcher, *,
/// predictor="walltime", overrun="run", counts=False)
/// --
///
/// Simulate jobs on a counting platform (`total_cores` pooled cores, every unit one
/// core) natively, with the engine semantics of `dispatchlab.sim.engine`.
///
/// `submit`, `run`, `requested` and `units` are int64 arrays, one value per job, in
/// row order (submit times non-decreasing). `dispatcher` is "fifo" or "easy" (EASY,
/// backfill order fifo, one reservation); `predictor` "walltime" or "real"; `overrun`
/// "run" or "kill". Returns `(start, end, status)` as numpy arrays (int64, int64,
/// int8; status 0 completed, 1 killed, 2 rejected; start and end -1 for a rejected
/// job), and with `counts=True` also the run's event and pass counts:
/// `(start, end, status, events, passes)`.
///
/// The GIL is released during the run. Bad input raises ValueError naming the field
/// (and job row); a broken rule or a panic in the core raises RuntimeError with its
/// message (never an abort).
#[pyfunction]
#[pyo3(signature = (submit, run, requested, units, total_cores, dispatcher, *,
                    predictor = "walltime", overrun = "run", counts = false))]
#[allow(clippy::too_many_arguments)] // the Python signature: columns and options
fn simulate_counting<'py>(
    py: Python<'py>,
    submit: PyReadonlyArray1<'py, i64>,
    run: PyReadonlyArray1<'py, i64>,
    requested: PyReadonlyArray1<'py, i64>,
    units: PyReadonlyArray1<'py, i64>,
    total_cores: i64,
    dispatcher: &str,
    predictor: &str,
    overrun: &str,
    counts: bool,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let overrun = Overrun::parse(overrun).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let jobs = CountingWorkload::new(
        column(&submit),
        column(&run),
        column(&requested),
        column(&units),
        total_cores,
        overrun,
    )
    .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (dispatcher, predictor) = (dispatcher.to_string(), predictor.to_string());
    let outcome = match detached(py, move || {
        dispatchlab_core::simulate_counting(jobs, &dispatcher, &predictor)
    })? {
        Ok(outcome) => outcome,
        Err(e @ Error::Input { .. }) => return Err(PyValueError::new_err(e.to_string())),
        Err(e @ Error::Dispatch(_)) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    let columns: Columns<'py> = (
        PyArray1::from_vec(py, outcome.start),
        PyArray1::from_vec(py, outcome.end),
        PyArray1::from_vec(py, outcome.status),
    );
    if counts {
        (
            columns.0,
            columns.1,
            columns.2,
            outcome.events,
            outcome.passes,
        )
            .into_pyobject(py)
    } else {
        columns.into_pyobject(py)
    }
}

/// _panic_for_test(message)
/// --
///
/// Panic in native code with `message` through the same path as a run (tests
/// check that a panic becomes a Python RuntimeError, never an abort).
#[pyfunction]
fn _panic_for_test(py: Python<'_>, message: String) -> PyResult<()> {
    detached(py, move || -> () { panic!("{message}") })
}

/// dispatchlab's compiled core (the Rust crate dispatchlab-core).
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_counting, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
