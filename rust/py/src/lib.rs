//! The Python binding of `dispatchlab-core`: the extension module `dispatchlab._core`.
//!
//! Only conversions live here (numpy arrays in, numpy arrays out, errors and panics
//! to Python exceptions); every rule of the simulation is in the core crate.

use std::panic::{catch_unwind, AssertUnwindSafe};

mod python_dispatcher;
use python_dispatcher::{ErrorSlot, NativeQueue, NativeRunning, PyDispatcher};
mod python_predictor;
use python_predictor::PyPredictor;

use dispatchlab_core::{
    CountingWorkload, Engine, Error, NodeMatrix, NodeWorkload, Nodes, Order, OrderParam, Overrun,
    Params,
};
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;

/// The values of a one-dimensional int64 array (copied: the run owns its input).
fn column(a: &PyReadonlyArray1<'_, i64>) -> Vec<i64> {
    a.as_array().to_vec()
}

/// The four job columns every simulate function takes first: submit, run, requested
/// time, units.
type JobArrays<'py> = [PyReadonlyArray1<'py, i64>; 4];

/// A counting run's workload of `jobs` (checked by the core: bad input is a ValueError).
fn counting_workload(
    jobs: &JobArrays<'_>,
    total_cores: i64,
    overrun: Overrun,
) -> PyResult<CountingWorkload> {
    let [submit, run, requested, units] = jobs;
    CountingWorkload::new(
        column(submit),
        column(run),
        column(requested),
        column(units),
        total_cores,
        overrun,
    )
    .map_err(value_error)
}

/// A node-level run's workload of `jobs` on `nodes` (`requests`: jobs x resources
/// per unit; `unservable`: the request fitting's flags, None for none).
fn node_workload(
    jobs: &JobArrays<'_>,
    requests: &PyReadonlyArray2<'_, i64>,
    nodes: Nodes,
    core: Option<usize>,
    unservable: Option<PyReadonlyArray1<'_, bool>>,
    overrun: Overrun,
) -> PyResult<NodeWorkload> {
    let [submit, run, requested, units] = jobs;
    let jobs = NodeWorkload::new(
        column(submit),
        column(run),
        column(requested),
        column(units),
        matrix("requests", requests)?,
        nodes,
        core,
        overrun,
    )
    .map_err(value_error)?;
    match unservable {
        Some(flags) => jobs
            .with_unservable(flags.as_array().to_vec())
            .map_err(value_error),
        None => Ok(jobs),
    }
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

/// The parameter names `params` may hold.
const PARAMS: &str = "skip, order, reservations, priority, scope, allocator";

/// An ordering parameter: a name, or an int64 array of per-job ranks.
fn order_param(field: &'static str, value: &Bound<'_, PyAny>) -> PyResult<OrderParam> {
    if let Ok(name) = value.extract::<String>() {
        return OrderParam::parse(field, &name, field == "order").map_err(value_error);
    }
    match value.extract::<PyReadonlyArray1<'_, i64>>() {
        Ok(rank) => Ok(OrderParam::Order(Order::Rank(column(&rank)))),
        Err(_) => Err(PyValueError::new_err(format!(
            "{field}: must be an ordering name or an int64 array of per-job ranks, got {}",
            value.get_type().name()?
        ))),
    }
}

/// The dispatcher parameters of a `params` dict (see `simulate_counting`).
fn parse_params(params: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut out = Params::default();
    let Some(params) = params else {
        return Ok(out);
    };
    let bad = |key: &str, what: &str| PyValueError::new_err(format!("{key}: must be {what}"));
    for (key, value) in params.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyValueError::new_err("params: the keys must be strings"))?;
        match key.as_str() {
            "skip" => out.skip = Some(value.extract().map_err(|_| bad(&key, "a bool"))?),
            "reservations" => {
                out.reservations = Some(value.extract().map_err(|_| bad(&key, "an integer"))?)
            }
            "scope" => out.scope = Some(value.extract().map_err(|_| bad(&key, "a string"))?),
            "allocator" => {
                out.allocator = Some(value.extract().map_err(|_| bad(&key, "a string"))?)
            }
            "order" => out.order = Some(order_param("order", &value)?),
            "priority" => {
                out.priority = match order_param("priority", &value)? {
                    OrderParam::Order(order) => Some(order),
                    OrderParam::Priority => unreachable!("parse refuses it for priority"),
                }
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "params: no parameter {key:?} (the parameters: {PARAMS})"
                )))
            }
        }
    }
    Ok(out)
}

type Columns<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i8>>,
);

/// simulate_counting(submit, run, requested, units, total_cores, dispatcher, *,
/// predictor="walltime", overrun="run", counts=False, params=None,
/// python_predictor=None)
/// --
///
/// Simulate jobs on a counting platform (`total_cores` pooled cores, every unit one
/// core) natively, with the engine semantics of `dispatchlab.sim.engine`.
///
/// `submit`, `run`, `requested` and `units` are int64 arrays, one value per job, in
/// row order (submit times non-decreasing). `dispatcher` is "fifo", "sjf", "ljf",
/// "easy" or "conservative", with the semantics and tie-breaks of the Python classes
/// (`dispatchlab.dispatch.priority`, `dispatchlab.dispatch.backfill`); `params` is a
/// dict of its parameters (absent: the class's default), as the Python class takes
/// them:
///
/// * "sjf", "ljf": `skip` (bool; walk past jobs that do not fit);
/// * "easy": `order` (the backfill scan order), `reservations` (int K >= 1),
///   `priority` (the queue priority) and `scope` ("backfill" or "queue");
/// * "conservative": `order`;
///
/// where an ordering is "fifo" (or "fcfs"), "sjf", for `order` also "priority", or an
/// int64 array of per-job ranks (by job row; lower first, ties by queue order) for a
/// static ordering the caller ranked over all jobs. `predictor` is "walltime" or
/// "real", or `python_predictor` is `(at_time, on_expiry, observes)`: a predictor
/// written in Python, called at each time point with submissions (or completions)
/// and at expiries (the protocol: `rust/py/src/python_predictor.rs`;
/// `dispatchlab.sim.native_predict` makes them), whose exceptions stop the run and
/// are raised unchanged; `overrun` "run" or "kill". Returns `(start, end, status)` as numpy arrays (int64, int64,
/// int8; status 0 completed, 1 killed, 2 rejected; start and end -1 for a rejected
/// job), and with `counts=True` also the run's event and pass counts:
/// `(start, end, status, events, passes)`.
///
/// The GIL is released during the run. Bad input raises ValueError naming the field
/// (and job row); a broken rule or a panic in the core raises RuntimeError with its
/// message (never an abort).
#[pyfunction]
#[pyo3(signature = (submit, run, requested, units, total_cores, dispatcher, *,
                    predictor = "walltime", overrun = "run", counts = false, params = None,
                    python_predictor = None))]
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
    params: Option<&Bound<'py, PyDict>>,
    python_predictor: Option<PythonPredictorArgs>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let params = parse_params(params)?;
    let overrun = Overrun::parse(overrun).map_err(value_error)?;
    let jobs = counting_workload(&[submit, run, requested, units], total_cores, overrun)?;
    let (dispatcher, predictor) = (dispatcher.to_string(), predictor.to_string());
    let slot = ErrorSlot::default();
    let python = python_predictor.map(|args| adapter(args, &slot));
    let outcome = detached(py, move || match python {
        Some(p) => dispatchlab_core::simulate_counting_predicted(jobs, &dispatcher, &params, p),
        None => dispatchlab_core::simulate_counting_with(jobs, &dispatcher, &params, &predictor),
    });
    let outcome = finished(&slot, outcome)?;
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

// ---- duration predictors written in Python (python_predictor.rs) ----

/// The `python_predictor` argument of `simulate_counting` and `simulate_nodes`:
/// `(at_time, on_expiry, observes)`, the functions `dispatchlab.sim.native_predict`
/// makes (their protocol: `rust/py/src/python_predictor.rs`) and whether the
/// predictor observes completions. Given, it replaces `predictor`: estimates are then
/// known only at submission (the dispatcher's start gets none).
type PythonPredictorArgs = (Py<PyAny>, Py<PyAny>, bool);

/// The core's predictor calling the Python functions `args`, keeping an exception in
/// `slot`.
fn adapter(args: PythonPredictorArgs, slot: &ErrorSlot) -> Box<dyn dispatchlab_core::Predictor> {
    let (at_time, on_expiry, observes) = args;
    Box::new(PyPredictor::new(at_time, on_expiry, observes, slot.clone()))
}

/// A user's input error of the core as Python's `ValueError`.
fn value_error(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The run's outcome: if a Python callback raised, its exception, unchanged (the core
/// only stopped because of it); else the core's errors as Python's (`ValueError` for a
/// user's input, `RuntimeError` for a broken rule).
fn finished<T>(slot: &ErrorSlot, outcome: PyResult<Result<T, Error>>) -> PyResult<T> {
    if let Some(err) = slot.lock().ok().and_then(|mut e| e.take()) {
        return Err(err);
    }
    match outcome? {
        Ok(outcome) => Ok(outcome),
        Err(e @ Error::Input { .. }) => Err(value_error(e)),
        Err(e @ Error::Dispatch(_)) => Err(PyRuntimeError::new_err(e.to_string())),
    }
}

/// A two-dimensional int64 array as a row-major matrix (copied).
fn matrix(field: &'static str, a: &PyReadonlyArray2<'_, i64>) -> PyResult<NodeMatrix> {
    let v = a.as_array();
    let (rows, cols) = v.dim();
    NodeMatrix::new(field, rows, cols, v.iter().copied().collect()).map_err(value_error)
}

type NodeColumns<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i8>>,
    u64,
    u64,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// simulate_nodes(submit, run, requested, units, requests, capacity, dispatcher, *,
/// core=None, weights=None, ranks=None, unservable=None, predictor="walltime",
/// overrun="run", params=None, python_predictor=None)
/// --
///
/// Simulate jobs on a node-level platform natively, with the engine semantics of
/// `dispatchlab.sim.engine` (placement by the dispatcher's allocator, a job the empty
/// platform cannot host rejected at submission).
///
/// `submit`, `run`, `requested` and `units` are int64 arrays, one value per job, in
/// row order (submit times non-decreasing); `requests` is the int64 (jobs x
/// resources) matrix of per-unit requests and `capacity` the int64 (nodes x
/// resources) capacity matrix, resources in the platform's order (internal `@`
/// resources included). `core`: the index of the `core` resource (None: the platform
/// has none). `weights`: the node weights (int64, one per node) when they differ
/// (`Platform.has_weights()`), else None; `ranks`: the nodes' efficiency ranks
/// (None: all equal). `unservable`: a bool array, true for each job the request
/// fitting found unservable (rejected at submission; None: none). `dispatcher` is
/// "fifo", "sjf" or "ljf"; `params` as for
/// `simulate_counting` (`skip`), plus `allocator`: "first-fit" (default),
/// "best-fit", "consolidate" or "energy-consolidate". `predictor` is "walltime" or
/// "real" (or `python_predictor` as for `simulate_counting`); `overrun` "run" or
/// "kill".
///
/// Returns `(start, end, status, events, passes, offsets, nodes, counts)`: the
/// columns and counts of `simulate_counting(..., counts=True)` and the allocations as
/// flat int64 arrays: job row `j` ran on `nodes[offsets[j]:offsets[j + 1]]` with
/// `counts[...]` units on each, in the allocator's order (none for a rejected job).
///
/// The GIL is released during the run. Bad input raises ValueError naming the field
/// (and job row); a broken rule or a panic in the core raises RuntimeError.
#[pyfunction]
#[pyo3(signature = (submit, run, requested, units, requests, capacity, dispatcher, *,
                    core = None, weights = None, ranks = None, unservable = None,
                    predictor = "walltime", overrun = "run", params = None,
                    python_predictor = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: columns and options
fn simulate_nodes<'py>(
    py: Python<'py>,
    submit: PyReadonlyArray1<'py, i64>,
    run: PyReadonlyArray1<'py, i64>,
    requested: PyReadonlyArray1<'py, i64>,
    units: PyReadonlyArray1<'py, i64>,
    requests: PyReadonlyArray2<'py, i64>,
    capacity: PyReadonlyArray2<'py, i64>,
    dispatcher: &str,
    core: Option<usize>,
    weights: Option<PyReadonlyArray1<'py, i64>>,
    ranks: Option<PyReadonlyArray1<'py, i64>>,
    unservable: Option<PyReadonlyArray1<'py, bool>>,
    predictor: &str,
    overrun: &str,
    params: Option<&Bound<'py, PyDict>>,
    python_predictor: Option<PythonPredictorArgs>,
) -> PyResult<NodeColumns<'py>> {
    let params = parse_params(params)?;
    let overrun = Overrun::parse(overrun).map_err(value_error)?;
    let capacity = matrix("capacity", &capacity)?;
    let n_nodes = capacity.rows();
    let ranks = ranks.map_or_else(|| vec![0; n_nodes], |r| column(&r));
    let nodes = Nodes::new(capacity, weights.map(|w| column(&w)), ranks).map_err(value_error)?;
    let jobs = node_workload(
        &[submit, run, requested, units],
        &requests,
        nodes,
        core,
        unservable,
        overrun,
    )?;
    let (dispatcher, predictor) = (dispatcher.to_string(), predictor.to_string());
    let slot = ErrorSlot::default();
    let python = python_predictor.map(|args| adapter(args, &slot));
    let outcome = detached(py, move || match python {
        Some(p) => dispatchlab_core::simulate_nodes_predicted(jobs, &dispatcher, &params, p),
        None => dispatchlab_core::simulate_nodes_with(jobs, &dispatcher, &params, &predictor),
    });
    let outcome = finished(&slot, outcome)?;
    let (offsets, nodes, counts) = outcome.flat_allocations();
    Ok((
        PyArray1::from_vec(py, outcome.start),
        PyArray1::from_vec(py, outcome.end),
        PyArray1::from_vec(py, outcome.status),
        outcome.events,
        outcome.passes,
        PyArray1::from_vec(py, offsets),
        PyArray1::from_vec(py, nodes),
        PyArray1::from_vec(py, counts),
    ))
}

/// simulate_python(submit, run, requested, units, total_cores, pass_fn, state, *,
/// empty_queue=None, predictor="walltime", overrun="run", nodes=None,
/// python_predictor=None)
/// --
///
/// Simulate jobs natively under a dispatcher written in Python: the columns,
/// `total_cores`, `predictor`, `python_predictor` and `overrun` as for
/// `simulate_counting`; on a
/// node-level platform `nodes` is `(requests, capacity, core, unservable)` as for
/// `simulate_nodes` (the allocations are the Python side's: `pass_fn` answers each
/// start with its allocation); `pass_fn` is called at each pass with the pass's state
/// and returns the decisions to apply (the protocol: `rust/py/src/python_dispatcher.rs`;
/// `dispatchlab.sim.native_view` makes it), `state` (a `NativeQueue` and a
/// `NativeRunning`) is brought up to the run's waiting queue and running set before
/// each call, `empty_queue` is called at each pass on an empty
/// queue (no wake-up fired): whether to call `pass_fn` then (None: always). Returns
/// `(start, end, status, events, passes)`.
///
/// The GIL is released during the run and taken at each call. An exception raised by
/// `pass_fn` or `empty_queue` stops the run and is raised unchanged; bad input raises
/// ValueError, a broken rule or a panic in the core RuntimeError.
#[pyfunction]
#[pyo3(signature = (submit, run, requested, units, total_cores, pass_fn, state, *,
                    empty_queue = None, predictor = "walltime", overrun = "run",
                    nodes = None, python_predictor = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: columns and options
fn simulate_python<'py>(
    py: Python<'py>,
    submit: PyReadonlyArray1<'py, i64>,
    run: PyReadonlyArray1<'py, i64>,
    requested: PyReadonlyArray1<'py, i64>,
    units: PyReadonlyArray1<'py, i64>,
    total_cores: i64,
    pass_fn: Py<PyAny>,
    state: (Py<NativeQueue>, Py<NativeRunning>),
    empty_queue: Option<Py<PyAny>>,
    predictor: &str,
    overrun: &str,
    nodes: Option<NodeArgs<'py>>,
    python_predictor: Option<PythonPredictorArgs>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let overrun = Overrun::parse(overrun).map_err(value_error)?;
    let slot = ErrorSlot::default();
    let dispatcher = Box::new(PyDispatcher::new(pass_fn, empty_queue, slot.clone(), state));
    let predictor = predictor.to_string();
    let python = python_predictor.map(|args| adapter(args, &slot));
    let arrays = [submit, run, requested, units];
    let outcome = match nodes {
        None => {
            let jobs = counting_workload(&arrays, total_cores, overrun)?;
            detached(py, move || match python {
                Some(p) => Engine::new(jobs, dispatcher, p).and_then(Engine::run),
                None => dispatchlab_core::simulate_counting_by(jobs, dispatcher, &predictor),
            })
        }
        Some((requests, capacity, core, unservable)) => {
            let capacity = matrix("capacity", &capacity)?;
            let ranks = vec![0; capacity.rows()];
            let platform = Nodes::new(capacity, None, ranks).map_err(value_error)?;
            let jobs = node_workload(&arrays, &requests, platform, core, unservable, overrun)?;
            detached(py, move || match python {
                Some(p) => Engine::with_nodes(jobs, dispatcher, p).and_then(Engine::run),
                None => dispatchlab_core::simulate_nodes_by(jobs, dispatcher, &predictor),
            })
        }
    };
    let outcome = finished(&slot, outcome)?;
    (
        PyArray1::from_vec(py, outcome.start),
        PyArray1::from_vec(py, outcome.end),
        PyArray1::from_vec(py, outcome.status),
        outcome.events,
        outcome.passes,
    )
        .into_pyobject(py)
}

/// A node-level run's platform arguments of `simulate_python`: `(requests, capacity,
/// core, unservable)` as for `simulate_nodes`.
type NodeArgs<'py> = (
    PyReadonlyArray2<'py, i64>,
    PyReadonlyArray2<'py, i64>,
    Option<usize>,
    Option<PyReadonlyArray1<'py, bool>>,
);

/// _panic_for_test(message)
/// --
///
/// Panic in native code with `message` through the same path as a run (tests
/// check that a panic becomes a Python RuntimeError, never an abort).
#[pyfunction]
fn _panic_for_test(py: Python<'_>, message: String) -> PyResult<()> {
    detached(py, move || -> () { panic!("{message}") })
}

// ---- SWF parsing (dispatchlab-core's swf module): bytes in, columns out ----

/// SwfParser(ignore_extra=False, size_hint=0)
/// --
///
/// The fast path of `dispatchlab.workload.swf.read_swf` (dispatchlab-core's `swf`
/// module): the caller reads and decompresses the file and feeds its text in blocks;
/// `finish()` returns the columns of a clean file, else why the file is handed back
/// to the Python reader (the reference, which reads it with its skips and errors).
/// `ignore_extra`: job lines may have more than 18 fields (the extras are skipped);
/// `size_hint`: the text's expected size in bytes (0: unknown), to size the columns
/// once (any hint gives the same columns).
#[pyclass(name = "SwfParser", module = "dispatchlab._core")]
struct PySwfParser {
    inner: Option<dispatchlab_core::SwfParser>,
}

/// The columns of a clean file as Python objects (see `SwfParser.finish`).
type SwfOut<'py> = (
    Vec<Bound<'py, PyAny>>,
    Vec<Bound<'py, pyo3::types::PyBytes>>,
    u64,
);

#[pymethods]
impl PySwfParser {
    #[new]
    #[pyo3(signature = (ignore_extra = false, size_hint = 0))]
    fn new(ignore_extra: bool, size_hint: usize) -> Self {
        PySwfParser {
            inner: Some(dispatchlab_core::SwfParser::with_size_hint(
                ignore_extra,
                size_hint,
            )),
        }
    }

    /// feed(data)
    /// --
    ///
    /// Parse the next block of the text (`bytes`, any size: a line may span blocks),
    /// without the GIL. Returns False once the file is handed back (more blocks are
    /// then ignored: the caller may stop reading).
    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<bool> {
        let parser = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("SwfParser: already finished"))?;
        detached(py, move || {
            parser.feed(data);
            parser.unclean().is_none()
        })
    }

    /// finish()
    /// --
    ///
    /// The columns of a clean file: `(columns, comments, records)` with `columns` the
    /// 18 SWF fields in order (numpy arrays over the parser's buffers: int64, float64
    /// for fields 6 and 7) and the 1-based line of each job (int64), `comments` the
    /// comment lines (bytes, verbatim without the newline) and `records` the job lines
    /// read; or, for a file handed back, a str saying where and why.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let parser = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("SwfParser: already finished"))?;
        let cols = match detached(py, move || parser.finish())? {
            Ok(cols) => cols,
            Err(why) => return why.to_string().into_bound_py_any(py),
        };
        let dispatchlab_core::SwfColumns {
            ints,
            floats,
            line,
            comments,
            records,
            ..
        } = cols;
        let [avg_cpu, used_mem] = floats;
        let mut floats = [Some(avg_cpu), Some(used_mem)];
        let mut columns = Vec::with_capacity(dispatchlab_core::swf::N_FIELDS + 1);
        for (j, values) in ints.into_iter().enumerate() {
            match dispatchlab_core::swf::FLOAT_FIELDS
                .iter()
                .position(|&f| f == j)
            {
                Some(k) => {
                    let values = floats[k].take().unwrap_or_default();
                    columns.push(PyArray1::from_vec(py, values).into_any())
                }
                None => columns.push(PyArray1::from_vec(py, values).into_any()),
            }
        }
        columns.push(PyArray1::from_vec(py, line).into_any());
        let comments = comments
            .iter()
            .map(|c| pyo3::types::PyBytes::new(py, c))
            .collect();
        let out: SwfOut<'py> = (columns, comments, records);
        out.into_bound_py_any(py)
    }
}

/// Two int64 arrays (a step function's breakpoints and values, keys and sums).
type Int64Pair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// A one-dimensional int64 array's values, borrowed when contiguous.
fn values<'a>(a: &'a PyReadonlyArray1<'_, i64>) -> std::borrow::Cow<'a, [i64]> {
    match a.as_slice() {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => std::borrow::Cow::Owned(a.as_array().to_vec()),
    }
}

/// step_function(lo, hi, weight, h0, h1)
/// --
///
/// The breakpoints and values (two int64 arrays) of the sum of int64 `weight` over the
/// half-open intervals `[lo, hi)` on the horizon `[h0, h1)` (h0 < h1), bit-identical
/// to `dispatchlab.metrics.series.step_function`'s numpy reference (core:
/// `series::step_function`); without the GIL.
#[pyfunction]
#[pyo3(name = "step_function")]
fn series_step_function<'py>(
    py: Python<'py>,
    lo: PyReadonlyArray1<'py, i64>,
    hi: PyReadonlyArray1<'py, i64>,
    weight: PyReadonlyArray1<'py, i64>,
    h0: i64,
    h1: i64,
) -> PyResult<Int64Pair<'py>> {
    let (lo, hi, weight) = (values(&lo), values(&hi), values(&weight));
    if lo.len() != hi.len() || hi.len() != weight.len() {
        return Err(PyValueError::new_err(
            "step_function: lo, hi and weight differ in length",
        ));
    }
    if h1 <= h0 {
        return Err(PyValueError::new_err(format!(
            "step_function: empty horizon [{h0}, {h1})"
        )));
    }
    let (times, vals) = detached(py, || {
        dispatchlab_core::series::step_function(&lo, &hi, &weight, h0, h1)
    })?;
    Ok((PyArray1::from_vec(py, times), PyArray1::from_vec(py, vals)))
}

/// group_sum(keys, weights)
/// --
///
/// The sorted distinct int64 `keys` and the (wrapping) sum of the int64 `weights` per
/// key, as `dispatchlab.metrics.series._group_sum` (core: `series::group_sum`); without
/// the GIL.
#[pyfunction]
#[pyo3(name = "group_sum")]
fn series_group_sum<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, i64>,
    weights: PyReadonlyArray1<'py, i64>,
) -> PyResult<Int64Pair<'py>> {
    let (keys, weights) = (values(&keys), values(&weights));
    if keys.len() != weights.len() {
        return Err(PyValueError::new_err(
            "group_sum: keys and weights differ in length",
        ));
    }
    let (k, s) = detached(py, || dispatchlab_core::series::group_sum(&keys, &weights))?;
    Ok((PyArray1::from_vec(py, k), PyArray1::from_vec(py, s)))
}

/// dispatchlab's compiled core (the Rust crate dispatchlab-core).
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_counting, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_nodes, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_python, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_class::<PySwfParser>()?;
    m.add_class::<NativeQueue>()?;
    m.add_class::<NativeRunning>()?;
    m.add_function(wrap_pyfunction!(series_step_function, m)?)?;
    m.add_function(wrap_pyfunction!(series_group_sum, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
