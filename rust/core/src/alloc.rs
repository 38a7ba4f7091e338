//! Node-level resources and the allocators (`dispatchlab.dispatch.allocators`,
//! `dispatchlab.dispatch.allocation`).
//!
//! A node-level platform is a (nodes x resources) capacity matrix ([`NodeMatrix`],
//! row-major, resources in the platform's resource order, internal `@` resources of
//! the request fitting included: partitions and node eligibility are resources like
//! the others), with per-node facts the allocators read ([`Nodes`]: the Slurm node
//! weights when they differ, the efficiency ranks). A job asks for `units` units of a
//! per-unit request vector; a node can host `min over requested resources r of
//! free[n][r] / request[r]` units ([`units_per_node`]).
//!
//! An [`Allocator`] maps `(request, units, free)` to an [`Allocation`] (units per
//! node) or None (the units do not all fit now), with the exact rules, tie-breaks and
//! float rounding of the Python classes:
//!
//! * `first-fit`: nodes in index order (lower node weight first when weights differ),
//!   as many units per node as fit;
//! * `best-fit`: nodes with the fewest free resources first, compared per requested
//!   resource in platform order (lexicographically), ties by node index (lower weight
//!   first when weights differ);
//! * `consolidate`: nodes with the smallest share of free resources first (the mean
//!   over the node's resources with capacity of `free / capacity`, summed as numpy
//!   sums a row and rounded to 12 decimals as `np.round`), ties by node index (lower
//!   weight first when weights differ);
//! * `energy-consolidate`: as consolidate, the nodes of lower efficiency rank first
//!   (after the weight).

use crate::Error;

/// What a node can host of a request asking for nothing: the Python allocators'
/// `np.iinfo(np.int64).max // 4`.
pub const UNLIMITED: i64 = i64::MAX / 4;

/// A row-major matrix of integers: nodes x resources (capacities, free amounts) or
/// jobs x resources (per-unit requests).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeMatrix {
    rows: usize,
    cols: usize,
    data: Vec<i64>,
}

/// A borrowed `rows` x `cols` matrix (row-major): what an [`Allocator`] reads, so
/// that a caller's own buffer (a backfill window, a profile's matrix) is placed on
/// without a copy into a [`NodeMatrix`].
#[derive(Debug, Clone, Copy)]
pub struct MatrixRef<'a> {
    rows: usize,
    cols: usize,
    data: &'a [i64],
}

impl<'a> MatrixRef<'a> {
    /// `data` as `rows` x `cols` (panics unless it has `rows * cols` values).
    pub fn new(rows: usize, cols: usize, data: &'a [i64]) -> MatrixRef<'a> {
        assert_eq!(rows * cols, data.len(), "a {rows} x {cols} matrix");
        MatrixRef { rows, cols, data }
    }

    /// How many rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &'a [i64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The values, row-major.
    pub fn data(&self) -> &'a [i64] {
        self.data
    }
}

impl NodeMatrix {
    /// The matrix borrowed, for an [`Allocator`].
    pub fn view(&self) -> MatrixRef<'_> {
        MatrixRef::new(self.rows, self.cols, &self.data)
    }

    /// A `rows` x `cols` matrix of `data` (row-major); an input error (on `field`)
    /// unless `data` has `rows * cols` values, all >= 0.
    pub fn new(
        field: &'static str,
        rows: usize,
        cols: usize,
        data: Vec<i64>,
    ) -> Result<NodeMatrix, Error> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::Input {
                field,
                row: None,
                message: format!("has {} values, not {rows} x {cols}", data.len()),
            });
        }
        if let Some(k) = data.iter().position(|&v| v < 0) {
            return Err(Error::Input {
                field,
                row: None,
                message: format!("row {} has a negative amount {}", k / cols.max(1), data[k]),
            });
        }
        Ok(NodeMatrix { rows, cols, data })
    }

    /// How many rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// How many columns (resources).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[i64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Row `i`, mutable.
    pub fn row_mut(&mut self, i: usize) -> &mut [i64] {
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The values, row-major.
    pub fn data(&self) -> &[i64] {
        &self.data
    }

    /// The sum of column `r`.
    pub fn column_sum(&self, r: usize) -> i64 {
        (0..self.rows).map(|i| self.data[i * self.cols + r]).sum()
    }

    /// Subtract what `alloc` uses of a job asking `request` per unit (a free matrix
    /// after a start). Panics if a node would go below zero (check with
    /// [`NodeMatrix::can_take`] first).
    pub fn take(&mut self, alloc: &Allocation, request: &[i64]) {
        for (&n, &c) in alloc.nodes.iter().zip(&alloc.counts) {
            for (f, &q) in self.row_mut(n as usize).iter_mut().zip(request) {
                *f -= c * q;
                assert!(*f >= 0, "node {n} allocated beyond its free resources");
            }
        }
    }

    /// Add back what `alloc` uses (a free matrix after a completion).
    pub fn give(&mut self, alloc: &Allocation, request: &[i64]) {
        for (&n, &c) in alloc.nodes.iter().zip(&alloc.counts) {
            for (f, &q) in self.row_mut(n as usize).iter_mut().zip(request) {
                *f += c * q;
            }
        }
    }

    /// Whether `alloc` fits this free matrix for a job asking `request` per unit:
    /// every node index in range and distinct, every count > 0, every node's free
    /// amounts enough (the Python engine's check of a start).
    pub fn can_take(&self, alloc: &Allocation, request: &[i64]) -> bool {
        if alloc.nodes.len() != alloc.counts.len() {
            return false;
        }
        let mut seen = std::collections::HashSet::with_capacity(alloc.nodes.len());
        alloc.nodes.iter().zip(&alloc.counts).all(|(&n, &c)| {
            (n as usize) < self.rows
                && c > 0
                && seen.insert(n)
                && self
                    .row(n as usize)
                    .iter()
                    .zip(request)
                    .all(|(&f, &q)| c.checked_mul(q).is_some_and(|used| used <= f))
        })
    }
}

/// Where a job runs: `counts[k]` units on node `nodes[k]` (node indices distinct,
/// counts > 0), in the order the allocator took the nodes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    pub nodes: Vec<u32>,
    pub counts: Vec<i64>,
}

impl Allocation {
    /// The units placed.
    pub fn units(&self) -> i64 {
        self.counts.iter().sum()
    }
}

/// The node facts of a node-level platform that the allocators read, given once per
/// run ([`Allocator::start`]): the capacity matrix, the node weights when they differ
/// (`Platform.has_weights()`; None: no preference) and the efficiency ranks (one per
/// node, lower = more efficient; all equal unless the platform says otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nodes {
    pub capacity: NodeMatrix,
    pub weights: Option<Vec<i64>>,
    pub ranks: Vec<i64>,
}

impl Nodes {
    /// Check the facts: one weight (if given) and one rank per node.
    pub fn new(
        capacity: NodeMatrix,
        weights: Option<Vec<i64>>,
        ranks: Vec<i64>,
    ) -> Result<Nodes, Error> {
        let n = capacity.rows();
        for (field, len) in [
            ("weights", weights.as_ref().map_or(n, Vec::len)),
            ("ranks", ranks.len()),
        ] {
            if len != n {
                return Err(Error::Input {
                    field,
                    row: None,
                    message: format!("has {len} values for {n} nodes"),
                });
            }
        }
        Ok(Nodes {
            capacity,
            weights,
            ranks,
        })
    }

    /// Plain nodes: no weights, equal ranks.
    pub fn plain(capacity: NodeMatrix) -> Nodes {
        let n = capacity.rows();
        Nodes {
            capacity,
            weights: None,
            ranks: vec![0; n],
        }
    }
}

/// How many units asking `request` per unit node row `free` can host
/// ([`UNLIMITED`] when the request asks for nothing).
pub fn node_units(request: &[i64], free: &[i64]) -> i64 {
    let mut best = UNLIMITED;
    let mut any = false;
    for (&q, &f) in request.iter().zip(free) {
        if q > 0 {
            let u = f / q;
            if !any || u < best {
                best = u;
            }
            any = true;
        }
    }
    best
}

/// How many units of `request` each node can host given `free`.
pub fn units_per_node(request: &[i64], free: &NodeMatrix) -> Vec<i64> {
    (0..free.rows())
        .map(|n| node_units(request, free.row(n)))
        .collect()
}

/// The units of `request` the whole of `free` can host (saturating).
pub fn total_units(request: &[i64], free: &NodeMatrix) -> i64 {
    (0..free.rows()).fold(0i64, |acc, n| {
        acc.saturating_add(node_units(request, free.row(n)))
    })
}

/// Take `units` from the nodes in `order`, as many per node as `fit` allows (nodes
/// hosting none skipped); None when they do not all fit.
fn take_in_order(
    order: impl Iterator<Item = usize>,
    fit: &[i64],
    units: i64,
) -> Option<Allocation> {
    let mut alloc = Allocation::default();
    let mut left = units;
    for n in order {
        let f = fit[n];
        if f <= 0 {
            continue;
        }
        let c = f.min(left);
        alloc.nodes.push(n as u32);
        alloc.counts.push(c);
        left -= c;
        if left == 0 {
            return Some(alloc);
        }
    }
    None
}

/// [`take_in_order`] over `usable` sorted by `cmp` (a total order), without sorting
/// all of it: only the first nodes in that order are needed (as many as hold `units`,
/// which all of `usable` together can host), so the smallest 8, 32, ... are selected
/// (`select_nth_unstable_by`) and sorted until they hold enough. The answer is the one
/// a full sort gives.
fn take_first(
    usable: &mut [usize],
    fit: &[i64],
    units: i64,
    cmp: impl Fn(&usize, &usize) -> std::cmp::Ordering,
) -> Option<Allocation> {
    let n = usable.len();
    let mut m = n.min(8);
    loop {
        if m < n {
            usable.select_nth_unstable_by(m - 1, &cmp);
        }
        let head = &mut usable[..m];
        head.sort_unstable_by(&cmp);
        let held = head.iter().fold(0i64, |acc, &k| acc.saturating_add(fit[k]));
        if held >= units || m == n {
            return take_in_order(head.iter().copied(), fit, units);
        }
        m = n.min(m * 4);
    }
}

/// A rule placing a job's units on nodes.
pub trait Allocator: Send {
    /// The registered name.
    fn name(&self) -> &'static str;

    /// Called once per run before the first [`Allocator::allocate`] with the node
    /// facts (the Python `start(capacity)` and `use_platform(platform)` together).
    fn start(&mut self, nodes: &Nodes);

    /// Where `units` units asking `request` per unit go given the `free` matrix, or
    /// None when they do not all fit now. Pure: the same inputs give the same answer.
    fn allocate(&mut self, request: &[i64], units: i64, free: MatrixRef<'_>) -> Option<Allocation>;
}

/// `first-fit`: nodes in index order (lower weights first when they differ), as many
/// units per node as fit. Only the nodes up to the last one it takes are looked at
/// (the Python class computes every node's fit first: the same answer).
#[derive(Debug, Clone, Default)]
pub struct FirstFit {
    /// the node order when weights differ (ascending weight, then index)
    order: Option<Vec<usize>>,
}

/// Take `units` from the nodes in `order`, as many per node as `free` hosts; None when
/// they do not all fit.
fn first_fit(
    order: impl Iterator<Item = usize>,
    request: &[i64],
    units: i64,
    free: MatrixRef<'_>,
) -> Option<Allocation> {
    let mut alloc = Allocation::default();
    let mut left = units;
    for n in order {
        let f = node_units(request, free.row(n));
        if f <= 0 {
            continue;
        }
        let c = f.min(left);
        alloc.nodes.push(n as u32);
        alloc.counts.push(c);
        left -= c;
        if left == 0 {
            return Some(alloc);
        }
    }
    None
}

impl Allocator for FirstFit {
    fn name(&self) -> &'static str {
        "first-fit"
    }

    fn start(&mut self, nodes: &Nodes) {
        self.order = nodes.weights.as_ref().map(|w| {
            let mut order: Vec<usize> = (0..w.len()).collect();
            order.sort_by_key(|&n| (w[n], n));
            order
        });
    }

    fn allocate(&mut self, request: &[i64], units: i64, free: MatrixRef<'_>) -> Option<Allocation> {
        match &self.order {
            Some(order) => first_fit(order.iter().copied(), request, units, free),
            None => first_fit(0..free.rows(), request, units, free),
        }
    }
}

/// The usable nodes (hosting at least one unit) and their fit, or None when all of
/// them together cannot host `units`.
fn usable_nodes(
    request: &[i64],
    units: i64,
    free: MatrixRef<'_>,
    fit: &mut Vec<i64>,
    usable: &mut Vec<usize>,
) -> bool {
    fit.clear();
    usable.clear();
    let mut total = 0i64;
    for n in 0..free.rows() {
        let f = node_units(request, free.row(n));
        fit.push(f);
        if f > 0 {
            usable.push(n);
            total = total.saturating_add(f);
        }
    }
    total >= units
}

/// `best-fit`: nodes with the fewest free resources first, compared per requested
/// resource in platform order, ties by node index (lower weights first when they
/// differ).
#[derive(Debug, Clone, Default)]
pub struct BestFit {
    weights: Option<Vec<i64>>,
    fit: Vec<i64>,
    usable: Vec<usize>,
}

impl Allocator for BestFit {
    fn name(&self) -> &'static str {
        "best-fit"
    }

    fn start(&mut self, nodes: &Nodes) {
        self.weights = nodes.weights.clone();
    }

    fn allocate(&mut self, request: &[i64], units: i64, free: MatrixRef<'_>) -> Option<Allocation> {
        let mut fit = std::mem::take(&mut self.fit);
        let mut usable = std::mem::take(&mut self.usable);
        let out = if usable_nodes(request, units, free, &mut fit, &mut usable) {
            let asked: Vec<usize> = (0..request.len()).filter(|&r| request[r] > 0).collect();
            let weights = self.weights.as_deref();
            take_first(&mut usable, &fit, units, |&a, &b| {
                let w = weights.map_or(std::cmp::Ordering::Equal, |w| w[a].cmp(&w[b]));
                w.then_with(|| {
                    let (fa, fb) = (free.row(a), free.row(b));
                    asked
                        .iter()
                        .map(|&r| fa[r].cmp(&fb[r]))
                        .find(|o| o.is_ne())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then(a.cmp(&b))
            })
        } else {
            None
        };
        self.fit = fit;
        self.usable = usable;
        out
    }
}

/// numpy's sum of a float64 row (`ndarray.sum(axis=1)` on a C-contiguous array: its
/// pairwise summation, 8 accumulators for blocks of 8 to 128 values, halves above),
/// so the shares equal the Python allocator's to the last bit.
pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

/// `np.round(x, 12)`: `rint(x * 1e12) / 1e12` (halves to even).
pub fn round12(x: f64) -> f64 {
    (x * 1e12).round_ties_even() / 1e12
}

/// `consolidate` and `energy-consolidate`: nodes with the smallest share of free
/// resources first (the mean over the node's resources with capacity of `free /
/// capacity`, rounded to 12 decimals), ties by node index; lower weights first when
/// they differ, and for `energy-consolidate` the lower efficiency ranks next.
#[derive(Debug, Clone, Default)]
pub struct Consolidate {
    energy: bool,
    weights: Option<Vec<i64>>,
    ranks: Vec<i64>,
    /// `1 / (capacity * resources with capacity on the node)`, 0 where no capacity
    /// (row-major, nodes x resources)
    weight: Vec<f64>,
    cols: usize,
    fit: Vec<i64>,
    usable: Vec<usize>,
    share: Vec<f64>,
    row: Vec<f64>,
}

impl Consolidate {
    /// `consolidate`.
    pub fn plain() -> Consolidate {
        Consolidate::default()
    }

    /// `energy-consolidate`.
    pub fn energy() -> Consolidate {
        Consolidate {
            energy: true,
            ..Consolidate::default()
        }
    }
}

impl Allocator for Consolidate {
    fn name(&self) -> &'static str {
        if self.energy {
            "energy-consolidate"
        } else {
            "consolidate"
        }
    }

    fn start(&mut self, nodes: &Nodes) {
        let cap = &nodes.capacity;
        self.cols = cap.cols();
        self.weight = Vec::with_capacity(cap.data().len());
        for n in 0..cap.rows() {
            let row = cap.row(n);
            let has = row.iter().filter(|&&c| c > 0).count().max(1) as i64;
            self.weight.extend(
                row.iter()
                    .map(|&c| if c > 0 { 1.0 / ((c * has) as f64) } else { 0.0 }),
            );
        }
        self.weights = nodes.weights.clone();
        self.ranks = nodes.ranks.clone();
    }

    fn allocate(&mut self, request: &[i64], units: i64, free: MatrixRef<'_>) -> Option<Allocation> {
        assert_eq!(
            self.weight.len(),
            free.data().len(),
            "{} allocator used before start() with this platform's nodes",
            self.name()
        );
        let mut fit = std::mem::take(&mut self.fit);
        let mut usable = std::mem::take(&mut self.usable);
        let out = if usable_nodes(request, units, free, &mut fit, &mut usable) {
            let cols = self.cols;
            self.share.clear();
            self.share.resize(free.rows(), 0.0);
            for &n in &usable {
                self.row.clear();
                let w = &self.weight[n * cols..(n + 1) * cols];
                self.row
                    .extend(free.row(n).iter().zip(w).map(|(&f, &w)| f as f64 * w));
                self.share[n] = round12(numpy_sum(&self.row));
            }
            let (share, weights) = (&self.share, self.weights.as_deref());
            let ranks = self.energy.then_some(self.ranks.as_slice());
            take_first(&mut usable, &fit, units, |&a, &b| {
                let w = weights.map_or(std::cmp::Ordering::Equal, |w| w[a].cmp(&w[b]));
                w.then_with(|| ranks.map_or(std::cmp::Ordering::Equal, |r| r[a].cmp(&r[b])))
                    .then_with(|| share[a].partial_cmp(&share[b]).expect("shares are finite"))
                    .then(a.cmp(&b))
            })
        } else {
            None
        };
        self.fit = fit;
        self.usable = usable;
        out
    }
}

/// The native allocators by registered name: `first-fit`, `best-fit`, `consolidate`,
/// `energy-consolidate` (unstarted: call [`Allocator::start`] before allocating).
pub fn make_allocator(name: &str) -> Result<Box<dyn Allocator>, Error> {
    match name {
        "first-fit" => Ok(Box::new(FirstFit::default())),
        "best-fit" => Ok(Box::new(BestFit::default())),
        "consolidate" => Ok(Box::new(Consolidate::plain())),
        "energy-consolidate" => Ok(Box::new(Consolidate::energy())),
        _ => Err(Error::Input {
            field: "allocator",
            row: None,
            message: format!(
                "no native allocator {name:?} (the native ones: first-fit, best-fit, \
                 consolidate, energy-consolidate)"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five nodes with (core, gpu, mem): the Python allocators' answers on them were
    /// computed with `dispatchlab.dispatch.allocators` (and checked by hand).
    fn platform(weights: bool) -> (Nodes, NodeMatrix) {
        let cap = NodeMatrix::new(
            "capacity",
            5,
            3,
            vec![4, 1, 64, 8, 0, 32, 4, 2, 64, 2, 0, 16, 8, 1, 128],
        )
        .unwrap();
        let free = NodeMatrix::new(
            "free",
            5,
            3,
            vec![2, 1, 10, 8, 0, 32, 3, 2, 64, 2, 0, 0, 5, 0, 100],
        )
        .unwrap();
        let w = weights.then(|| vec![2, 1, 2, 1, 1]);
        (Nodes::new(cap, w, vec![1, 0, 1, 0, 1]).unwrap(), free)
    }

    const REQUESTS: [([i64; 3], i64); 5] = [
        ([1, 0, 8], 5),
        ([2, 0, 0], 7),
        ([1, 1, 0], 2),
        ([1, 0, 16], 30),
        ([0, 0, 4], 3),
    ];

    type Expected<'a> = [Option<(&'a [u32], &'a [i64])>; 5];

    fn check(name: &str, weights: bool, expected: Expected<'_>) {
        let (nodes, free) = platform(weights);
        let mut a = make_allocator(name).unwrap();
        assert_eq!(a.name(), name);
        a.start(&nodes);
        for ((req, units), want) in REQUESTS.iter().zip(expected) {
            let got = a.allocate(req, *units, free.view());
            let want = want.map(|(n, c)| Allocation {
                nodes: n.to_vec(),
                counts: c.to_vec(),
            });
            assert_eq!(got, want, "{name} (weights {weights}) on {req:?} x {units}");
        }
    }

    #[test]
    fn first_fit_takes_nodes_in_index_order_or_by_weight() {
        check(
            "first-fit",
            false,
            [
                Some((&[0, 1], &[1, 4])),
                Some((&[0, 1, 2, 3], &[1, 4, 1, 1])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[0, 1], &[2, 1])),
            ],
        );
        check(
            "first-fit",
            true,
            [
                Some((&[1, 4], &[4, 1])),
                Some((&[1, 3, 4], &[4, 1, 2])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[1], &[3])),
            ],
        );
    }

    #[test]
    fn best_fit_takes_the_fewest_free_resources_first() {
        check(
            "best-fit",
            false,
            [
                Some((&[0, 2, 4], &[1, 3, 1])),
                Some((&[0, 3, 2, 4, 1], &[1, 1, 1, 2, 2])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[0, 1], &[2, 1])),
            ],
        );
        check(
            "best-fit",
            true,
            [
                Some((&[4], &[5])),
                Some((&[3, 4, 1], &[1, 2, 4])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[1], &[3])),
            ],
        );
    }

    #[test]
    fn consolidate_takes_the_smallest_share_first() {
        // shares: node 0 (2/4 + 1/1 + 10/64) / 3 = 0.552, node 1 1.0, node 2 0.917,
        // node 3 (2/2 + 0/16) / 2 = 0.5, node 4 (5/8 + 0 + 100/128) / 3 = 0.469
        check(
            "consolidate",
            false,
            [
                Some((&[4], &[5])),
                Some((&[4, 3, 0, 2, 1], &[2, 1, 1, 1, 2])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[4], &[3])),
            ],
        );
        check(
            "consolidate",
            true,
            [
                Some((&[4], &[5])),
                Some((&[4, 3, 1], &[2, 1, 4])),
                Some((&[0, 2], &[1, 1])),
                None,
                Some((&[4], &[3])),
            ],
        );
    }

    #[test]
    fn energy_consolidate_takes_efficient_nodes_first() {
        for weights in [false, true] {
            check(
                "energy-consolidate",
                weights,
                [
                    Some((&[1, 4], &[4, 1])),
                    Some((&[3, 1, 4], &[1, 4, 2])),
                    Some((&[0, 2], &[1, 1])),
                    None,
                    Some((&[1], &[3])),
                ],
            );
        }
    }

    #[test]
    fn consolidate_shares_equal_once_rounded_tie_to_the_node_index() {
        // shares 2/9 + 3/9 + 1/9 and 0 + 3/9 + 3/9: the first is larger by one bit;
        // rounded to 12 decimals they tie and node 0 comes first (the Python answer)
        let cap = NodeMatrix::new("capacity", 2, 3, vec![3; 6]).unwrap();
        let free = NodeMatrix::new("free", 2, 3, vec![2, 3, 1, 0, 3, 3]).unwrap();
        let w = 1.0 / 9.0;
        assert!(numpy_sum(&[2.0 * w, 3.0 * w, w]) > numpy_sum(&[0.0, 3.0 * w, 3.0 * w]));
        let mut a = make_allocator("consolidate").unwrap();
        a.start(&Nodes::plain(cap));
        let got = a.allocate(&[0, 1, 0], 1, free.view()).unwrap();
        assert_eq!(got.nodes, vec![0]);
    }

    #[test]
    fn taking_the_first_nodes_equals_a_full_sort() {
        // 50 nodes with pseudo-random fits and keys (many ties): every units count
        // from 1 to all the nodes hold gives the allocation of a full sort
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m) as i64
        };
        let fit: Vec<i64> = (0..50).map(|_| next(4)).collect();
        let key: Vec<i64> = (0..50).map(|_| next(6)).collect();
        let cmp = |a: &usize, b: &usize| key[*a].cmp(&key[*b]).then(a.cmp(b));
        let usable: Vec<usize> = (0..50).filter(|&n| fit[n] > 0).collect();
        let total: i64 = usable.iter().map(|&n| fit[n]).sum();
        let mut sorted = usable.clone();
        sorted.sort_by(cmp);
        for units in 1..=total {
            let mut work = usable.clone();
            let got = take_first(&mut work, &fit, units, cmp);
            assert_eq!(
                got,
                take_in_order(sorted.iter().copied(), &fit, units),
                "{units}"
            );
        }
    }

    #[test]
    fn numpy_sums_pairwise_and_rounds_half_to_even() {
        // numpy: np.array([[0.1] * 3]).sum(axis=1)[0] == 0.30000000000000004
        assert_eq!(numpy_sum(&[0.1, 0.1, 0.1]), 0.30000000000000004);
        // 8 accumulators: ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), then a8
        let a = [1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(numpy_sum(&a), 1.0000000000000008e16);
        let mut seq = 0.0;
        for v in a {
            seq += v;
        }
        assert_eq!(seq, 1e16); // a plain loop loses every 1.0
        assert_eq!(round12(0.5e-12), 0.0);
        assert_eq!(round12(1.5e-12), 2e-12);
        assert_eq!(round12(1.0 / 3.0), 0.333333333333);
    }

    #[test]
    fn matrices_check_and_update() {
        assert!(NodeMatrix::new("capacity", 2, 2, vec![1, 2, 3]).is_err());
        assert!(NodeMatrix::new("capacity", 1, 2, vec![1, -2]).is_err());
        let (nodes, mut free) = platform(false);
        let alloc = Allocation {
            nodes: vec![4, 0],
            counts: vec![2, 1],
        };
        assert!(free.can_take(&alloc, &[1, 0, 8]));
        assert!(!free.can_take(&alloc, &[1, 1, 0]));
        let twice = Allocation {
            nodes: vec![4, 4],
            counts: vec![1, 1],
        };
        assert!(!free.can_take(&twice, &[1, 0, 0]));
        free.take(&alloc, &[1, 0, 8]);
        assert_eq!(free.row(4), &[3, 0, 84]);
        assert_eq!(free.row(0), &[1, 1, 2]);
        free.give(&alloc, &[1, 0, 8]);
        assert_eq!(free.row(4), &[5, 0, 100]);
        assert_eq!(nodes.capacity.column_sum(0), 26);
        assert_eq!(total_units(&[1, 0, 0], &nodes.capacity), 26);
        assert_eq!(total_units(&[0, 0, 0], &nodes.capacity), i64::MAX);
    }
}
