//! The list dispatchers ordered by estimate, `sjf` and `ljf`
//! (`dispatchlab.dispatch.priority`); `fifo` is [`crate::dispatch::Fifo`].

use crate::dispatch::{Dispatcher, View};
use crate::waiting::WaitingTree;

/// SJF / LJF: the queue sorted by estimate at submission, ascending (`sjf`) or
/// descending (`ljf`), ties by queue order. **Strict** (default): jobs start in that
/// order while they fit and the first that does not fit stops the pass. With `skip`
/// the walk goes on past jobs that do not fit, starting every later job that still
/// fits (until no core is free).
///
/// Run by the engine ([`Dispatcher::start`] gives every job's estimate), the waiting
/// jobs are kept in a [`WaitingTree`] whose leaves are in the sorted order, so a pass
/// costs O(log n) per job it looks at; without `start` (a caller outside the engine)
/// each pass sorts the queue. Both give the same decisions (tested).
#[derive(Debug, Clone)]
pub struct Sorted {
    name: &'static str,
    descending: bool,
    skip: bool,
    order: Vec<u32>,
    tree: Option<WaitingTree>,
}

impl Sorted {
    /// Shortest (estimated) job first.
    pub fn sjf(skip: bool) -> Sorted {
        Sorted {
            name: "sjf",
            descending: false,
            skip,
            order: Vec::new(),
            tree: None,
        }
    }

    /// Longest (estimated) job first.
    pub fn ljf(skip: bool) -> Sorted {
        Sorted {
            name: "ljf",
            descending: true,
            skip,
            order: Vec::new(),
            tree: None,
        }
    }

    /// The sort key of job row `j` (ties by row).
    fn key(&self, estimate: &[i64], j: u32) -> (i64, u32) {
        let e = estimate[j as usize];
        (if self.descending { -e } else { e }, j)
    }
}

impl Dispatcher for Sorted {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(&mut self, estimates: &[i64]) {
        let mut rows: Vec<u32> = (0..estimates.len())
            .map(|j| u32::try_from(j).expect("at most u32::MAX jobs"))
            .collect();
        rows.sort_unstable_by_key(|&j| self.key(estimates, j));
        self.tree = Some(WaitingTree::in_order(&rows));
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        if let Some(mut tree) = self.tree.take() {
            self.dispatch_tree(view, &mut tree, out);
            self.tree = Some(tree);
            return;
        }
        let (units, estimate) = (view.units, view.estimate);
        let mut free = view.free_cores;
        if !self.skip {
            // strict: most passes on a long queue stop at the sorted head
            let first = view
                .queue
                .iter()
                .copied()
                .min_by_key(|&j| self.key(estimate, j));
            if first.is_none_or(|j| units[j as usize] > free) {
                return;
            }
        }
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend_from_slice(view.queue);
        order.sort_unstable_by_key(|&j| self.key(estimate, j));
        for &job in &order {
            let u = units[job as usize];
            if u > free {
                if self.skip {
                    continue;
                }
                break;
            }
            free -= u;
            out.push(job);
            if free <= 0 {
                break;
            }
        }
        self.order = order;
    }
}

impl Sorted {
    /// A pass with the waiting jobs in `tree` (leaves in the sorted order).
    fn dispatch_tree(&self, view: &View<'_>, tree: &mut WaitingTree, out: &mut Vec<u32>) {
        tree.sync(view);
        let before = out.len();
        let mut free = view.free_cores;
        let mut from = 0;
        while free > 0 {
            // strict: the next job in order (it stops the pass if it does not fit);
            // skip: the next job in order that fits
            let limit = if self.skip { free } else { i64::MAX - 1 };
            let Some(leaf) = tree.next(from, limit, i64::MAX, 0) else {
                break;
            };
            let job = tree.row(leaf);
            let u = view.units[job as usize];
            if u > free {
                break;
            }
            free -= u;
            out.push(job);
            from = leaf as usize + 1;
        }
        tree.remove(&out[before..]);
    }
}
