//! The waiting jobs by job row, for EASY's backfill scan in queue order: a segment
//! tree over job rows holding each waiting job's cores and planning duration (the
//! minimum of each per subtree), so that the next job of the scan that may start is
//! found in about O(log n) instead of walking a long queue job by job.

use crate::dispatch::View;
use crate::planned;

/// A queue at least this long puts an idle [`WaitingTree::sync_if_long`] tree in use.
pub const LONG_QUEUE: usize = 256;
/// A queue at most this long sets a [`WaitingTree::sync_if_long`] tree aside.
pub const SHORT_QUEUE: usize = 64;

/// The waiting jobs' cores and planning durations by job row (see the module docs).
///
/// A dispatcher keeps it in step with the queue: [`WaitingTree::sync`] at each pass
/// adds the jobs queued since the previous pass (the queue ascends by row, so they
/// are the rows after the last one added) and [`WaitingTree::remove`] takes out the
/// jobs the pass started (in the engine only starts take jobs out of the queue;
/// `sync` rebuilds the tree when the queue's length says otherwise).
#[derive(Debug, Default, Clone)]
pub struct WaitingTree {
    /// leaves (a power of two, at least the job count)
    size: usize,
    /// per node: the least cores of a waiting job below it (`i64::MAX`: none) and the
    /// least planning duration of one (the two minimums need not be the same job's),
    /// side by side so that a node's two values share a cache line
    nodes: Vec<[i64; 2]>,
    /// how many waiting jobs it holds
    len: usize,
    /// the last row added
    last: Option<u32>,
    /// each row's leaf when the leaves are in another order than the rows (empty: the
    /// row's own), and each leaf's row
    slot: Vec<u32>,
    row_at: Vec<u32>,
    /// set aside while the queue is short ([`WaitingTree::sync_if_long`]): it holds no
    /// job, follows nothing and answers nothing
    idle: bool,
}

impl WaitingTree {
    /// A tree whose leaves are in the order `rows` (a permutation of the job rows, the
    /// first leaf first): [`WaitingTree::next`] then finds jobs in that order.
    pub fn in_order(rows: &[u32]) -> WaitingTree {
        let mut slot = vec![0; rows.len()];
        for (leaf, &row) in rows.iter().enumerate() {
            slot[row as usize] = u32::try_from(leaf).expect("at most u32::MAX jobs");
        }
        WaitingTree {
            slot,
            row_at: rows.to_vec(),
            ..WaitingTree::default()
        }
    }

    /// The job row at leaf `leaf` (a [`WaitingTree::next`] answer).
    pub fn row(&self, leaf: u32) -> u32 {
        if self.row_at.is_empty() {
            leaf
        } else {
            self.row_at[leaf as usize]
        }
    }

    fn set(&mut self, row: usize, units: i64, duration: i64) {
        let leaf = if self.slot.is_empty() {
            row
        } else {
            self.slot[row] as usize
        };
        let mut node = self.size + leaf;
        self.nodes[node] = [units, duration];
        while node > 1 {
            node /= 2;
            let (left, right) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
            let min = [left[0].min(right[0]), left[1].min(right[1])];
            if self.nodes[node] == min {
                break; // unchanged here, so unchanged above
            }
            self.nodes[node] = min;
        }
    }

    /// Bring the tree in step with the view's queue (see the type's docs).
    pub fn sync(&mut self, view: &View<'_>) {
        let n = view.units.len();
        if self.size < n.max(1) {
            self.size = n.max(1).next_power_of_two();
            self.clear();
        }
        let queue = view.queue;
        let from = self
            .last
            .map_or(0, |last| queue.partition_point(|&j| j <= last));
        self.add(view, &queue[from..]);
        if self.len != queue.len() {
            self.clear();
            self.add(view, queue);
        }
    }

    /// [`WaitingTree::sync`] while the queue is long; a short queue sets the tree
    /// aside (idle: [`WaitingTree::sync`] and [`WaitingTree::remove`] do nothing, its
    /// caller walks the queue itself) until the queue grows long again, when it is
    /// filled with the queue anew. Long: at least [`LONG_QUEUE`] jobs to become active,
    /// at most [`SHORT_QUEUE`] to go idle (the gap keeps a queue near one length from
    /// switching back and forth). For a tree whose leaves are the job rows (not
    /// [`in_order`](WaitingTree::in_order)); returns whether the tree is in use.
    pub fn sync_if_long(&mut self, view: &View<'_>) -> bool {
        let n = view.queue.len();
        if self.idle {
            if n < LONG_QUEUE {
                return false;
            }
            self.idle = false; // empty (len 0, no last row): sync adds the whole queue
        } else if n <= SHORT_QUEUE {
            self.sync(view); // now it holds exactly the queue's jobs: take them out
            for &job in view.queue {
                self.set(job as usize, i64::MAX, i64::MAX);
            }
            self.len = 0;
            self.last = None;
            self.idle = true;
            return false;
        }
        self.sync(view);
        true
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.nodes.resize(2 * self.size, [i64::MAX; 2]);
        self.len = 0;
        self.last = None;
    }

    fn add(&mut self, view: &View<'_>, rows: &[u32]) {
        for &job in rows {
            let j = job as usize;
            self.set(j, view.units[j], planned(view.estimate[j]));
        }
        self.len += rows.len();
        if let Some(&last) = rows.last() {
            self.last = Some(last);
        }
    }

    /// The fewest cores of a waiting job (`i64::MAX`: none).
    pub fn min_units(&self) -> i64 {
        self.nodes.get(1).map_or(i64::MAX, |n| n[0])
    }

    /// Take the jobs `rows` (waiting, or started) out.
    pub fn remove(&mut self, rows: &[u32]) {
        if self.idle {
            return;
        }
        for &job in rows {
            self.set(job as usize, i64::MAX, i64::MAX);
        }
        self.len -= rows.len();
    }

    /// The first leaf at or after `from` of a waiting job that needs at most `free`
    /// (< `i64::MAX`) cores and either plans at most `within` seconds or needs at most
    /// `extra` cores (the leaf is the job row unless the tree is [`in_order`]
    /// (WaitingTree::in_order): see [`WaitingTree::row`]).
    pub fn next(&self, from: usize, free: i64, within: i64, extra: i64) -> Option<u32> {
        self.next_by(from, &|u, d| u <= free && (d <= within || u <= extra))
    }

    /// The first leaf at or after `from` of a waiting job whose cores `u` and planning
    /// duration `d` pass `test(u, d)`. `test` must hold for `(min u, min d)` of a set of
    /// jobs whenever it holds for one of them (it is asked with a subtree's minimums to
    /// skip the subtree) and must fail for `u = i64::MAX` (no job).
    pub fn next_by(&self, from: usize, test: &impl Fn(i64, i64) -> bool) -> Option<u32> {
        self.find(1, 0, self.size, from, test)
    }

    fn find(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        from: usize,
        test: &impl Fn(i64, i64) -> bool,
    ) -> Option<u32> {
        if hi <= from || !test(self.nodes[node][0], self.nodes[node][1]) {
            return None; // a necessary condition fails for every leaf below
        }
        if hi - lo == 1 {
            return u32::try_from(lo).ok(); // a leaf: its own values, exact
        }
        let mid = (lo + hi) / 2;
        self.find(2 * node, lo, mid, from, test)
            .or_else(|| self.find(2 * node + 1, mid, hi, from, test))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RunningSet;

    #[test]
    fn finds_the_next_row_that_may_start() {
        let units = [4, 1, 2, 1, 3];
        let estimate = [10, 500, 20, 0, 30];
        let running = RunningSet::default();
        let view = |queue| View {
            now: 0,
            free_cores: 2,
            queue,
            units: &units,
            estimate: &estimate,
            running: &running,
            changes: 0,
        };
        let mut t = WaitingTree::default();
        t.sync(&view(&[0, 1, 2]));
        assert_eq!(t.next(0, 2, 100, 0), Some(2)); // row 1 plans 500 s, extra 0
        assert_eq!(t.next(0, 2, 100, 1), Some(1)); // row 1 fits the extra core
        assert_eq!(t.next(3, 2, 100, 1), None);
        t.sync(&view(&[0, 1, 2, 3, 4]));
        assert_eq!(t.next(3, 2, 100, 0), Some(3)); // a 0 s estimate plans 1 s
        t.remove(&[1, 3]);
        t.sync(&view(&[0, 2, 4]));
        assert_eq!(t.next(0, 3, 100, 0), Some(2));
        assert_eq!(t.next(3, 3, 100, 0), Some(4));
        // a queue the tree did not follow: rebuilt
        t.sync(&view(&[1, 4]));
        assert_eq!(t.next(0, 1, 1000, 0), Some(1));
        // leaves in another order: rows 4, 2, 0, 3, 1
        let mut o = WaitingTree::in_order(&[4, 2, 0, 3, 1]);
        o.sync(&view(&[0, 1, 2, 3, 4]));
        assert_eq!(o.next(0, 2, i64::MAX, 0).map(|l| o.row(l)), Some(2));
        assert_eq!(o.next(2, 2, i64::MAX, 0).map(|l| o.row(l)), Some(3));
        assert_eq!(
            o.next(0, i64::MAX - 1, i64::MAX, 0).map(|l| o.row(l)),
            Some(4)
        );
    }

    #[test]
    fn a_tree_set_aside_for_short_queues_answers_as_a_fresh_one() {
        let n = 4 * LONG_QUEUE;
        let units: Vec<i64> = (0..n as i64).map(|j| 1 + (j * 7919) % 13).collect();
        let estimate: Vec<i64> = (0..n as i64).map(|j| (j * 104_729) % 1000).collect();
        let running = RunningSet::default();
        fn view<'a>(q: &'a [u32], u: &'a [i64], e: &'a [i64], r: &'a RunningSet) -> View<'a> {
            View {
                now: 0,
                free_cores: 5,
                queue: q,
                units: u,
                estimate: e,
                running: r,
                changes: 0,
            }
        }
        let mut t = WaitingTree::default();
        let mut queue: Vec<u32> = Vec::new();
        let mut next = 0u32;
        // grow to a long queue, shrink to a short one, grow again, comparing each step
        for (grow, take) in [(10, 3), (300, 0), (0, 290), (5, 0), (400, 50), (0, 300)] {
            queue.extend(next..next + grow);
            next += grow;
            let active = t.sync_if_long(&view(&queue, &units, &estimate, &running));
            let started: Vec<u32> = queue.iter().step_by(2).take(take).copied().collect();
            if active {
                let mut fresh = WaitingTree::default();
                fresh.sync(&view(&queue, &units, &estimate, &running));
                for from in [0, queue[0] as usize, queue[queue.len() / 2] as usize] {
                    for (free, within, extra) in [(5, 100, 0), (3, 1000, 2), (13, 0, 13)] {
                        assert_eq!(
                            t.next(from, free, within, extra),
                            fresh.next(from, free, within, extra)
                        );
                    }
                }
                assert_eq!(t.min_units(), fresh.min_units());
            } else {
                assert!(queue.len() < LONG_QUEUE || queue.len() <= SHORT_QUEUE);
            }
            t.remove(&started);
            queue.retain(|j| !started.contains(j));
        }
    }
}
