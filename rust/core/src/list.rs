//! The list dispatchers ordered by estimate, `sjf` and `ljf`
//! (`dispatchlab.dispatch.priority`); `fifo` is [`crate::dispatch::Fifo`].

use crate::dispatch::{Dispatcher, View};

/// SJF / LJF: the queue sorted by estimate at submission, ascending (`sjf`) or
/// descending (`ljf`), ties by queue order. **Strict** (default): jobs start in that
/// order while they fit and the first that does not fit stops the pass. With `skip`
/// the walk goes on past jobs that do not fit, starting every later job that still
/// fits (until no core is free).
#[derive(Debug, Clone)]
pub struct Sorted {
    name: &'static str,
    descending: bool,
    skip: bool,
    order: Vec<u32>,
}

impl Sorted {
    /// Shortest (estimated) job first.
    pub fn sjf(skip: bool) -> Sorted {
        Sorted {
            name: "sjf",
            descending: false,
            skip,
            order: Vec::new(),
        }
    }

    /// Longest (estimated) job first.
    pub fn ljf(skip: bool) -> Sorted {
        Sorted {
            name: "ljf",
            descending: true,
            skip,
            order: Vec::new(),
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

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
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
