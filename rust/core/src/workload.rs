//! The input of a counting simulation: per-job columns and the platform's core count.

use crate::alloc::{NodeMatrix, Nodes};
use crate::{time_limit, Error};

/// What happens when a job outlives its requested time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// It runs for its actual run time.
    Run,
    /// It is killed at its requested time (status [`crate::KILLED`]).
    Kill,
}

impl Overrun {
    /// `"run"` or `"kill"`.
    pub fn parse(name: &str) -> Result<Overrun, Error> {
        match name {
            "run" => Ok(Overrun::Run),
            "kill" => Ok(Overrun::Kill),
            _ => Err(Error::Input {
                field: "overrun",
                row: None,
                message: format!("overrun must be 'run' or 'kill', got {name:?}"),
            }),
        }
    }
}

/// Jobs on a counting platform, in row order (sorted by submit time, ties in file
/// order), validated as the Python engine validates them.
#[derive(Debug, Clone)]
pub struct CountingWorkload {
    /// submit time (s), non-decreasing
    pub submit: Vec<i64>,
    /// actual run time (s), >= 0
    pub run: Vec<i64>,
    /// requested time (s), >= 0
    pub requested: Vec<i64>,
    /// cores (one-core units), > 0
    pub units: Vec<i64>,
    /// the platform's cores, >= 0
    pub total_cores: i64,
    /// what happens past the requested time
    pub overrun: Overrun,
}

impl CountingWorkload {
    /// Check the columns: equal lengths, submit times non-decreasing and >= 0, run and
    /// requested times >= 0, units > 0, and every simulated time below the engine's
    /// time limit (the same horizon as the Python engine's check).
    pub fn new(
        submit: Vec<i64>,
        run: Vec<i64>,
        requested: Vec<i64>,
        units: Vec<i64>,
        total_cores: i64,
        overrun: Overrun,
    ) -> Result<CountingWorkload, Error> {
        let n = submit.len();
        for (field, len) in [
            ("run", run.len()),
            ("requested", requested.len()),
            ("units", units.len()),
        ] {
            if len != n {
                return Err(Error::Input {
                    field,
                    row: None,
                    message: format!("has {len} values, submit has {n}"),
                });
            }
        }
        if total_cores < 0 {
            return Err(Error::Input {
                field: "total_cores",
                row: None,
                message: format!("must be >= 0, got {total_cores}"),
            });
        }
        let fail = |field: &'static str, row: usize, message: String| Error::Input {
            field,
            row: Some(row),
            message,
        };
        for row in 0..n {
            if submit[row] < 0 {
                return Err(fail("submit", row, "has a negative submit time".into()));
            }
            if row > 0 && submit[row] < submit[row - 1] {
                return Err(fail(
                    "submit",
                    row,
                    "is submitted before the row above it: sort the jobs by submit time".into(),
                ));
            }
            if run[row] < 0 {
                return Err(fail("run", row, "has a negative run time".into()));
            }
            if requested[row] < 0 {
                return Err(fail("requested", row, "has no requested time".into()));
            }
            if units[row] <= 0 {
                return Err(fail("units", row, format!("requests {} units", units[row])));
            }
        }
        if n > 0 {
            let limit = time_limit(n);
            let sim_total: i128 = run
                .iter()
                .zip(&requested)
                .map(|(&r, &q)| {
                    i128::from(match overrun {
                        Overrun::Run => r,
                        Overrun::Kill => r.min(q),
                    })
                })
                .sum();
            let longest = run.iter().chain(&requested).copied().max().unwrap_or(0);
            let horizon = i128::from(submit[n - 1]) + sim_total + i128::from(longest) + 1;
            if horizon >= i128::from(limit) {
                return Err(Error::Input {
                    field: "submit",
                    row: None,
                    message: format!(
                        "simulated times must stay below {limit} s for {n} jobs \
                         (the last submission plus every run reaches {horizon} s)"
                    ),
                });
            }
        }
        Ok(CountingWorkload {
            submit,
            run,
            requested,
            units,
            total_cores,
            overrun,
        })
    }

    /// How many jobs.
    pub fn len(&self) -> usize {
        self.submit.len()
    }

    /// Whether there are no jobs.
    pub fn is_empty(&self) -> bool {
        self.submit.is_empty()
    }

    /// The simulated run time of job row `j` (s): its run time, cut at its requested
    /// time under [`Overrun::Kill`] (read job by job: the engine keeps no column of
    /// them).
    pub fn sim_run_of(&self, j: usize) -> i64 {
        match self.overrun {
            Overrun::Run => self.run[j],
            Overrun::Kill => self.run[j].min(self.requested[j]),
        }
    }
}

/// Jobs on a node-level platform: the per-job columns ([`CountingWorkload`], whose
/// `total_cores` is the platform's `core` total), every job's per-unit request (jobs x
/// resources, the platform's resource order) and the nodes.
#[derive(Debug, Clone)]
pub struct NodeWorkload {
    pub jobs: CountingWorkload,
    pub nodes: Nodes,
    pub requests: NodeMatrix,
    /// the `core` resource's column, if the platform has one
    pub core: Option<usize>,
    /// by job row, the jobs the request fitting found unservable (rejected at
    /// submission whatever they ask); empty: none ([`NodeWorkload::with_unservable`])
    pub unservable: Vec<bool>,
}

impl NodeWorkload {
    /// Check the columns as [`CountingWorkload::new`] does, and that `requests` has
    /// one row per job and one column per resource of the nodes, and `core` (if
    /// given) names a column.
    #[allow(clippy::too_many_arguments)] // the columns side by side
    pub fn new(
        submit: Vec<i64>,
        run: Vec<i64>,
        requested: Vec<i64>,
        units: Vec<i64>,
        requests: NodeMatrix,
        nodes: Nodes,
        core: Option<usize>,
        overrun: Overrun,
    ) -> Result<NodeWorkload, Error> {
        let cols = nodes.capacity.cols();
        if requests.rows() != submit.len() || requests.cols() != cols {
            return Err(Error::Input {
                field: "requests",
                row: None,
                message: format!(
                    "is {} x {}, not jobs x resources ({} x {cols})",
                    requests.rows(),
                    requests.cols(),
                    submit.len()
                ),
            });
        }
        if core.is_some_and(|k| k >= cols) {
            return Err(Error::Input {
                field: "core",
                row: None,
                message: format!("no resource column {core:?} ({cols} resources)"),
            });
        }
        let total_cores = core.map_or(0, |k| nodes.capacity.column_sum(k));
        let jobs = CountingWorkload::new(submit, run, requested, units, total_cores, overrun)?;
        Ok(NodeWorkload {
            jobs,
            nodes,
            requests,
            core,
            unservable: Vec::new(),
        })
    }

    /// These jobs with `unservable` (one flag per job row: true for a job the request
    /// fitting found unservable, which the engine rejects at submission).
    pub fn with_unservable(mut self, unservable: Vec<bool>) -> Result<NodeWorkload, Error> {
        if unservable.len() != self.jobs.len() {
            return Err(Error::Input {
                field: "unservable",
                row: None,
                message: format!(
                    "has {} values for {} jobs",
                    unservable.len(),
                    self.jobs.len()
                ),
            });
        }
        self.unservable = unservable;
        Ok(self)
    }
}
