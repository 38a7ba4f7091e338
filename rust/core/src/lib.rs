//! `dispatchlab-core`: dispatchlab's simulation core, in plain Rust (no Python).
//!
//! It covers **counting platforms** (pooled cores, every job unit one
//! core) with the engine loop of `dispatchlab.sim.engine`, the waiting queue and the
//! running set ([`state`]), the `walltime` and `real` duration predictors with
//! Tsafrir's expiry rule ([`predict`]), and the dispatchers `fifo` ([`dispatch`]),
//! `sjf` and `ljf`, strict or skipping ([`list`]), `easy` with K reservations, a
//! backfill scan order and a static queue priority, and `conservative`
//! ([`backfill`], on the availability profile of [`profile`]).
//! [`simulate_counting_with`] runs one simulation and returns the per-job results as
//! plain vectors ([`Outcome`]).
//!
//! **Node-level platforms** (nodes x any resources): the free matrix and the
//! allocators of [`alloc`] (first-fit, best-fit, consolidate, energy-consolidate, with
//! node weights), the engine keeping every started job's allocation
//! ([`Engine::with_nodes`], [`simulate_nodes_with`]), and the dispatchers that place
//! jobs on nodes ([`dispatch::make_node_dispatcher`]: fifo, sjf, ljf).
//!
//! The semantics are those of the Python engine, event for event: at every time point
//! with an event, (1) completions of jobs ending now, in job (row) order, (2)
//! submissions at this time, in row order (a job needing more cores than the platform
//! has is rejected; every other job gets its estimate and joins the end of the queue),
//! (3) one dispatch pass: running jobs at or past their planned end get a new estimate
//! from the predictor's expiry rule (or count as ending now), then the dispatcher is
//! called when the queue is not empty. Jobs a pass starts that end at the same time
//! (0-second jobs) make another time point at the same time: their completions, then
//! another pass. The engine counts events (completions and submissions) and passes as
//! the Python engine does.
//!
//! [`series`]: the integer step functions of `dispatchlab.metrics` (queue length,
//! resources in use) and their group sums, bit-identical to the numpy reference.
//!
//! There is no global state: any number of simulations can run at once, on any threads.

#![forbid(unsafe_code)]

pub mod alloc;
pub mod backfill;
pub mod backfill_nodes;
pub mod dispatch;
pub mod engine;
pub mod list;
pub mod node_profile;
pub mod predict;
pub mod profile;
pub mod series;
pub mod state;
pub mod swf;
pub mod waiting;
pub mod workload;

pub use alloc::{make_allocator, Allocation, Allocator, MatrixRef, NodeMatrix, Nodes};
pub use backfill::Backfill;
pub use dispatch::{
    make_dispatcher, make_dispatcher_with, make_node_dispatcher, Dispatcher, Fifo, NodeView, Order,
    OrderParam, Params, PassContext, PassRequests, Placement, View,
};
pub use engine::{
    simulate_counting, simulate_counting_by, simulate_counting_predicted, simulate_counting_with,
    simulate_nodes_by, simulate_nodes_predicted, simulate_nodes_with, Engine, Outcome,
};
pub use list::{NodeList, Sorted};
pub use predict::{make_predictor, tsafrir, Predictor, Real, Walltime};
pub use profile::CoreProfile;
pub use swf::{parse_swf, SwfColumns, SwfParser, Unclean};
pub use workload::{CountingWorkload, NodeWorkload, Overrun};

/// A job's final status: it ran to its end.
pub const COMPLETED: i8 = 0;
/// A job's final status: it was killed at its requested time (`overrun = "kill"`).
pub const KILLED: i8 = 1;
/// A job's final status: it was rejected (it needs more cores than the platform has).
pub const REJECTED: i8 = 2;
/// Internal status: waiting in the queue (never in an [`Outcome`]).
pub const WAITING: i8 = 3;
/// Internal status: running (never in an [`Outcome`]).
pub const RUNNING: i8 = 4;
/// Internal status: not submitted yet (never in an [`Outcome`]).
pub const FUTURE: i8 = 5;

/// Why a simulation could not run or stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input is wrong (a user's mistake): `field` names the input, `row` the job
    /// row when one is at fault.
    Input {
        field: &'static str,
        row: Option<usize>,
        message: String,
    },
    /// A component broke the engine's rules (a bug in a dispatcher or predictor).
    Dispatch(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Input {
                field,
                row: Some(row),
                message,
            } => write!(f, "{field}: job row {row} {message}"),
            Error::Input {
                field,
                row: None,
                message,
            } => write!(f, "{field}: {message}"),
            Error::Dispatch(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

/// The engine's time limit (s, exclusive) for a trace of `n_jobs` jobs: the same
/// bound as `dispatchlab.core.limits.time_limit` (the Python engine packs a time and a
/// job row into one 63-bit key).
pub fn time_limit(n_jobs: usize) -> i64 {
    let bits = (usize::BITS - n_jobs.leading_zeros()).max(20);
    1i64 << (62 - bits)
}

/// The planning duration of an estimate (seconds, at least 1).
pub fn planned(estimate: i64) -> i64 {
    estimate.max(1)
}
