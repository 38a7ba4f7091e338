//! The list dispatchers ordered by estimate, `sjf` and `ljf`
//! (`dispatchlab.dispatch.priority`); `fifo` is [`crate::dispatch::Fifo`]. On
//! node-level platforms all three are [`NodeList`].

use crate::alloc::{Allocator, NodeMatrix, Nodes};
use crate::dispatch::{Dispatcher, NodeView, Placement, View};
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

/// `fifo`, `sjf` and `ljf` on node-level platforms (`ListDispatcher.dispatch` of
/// `dispatchlab.dispatch.priority`, its node-level branch): the waiting jobs in queue
/// order (`fifo`) or sorted by estimate at submission, ascending (`sjf`) or descending
/// (`ljf`), ties by queue order; each job in turn is allocated by the allocator on a
/// working copy of the free matrix (its allocation taken from the copy). Strict: the
/// first job the allocator cannot place ends the pass; `skip`: it is passed over.
///
/// A job whose units ask more of some resource than the whole working copy has free
/// is not handed to the allocator (no allocator could place it: the answer is the
/// same, found without a scan of the nodes).
pub struct NodeList {
    name: &'static str,
    /// None: queue order; Some(descending): by estimate
    by_estimate: Option<bool>,
    skip: bool,
    allocator: Box<dyn Allocator>,
    order: Vec<u32>,
    work: NodeMatrix,
    /// the working copy's free amount of each resource over all nodes
    total: Vec<i64>,
}

impl NodeList {
    /// `fifo` with `allocator` (strict).
    pub fn fifo(allocator: Box<dyn Allocator>) -> NodeList {
        NodeList::new("fifo", None, false, allocator)
    }

    /// `ljf` (`descending`) or `sjf`, strict or `skip`, with `allocator`.
    pub fn sorted(descending: bool, skip: bool, allocator: Box<dyn Allocator>) -> NodeList {
        let name = if descending { "ljf" } else { "sjf" };
        NodeList::new(name, Some(descending), skip, allocator)
    }

    fn new(
        name: &'static str,
        by_estimate: Option<bool>,
        skip: bool,
        allocator: Box<dyn Allocator>,
    ) -> NodeList {
        NodeList {
            name,
            by_estimate,
            skip,
            allocator,
            order: Vec::new(),
            work: NodeMatrix::default(),
            total: Vec::new(),
        }
    }

    /// The waiting jobs in this dispatcher's order (in `self.order`).
    fn sort_queue(&mut self, view: &View<'_>) {
        self.order.clear();
        self.order.extend_from_slice(view.queue);
        let est = view.estimate;
        match self.by_estimate {
            None => {}
            Some(false) => self.order.sort_unstable_by_key(|&j| (est[j as usize], j)),
            Some(true) => self
                .order
                .sort_unstable_by_key(|&j| (std::cmp::Reverse(est[j as usize]), j)),
        }
    }
}

impl Dispatcher for NodeList {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start_nodes(&mut self, nodes: &Nodes) {
        self.allocator.start(nodes);
    }

    /// The counting walk (the allocator places nothing on pooled cores): in order,
    /// each job that fits the free cores left starts; strict stops at the first that
    /// does not.
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        self.sort_queue(view);
        let mut free = view.free_cores;
        for &job in &self.order {
            let u = view.units[job as usize];
            if u > free {
                if self.skip {
                    continue;
                }
                break;
            }
            free -= u;
            out.push(job);
        }
    }

    fn dispatch_nodes(&mut self, view: &View<'_>, nodes: &NodeView<'_>, out: &mut Vec<Placement>) {
        self.sort_queue(view);
        self.work.clone_from(nodes.free);
        let cols = self.work.cols();
        self.total.clear();
        self.total
            .extend((0..cols).map(|r| self.work.column_sum(r)));
        for &job in &self.order {
            let j = job as usize;
            let request = nodes.requests.row(j);
            let units = view.units[j];
            let hopeless = request
                .iter()
                .zip(&self.total)
                .any(|(&q, &t)| q > 0 && units.checked_mul(q).is_none_or(|need| need > t));
            let alloc = if hopeless {
                None
            } else {
                self.allocator.allocate(request, units, self.work.view())
            };
            let Some(alloc) = alloc else {
                if self.skip {
                    continue;
                }
                break;
            };
            self.work.take(&alloc, request);
            for (t, &q) in self.total.iter_mut().zip(request) {
                *t -= units * q;
            }
            out.push(Placement {
                job,
                allocation: alloc,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::{make_allocator, Allocation};
    use crate::state::RunningSet;

    /// One pass of `d` on two one-core-column nodes with 2 and 1 free cores and the
    /// waiting jobs 0 (3 units, estimate 5), 1 (1 unit, 10), 2 (2 units, 1).
    fn pass(mut d: NodeList) -> Vec<(u32, Vec<u32>, Vec<i64>)> {
        let cap = NodeMatrix::new("capacity", 2, 1, vec![4, 4]).unwrap();
        let nodes = Nodes::plain(cap);
        d.start_nodes(&nodes);
        let free = NodeMatrix::new("free", 2, 1, vec![2, 1]).unwrap();
        let requests = NodeMatrix::new("requests", 3, 1, vec![1, 1, 1]).unwrap();
        let running = RunningSet::default();
        let view = View {
            now: 0,
            free_cores: 3,
            queue: &[0, 1, 2],
            units: &[3, 1, 2],
            estimate: &[5, 10, 1],
            running: &running,
            changes: 0,
        };
        let allocations = vec![Allocation::default(); 3];
        let nv = NodeView {
            free: &free,
            nodes: &nodes,
            requests: &requests,
            allocations: &allocations,
        };
        let mut out = Vec::new();
        d.dispatch_nodes(&view, &nv, &mut out);
        out.into_iter()
            .map(|p| (p.job, p.allocation.nodes, p.allocation.counts))
            .collect()
    }

    #[test]
    fn node_lists_walk_in_order_strict_or_skipping() {
        let ff = || make_allocator("first-fit").unwrap();
        // fifo: job 0 (3 units) fits the 3 free cores over both nodes
        assert_eq!(
            pass(NodeList::fifo(ff())),
            vec![(0, vec![0, 1], vec![2, 1])]
        );
        // sjf: 2 (on node 0), then 0 cannot fit: strict stops, skip goes on to 1
        assert_eq!(
            pass(NodeList::sorted(false, false, ff())),
            vec![(2, vec![0], vec![2])]
        );
        assert_eq!(
            pass(NodeList::sorted(false, true, ff())),
            vec![(2, vec![0], vec![2]), (1, vec![1], vec![1])]
        );
        // ljf: 1 (on node 0), then 0 cannot fit: strict stops, skip places 2
        assert_eq!(
            pass(NodeList::sorted(true, false, ff())),
            vec![(1, vec![0], vec![1])]
        );
        assert_eq!(
            pass(NodeList::sorted(true, true, ff())),
            vec![(1, vec![0], vec![1]), (2, vec![0, 1], vec![1, 1])]
        );
    }
}
