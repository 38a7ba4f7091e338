//! The engine's mutable state containers: the waiting queue and the running set
//! (`dispatchlab.sim.state`).

/// Waiting jobs in queue order: submit time, then row order. The job table is sorted
/// by submit time, so queue order is ascending job row and appending at submission
/// keeps it.
#[derive(Debug, Default, Clone)]
pub struct WaitingQueue {
    jobs: Vec<u32>,
}

impl WaitingQueue {
    /// The waiting job rows, in queue order.
    pub fn jobs(&self) -> &[u32] {
        &self.jobs
    }

    /// How many jobs wait.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether no job waits.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Put `job` at the end of the queue (its row is above every waiting one).
    pub fn push(&mut self, job: u32) {
        debug_assert!(self.jobs.last().is_none_or(|&last| last < job));
        self.jobs.push(job);
    }

    /// Remove the jobs for which `left` is true (their order is kept for the others).
    /// `first` is how many of them form the queue's head (a fast path for passes
    /// that start a prefix, as `fifo`'s do).
    pub fn remove_where(&mut self, first: usize, left: impl Fn(u32) -> bool) {
        self.jobs.drain(..first);
        self.jobs.retain(|&job| !left(job));
    }
}

/// One running job in the running set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Running {
    /// start + planned duration (s); may lie in the past when the job outlives it
    pub est_end: i64,
    /// the job's row
    pub job: u32,
    /// its cores
    pub units: i64,
}

/// Running jobs sorted by planned end, ties by job row.
#[derive(Debug, Default, Clone)]
pub struct RunningSet {
    entries: Vec<Running>,
}

impl RunningSet {
    /// The running jobs in planned-end order (raw planned ends).
    pub fn entries(&self) -> &[Running] {
        &self.entries
    }

    /// How many jobs run.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no job runs.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, job: u32, est_end: i64) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|e| (e.est_end, e.job).cmp(&(est_end, job)))
    }

    /// Add `job` with planned end `est_end` and `units` cores.
    pub fn insert(&mut self, job: u32, est_end: i64, units: i64) {
        let pos = match self.position(job, est_end) {
            Ok(pos) | Err(pos) => pos,
        };
        self.entries.insert(
            pos,
            Running {
                est_end,
                job,
                units,
            },
        );
    }

    /// Remove `job`, whose planned end is `est_end`; false if it is not there.
    pub fn remove(&mut self, job: u32, est_end: i64) -> bool {
        match self.position(job, est_end) {
            Ok(pos) => {
                self.entries.remove(pos);
                true
            }
            Err(_) => false,
        }
    }

    /// How many running jobs have a planned end at or before `t`.
    pub fn count_ending_by(&self, t: i64) -> usize {
        self.entries.partition_point(|e| e.est_end <= t)
    }

    /// The earliest planned end, if any job runs.
    pub fn first_end(&self) -> Option<i64> {
        self.entries.first().map(|e| e.est_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_set_orders_by_end_then_row() {
        let mut r = RunningSet::default();
        r.insert(5, 100, 2);
        r.insert(3, 100, 1);
        r.insert(9, 50, 4);
        let order: Vec<u32> = r.entries().iter().map(|e| e.job).collect();
        assert_eq!(order, vec![9, 3, 5]);
        assert_eq!(r.count_ending_by(99), 1);
        assert_eq!(r.count_ending_by(100), 3);
        assert!(r.remove(3, 100));
        assert!(!r.remove(3, 100));
        assert_eq!(r.first_end(), Some(50));
    }

    #[test]
    fn queue_removes_head_and_inner_jobs() {
        let mut q = WaitingQueue::default();
        for j in [1, 2, 4, 7, 8] {
            q.push(j);
        }
        q.remove_where(1, |j| j == 7);
        assert_eq!(q.jobs(), &[2, 4, 8]);
    }
}
