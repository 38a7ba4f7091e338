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

    /// Remove the waiting jobs `rows` (any order; sorted here). The jobs before the
    /// first of them stay in place and each run of jobs between two removed ones moves
    /// once (one `memmove` each), so a pass that starts jobs at the head or a few
    /// behind it costs no per-job work on the rest of the queue.
    ///
    /// Panics if a row is not waiting (the engine checks every start first).
    pub fn remove_sorted(&mut self, rows: &mut [u32]) {
        rows.sort_unstable();
        let Some(&first) = rows.first() else {
            return;
        };
        let find = |jobs: &[u32], from: usize, row: u32| {
            from + jobs[from..]
                .binary_search(&row)
                .unwrap_or_else(|_| panic!("job row {row} is not in the waiting queue"))
        };
        let mut write = find(&self.jobs, 0, first);
        let mut read = write + 1;
        for &row in &rows[1..] {
            let pos = find(&self.jobs, read, row);
            self.jobs.copy_within(read..pos, write);
            write += pos - read;
            read = pos + 1;
        }
        let len = self.jobs.len();
        self.jobs.copy_within(read..len, write);
        self.jobs.truncate(write + len - read);
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
        for j in [1, 2, 4, 7, 8, 9, 12] {
            q.push(j);
        }
        q.remove_sorted(&mut [7, 1, 9]);
        assert_eq!(q.jobs(), &[2, 4, 8, 12]);
        q.remove_sorted(&mut [12]);
        assert_eq!(q.jobs(), &[2, 4, 8]);
        q.remove_sorted(&mut [2, 4, 8]);
        assert!(q.is_empty());
        q.remove_sorted(&mut []);
    }

    #[test]
    #[should_panic(expected = "job row 5 is not in the waiting queue")]
    fn removing_a_job_that_does_not_wait_panics() {
        let mut q = WaitingQueue::default();
        q.push(3);
        q.remove_sorted(&mut [5]);
    }
}
