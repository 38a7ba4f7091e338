//! Duration predictors (`dispatchlab.predict.duration.base`): the estimate a job gets
//! at submission and the expiry rule for running jobs that outlive it.

use crate::{Error, Overrun};

/// A duration predictor that learns nothing (its estimates are known in advance).
pub trait Predictor: Send {
    /// The predictor's registered name.
    fn name(&self) -> &'static str;

    /// Job `job`'s estimate (s, >= 0) at its submission.
    fn estimate(&self, job: usize) -> i64;

    /// A new estimate (s from the job's start, > `now - started`) for running job
    /// `job`, started at `started`, which is at or past its planned end at `now`; None:
    /// no later estimate exists and the job counts as ending now.
    ///
    /// The default is Tsafrir et al. (2007): the requested time if it is still ahead
    /// of `now`, else None.
    fn on_expiry(&self, job: usize, started: i64, now: i64) -> Option<i64> {
        let wall = self.requested(job);
        (started + wall > now).then_some(wall)
    }

    /// Job `job`'s requested time (s), for the expiry rule.
    fn requested(&self, job: usize) -> i64;
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

impl Predictor for Walltime {
    fn name(&self) -> &'static str {
        "walltime"
    }
    fn estimate(&self, job: usize) -> i64 {
        self.requested[job]
    }
    fn requested(&self, job: usize) -> i64 {
        self.requested[job]
    }
}

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

impl Predictor for Real {
    fn name(&self) -> &'static str {
        "real"
    }
    fn estimate(&self, job: usize) -> i64 {
        self.actual[job]
    }
    fn requested(&self, job: usize) -> i64 {
        self.requested[job]
    }
}

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
        assert_eq!(p.on_expiry(0, 10, 60), Some(100)); // 10 + 100 > 60
        assert_eq!(p.on_expiry(0, 10, 110), None); // the wall time is past
        let w = Walltime::new(&[100]);
        assert_eq!(w.on_expiry(0, 10, 110), None);
    }

    #[test]
    fn real_is_capped_by_the_request_under_kill() {
        assert_eq!(Real::new(&[50], &[30], Overrun::Kill).estimate(0), 30);
        assert_eq!(Real::new(&[50], &[30], Overrun::Run).estimate(0), 50);
    }
}
