//! Duration predictors (`dispatchlab.predict.duration.base`): the estimate a job gets
//! at submission and the expiry rule for running jobs that outlive it.

use crate::{Error, Overrun};

/// A duration predictor, as the engine calls it (the Python engine's order of calls,
/// `dispatchlab.predict.duration.base`): at each time point with completions or
/// submissions, [`Predictor::at_time`] with the jobs completed then (observed first)
/// and the jobs submitted then that fit the platform (their estimates); at a pass
/// with running jobs at or past their planned end, [`Predictor::on_expiry`]. A job's
/// start is told by [`Predictor::started`] when it happens (the Python predictor's
/// live start times).
///
/// A predictor that learns nothing knows every estimate before the run
/// ([`Predictor::in_advance`]): the engine then hands them to the dispatcher's
/// [`crate::Dispatcher::start`]; for the others the dispatcher's `start` is not
/// called (estimates exist only from submission on).
pub trait Predictor: Send {
    /// The predictor's registered name.
    fn name(&self) -> &'static str;

    /// Every job's estimate at submission (s, >= 0) when known before the run; None
    /// (the default): known only at submission.
    fn in_advance(&self) -> Option<Vec<i64>> {
        None
    }

    /// The time point `now`: the jobs `completed` then (in completion order) are
    /// observed, then the jobs `submitted` then (in row order) get their estimates
    /// (s, >= 0), one each, appended to `out`. An error stops the run.
    fn at_time(
        &mut self,
        now: i64,
        completed: &[u32],
        submitted: &[u32],
        out: &mut Vec<i64>,
    ) -> Result<(), Error>;

    /// Whether [`Predictor::at_time`] needs the completions (false: it is called only
    /// at time points with submissions).
    fn observes(&self) -> bool {
        false
    }

    /// Job `job` started at `now`.
    fn started(&mut self, job: u32, now: i64) {
        let _ = (job, now);
    }

    /// New estimates for the running jobs `expired` (`(job row, start time)`, each at
    /// or past its planned end at `now`), one per job appended to `out`: a new
    /// estimate (s from the job's start, > `now - started`), or None: no later
    /// estimate exists and the job counts as ending now. An error stops the run.
    fn on_expiry(
        &mut self,
        now: i64,
        expired: &[(u32, i64)],
        out: &mut Vec<Option<i64>>,
    ) -> Result<(), Error>;
}

/// Tsafrir et al. (2007)'s expiry rule: the requested time `wall` if it is still
/// ahead of `now` for a job started at `started`, else None.
pub fn tsafrir(wall: i64, started: i64, now: i64) -> Option<i64> {
    (started + wall > now).then_some(wall)
}

/// The predictors that learn nothing: their estimates (known in advance) and
/// Tsafrir's expiry rule.
macro_rules! static_predictor {
    ($t:ty, $name:literal, $est:ident) => {
        impl $t {
            /// Job `job`'s estimate at its submission (s).
            pub fn estimate(&self, job: usize) -> i64 {
                self.$est[job]
            }

            /// The expiry rule (Tsafrir's) for job `job`, started at `started`, at `now`.
            pub fn expiry(&self, job: usize, started: i64, now: i64) -> Option<i64> {
                tsafrir(self.requested[job], started, now)
            }
        }

        impl Predictor for $t {
            fn name(&self) -> &'static str {
                $name
            }
            fn in_advance(&self) -> Option<Vec<i64>> {
                Some(self.$est.clone())
            }
            fn at_time(
                &mut self,
                _now: i64,
                _completed: &[u32],
                submitted: &[u32],
                out: &mut Vec<i64>,
            ) -> Result<(), Error> {
                out.extend(submitted.iter().map(|&j| self.$est[j as usize]));
                Ok(())
            }
            fn on_expiry(
                &mut self,
                now: i64,
                expired: &[(u32, i64)],
                out: &mut Vec<Option<i64>>,
            ) -> Result<(), Error> {
                out.extend(
                    expired
                        .iter()
                        .map(|&(j, started)| self.expiry(j as usize, started, now)),
                );
                Ok(())
            }
        }
    };
}

/// W: the user's requested time (the default everywhere).
#[derive(Debug, Clone)]
pub struct Walltime {
    requested: Vec<i64>,
}

impl Walltime {
    /// The predictor for jobs with these requested times.
    pub fn new(requested: &[i64]) -> Walltime {
        Walltime {
            requested: requested.to_vec(),
        }
    }
}

static_predictor!(Walltime, "walltime", requested);

/// R: the oracle. Predicts the duration the job will be simulated for (its run time;
/// with `overrun = "kill"`, capped by its requested time).
#[derive(Debug, Clone)]
pub struct Real {
    actual: Vec<i64>,
    requested: Vec<i64>,
}

impl Real {
    /// The predictor for jobs with these run and requested times.
    pub fn new(run: &[i64], requested: &[i64], overrun: Overrun) -> Real {
        let actual = match overrun {
            Overrun::Run => run.to_vec(),
            Overrun::Kill => run.iter().zip(requested).map(|(&r, &q)| r.min(q)).collect(),
        };
        Real {
            actual,
            requested: requested.to_vec(),
        }
    }
}

static_predictor!(Real, "real", actual);

/// The native predictors by registered name: `walltime` or `real`.
pub fn make_predictor(
    name: &str,
    run: &[i64],
    requested: &[i64],
    overrun: Overrun,
) -> Result<Box<dyn Predictor>, Error> {
    match name {
        "walltime" => Ok(Box::new(Walltime::new(requested))),
        "real" => Ok(Box::new(Real::new(run, requested, overrun))),
        _ => Err(Error::Input {
            field: "predictor",
            row: None,
            message: format!("no native predictor {name:?} (the native ones: walltime, real)"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsafrir_rule_jumps_to_the_wall_time_while_it_is_ahead() {
        let p = Real::new(&[50], &[100], Overrun::Run);
        assert_eq!(p.estimate(0), 50);
        assert_eq!(p.expiry(0, 10, 60), Some(100)); // 10 + 100 > 60
        assert_eq!(p.expiry(0, 10, 110), None); // the wall time is past
        let w = Walltime::new(&[100]);
        assert_eq!(w.expiry(0, 10, 110), None);
    }

    #[test]
    fn real_is_capped_by_the_request_under_kill() {
        assert_eq!(Real::new(&[50], &[30], Overrun::Kill).estimate(0), 30);
        assert_eq!(Real::new(&[50], &[30], Overrun::Run).estimate(0), 50);
    }
}
