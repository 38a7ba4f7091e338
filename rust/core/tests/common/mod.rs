//! What the integration tests share.

use dispatchlab_core::{tsafrir, Error, Predictor};

/// Estimates `estimate` seconds for every job, known only at its submission; at an
/// expiry, Tsafrir's rule over the requested times `requested` (by job row).
pub struct Constant {
    pub estimate: i64,
    pub requested: Vec<i64>,
}

impl Predictor for Constant {
    fn name(&self) -> &'static str {
        "constant"
    }

    fn at_time(
        &mut self,
        _now: i64,
        _completed: &[u32],
        submitted: &[u32],
        out: &mut Vec<i64>,
    ) -> Result<(), Error> {
        out.extend(submitted.iter().map(|_| self.estimate));
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
                .map(|&(j, started)| tsafrir(self.requested[j as usize], started, now)),
        );
        Ok(())
    }
}
