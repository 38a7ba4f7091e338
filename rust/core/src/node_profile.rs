//! The availability profile of a node-level platform (`dispatchlab.dispatch.profile.
//! NodeProfile`): free (nodes x resources) matrices over future time, for
//! reservations.
//!
//! A step function from `now`: the matrix of breakpoint `k` holds on `[times[k],
//! times[k + 1])` and the last one holds forever. Running jobs give their resources
//! back at their effective planned end (an end already past counts as now: such jobs
//! are free again at `now` in the profile though they still hold their resources
//! physically, which the dispatchers check separately). A job planned at `t` with
//! estimate `e` holds its resources on `[t, t + max(e, 1))` ([`crate::planned`]).
//!
//! Matrices are stored row-major (`free[n * resources + r]`), one vector per
//! breakpoint (a new breakpoint moves pointers, not matrices). A request is per unit
//! (one value per resource); a node hosts `min over the requested resources r of
//! free[n, r] / request[r]` units of it ([`node_fit`]).

use std::collections::HashMap;

/// How many units of the per-unit `request` the node row `free` (one value per
/// resource) hosts, clipped to `[0, cap]` (a request of nothing: `cap`).
#[inline]
pub fn node_fit(request: &[i64], free: &[i64], cap: i64) -> i64 {
    if cap == 1 {
        // one unit: whether every requested amount is free (no division, no branch)
        let mut ok = true;
        for (&q, &f) in request.iter().zip(free) {
            ok &= (f >= q) | (q <= 0);
        }
        return i64::from(ok);
    }
    let mut fit = cap;
    for (&q, &f) in request.iter().zip(free) {
        if q > 0 {
            if f < q {
                return 0;
            }
            // a division only where this resource binds below the count so far
            if q.saturating_mul(fit) > f {
                fit = f / q;
            }
        }
    }
    fit.max(0)
}

/// The units of `request` the (nodes x resources) matrix `free` can host in total,
/// each node's count clipped to `[0, units]` (`dispatchlab.dispatch.profile.
/// fit_totals`): a built-in allocator places `units` units in `free` iff this reaches
/// `units`. Stops counting once it does (the result is then at least `units`).
pub fn fit_total(request: &[i64], units: i64, free: &[i64]) -> i64 {
    let r = request.len();
    if r == 0 {
        return 0;
    }
    let mut total = 0;
    for row in free.chunks_exact(r) {
        total += node_fit(request, row, units);
        if total >= units {
            break;
        }
    }
    total
}

/// The breakpoints of `times` covering `[start, start + duration)` (`start >=
/// times[0]`, `duration >= 1`): `i..j`.
fn span(times: &[i64], start: i64, duration: i64) -> (usize, usize) {
    let i = times.partition_point(|&x| x <= start) - 1;
    let j = times.partition_point(|&x| x < start + duration).max(i + 1);
    (i, j)
}

/// The minimum of matrices `free[i..j]` into `out`.
fn min_rows(free: &[Vec<i64>], i: usize, j: usize, out: &mut Vec<i64>) {
    out.clear();
    out.extend_from_slice(&free[i]);
    for row in &free[i + 1..j] {
        for (o, &f) in out.iter_mut().zip(row) {
            if f < *o {
                *o = f;
            }
        }
    }
}

/// Free (nodes x resources) matrices over time from now (node-level platforms).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NodeProfile {
    /// resources per node
    resources: usize,
    times: Vec<i64>,
    free: Vec<Vec<i64>>,
    /// per breakpoint, each resource's free sum over the nodes
    totals: Vec<Vec<i64>>,
    /// per breakpoint, the request classes known not to fit in total there (bit `c`:
    /// class `c`; see [`NodeProfile::class_of`]): the profile only drops until the
    /// next reset, so a class that does not fit a matrix never does
    fail: Vec<u64>,
    /// the request classes `(per-unit request, units)` asked about since the reset
    /// (the first 64), by class
    class_index: HashMap<(Vec<i64>, i64), usize>,
    class_list: Vec<(Vec<i64>, i64)>,
    /// per class, the classes asking no more (each resource and the units)
    easier: Vec<u64>,
    /// scratch: a window's minimum, each breakpoint's fit (see
    /// [`NodeProfile::earliest`]), each node's units over a window
    window: Vec<i64>,
    row_ok: Vec<u8>,
    fits: Vec<i64>,
    /// the running minimum of the matrices from now: `pmin[k]` is the minimum of
    /// matrices `0..=k`, valid for `k < pmin_valid` (see [`NodeProfile::min_until`])
    pmin: Vec<Vec<i64>>,
    pmin_valid: usize,
}

impl NodeProfile {
    /// Reset to the profile at `now` of the physically free matrix `free_now` (nodes x
    /// `resources`, row-major) and the running jobs' releases `(time, node, count,
    /// request)`: `count` units of the per-unit `request` come back to `node` at `time`
    /// (>= now; at or before now: part of the matrix at now). The releases are sorted
    /// here (by time).
    pub fn reset(
        &mut self,
        now: i64,
        resources: usize,
        free_now: &[i64],
        releases: &mut [(i64, u32, i64, &[i64])],
    ) {
        self.resources = resources;
        self.pmin_valid = 0;
        self.times.clear();
        self.free.clear();
        self.times.push(now);
        self.free.push(free_now.to_vec());
        releases.sort_unstable_by_key(|e| e.0);
        for &(t, node, count, request) in releases.iter() {
            if t > *self.times.last().expect("one breakpoint") {
                let last = self.free.last().expect("one breakpoint").clone();
                self.times.push(t);
                self.free.push(last);
            }
            let row = &mut self.free.last_mut().expect("one breakpoint")
                [node as usize * resources..(node as usize + 1) * resources];
            for (f, &q) in row.iter_mut().zip(request) {
                *f += count * q;
            }
        }
        self.sum_columns();
    }

    /// `totals` := each matrix's column sums (and no class known, see `fail`).
    fn sum_columns(&mut self) {
        let r = self.resources;
        self.fail.clear();
        self.fail.resize(self.free.len(), 0);
        self.class_index.clear();
        self.class_list.clear();
        self.easier.clear();
        self.totals.clear();
        for m in &self.free {
            let mut t = vec![0; r];
            for row in m.chunks_exact(r.max(1)) {
                for (a, &f) in t.iter_mut().zip(row) {
                    *a += f;
                }
            }
            self.totals.push(t);
        }
    }

    /// A profile of the given breakpoints (ascending times, one matrix each), for
    /// callers that build it themselves (EASY's profile of two breakpoints).
    pub fn from_rows(resources: usize, times: Vec<i64>, free: Vec<Vec<i64>>) -> NodeProfile {
        assert!(!times.is_empty() && times.len() == free.len());
        let mut p = NodeProfile {
            resources,
            times,
            free,
            ..NodeProfile::default()
        };
        p.sum_columns();
        p
    }

    /// The breakpoints' times (ascending; the first is now).
    pub fn times(&self) -> &[i64] {
        &self.times
    }

    /// The free matrix from breakpoint `k` on.
    pub fn matrix(&self, k: usize) -> &[i64] {
        &self.free[k]
    }

    /// Resources per node.
    pub fn resources(&self) -> usize {
        self.resources
    }

    /// Move the profile's start to `now` (at or before its second breakpoint: no
    /// breakpoint lies between its old start and `now`).
    pub fn advance(&mut self, now: i64) {
        debug_assert!(self.times.get(1).is_none_or(|&t| now < t));
        self.times[0] = now;
    }

    /// The breakpoints covering `[start, start + duration)` (`start >= now`,
    /// `duration >= 1`): `i..j`.
    pub fn span(&self, start: i64, duration: i64) -> (usize, usize) {
        span(&self.times, start, duration)
    }

    /// The minimum free matrix over `[start, start + duration)` into `out`.
    pub fn window_min(&self, start: i64, duration: i64, out: &mut Vec<i64>) {
        let (i, j) = self.span(start, duration);
        self.min_rows(i, j, out);
    }

    /// The breakpoint whose running minimum [`NodeProfile::min_until`] returns for
    /// `stop`: two stops with the same index get the same matrix (until a change).
    pub fn until_index(&self, stop: i64) -> usize {
        self.times.partition_point(|&x| x < stop).max(1) - 1
    }

    /// The minimum free matrix over `[now, stop)` (`stop > now`), from the running
    /// minimum of the matrices, computed as far as needed and kept until a change.
    pub fn min_until(&mut self, stop: i64) -> &[i64] {
        let k = self.until_index(stop);
        while self.pmin_valid <= k {
            let v = self.pmin_valid;
            if self.pmin.len() <= v {
                self.pmin.push(Vec::new());
            }
            let (before, rest) = self.pmin.split_at_mut(v);
            let row = &mut rest[0];
            row.clear();
            row.extend_from_slice(&self.free[v]);
            if let Some(prev) = before.last() {
                for (o, &p) in row.iter_mut().zip(prev) {
                    if p < *o {
                        *o = p;
                    }
                }
            }
            self.pmin_valid += 1;
        }
        &self.pmin[k]
    }

    fn min_rows(&self, i: usize, j: usize, out: &mut Vec<i64>) {
        min_rows(&self.free, i, j, out);
    }

    /// The earliest breakpoint `t` (from the first one at or after `after`, if given)
    /// at which `allocate` places the job in the profile's minimum over `[t, t +
    /// duration)`: `(t, what allocate returned)` (`dispatchlab.dispatch.profile.
    /// NodeProfile.earliest`). `allocate` is called only where `units` units of
    /// `request` fit in total ([`fit_total`]) in the window's minimum: no allocator
    /// places a job elsewhere. So the breakpoints are scanned as
    /// [`crate::profile::CoreProfile`] scans its levels: a matrix where the units do
    /// not fit in total (an upper bound of every window holding it) rules out every
    /// start whose window holds it, and the scan resumes after it; a window whose
    /// matrices each pass is checked node by node (each node's units in the window
    /// are its least over the matrices), stopping at the first matrix that makes the
    /// total fall short. The allocator then gets the window's minimum on the nodes
    /// hosting a unit there and zeros on the others (the built-in allocators look only
    /// at the former).
    ///
    /// `after`: a time known not to be later than the answer. Panics if no breakpoint
    /// places the job (it fits the last matrix when it fits the empty platform).
    pub fn earliest<T>(
        &mut self,
        request: &[i64],
        units: i64,
        duration: i64,
        after: Option<i64>,
        mut allocate: impl FnMut(&[i64]) -> Option<T>,
    ) -> (i64, T) {
        let m = self.times.len();
        let mut k = after.map_or(0, |a| self.times.partition_point(|&x| x < a));
        // per breakpoint: 0 not looked at, 1 the units fit in total, 2 they do not
        let mut ok = std::mem::take(&mut self.row_ok);
        ok.clear();
        ok.resize(m, 0);
        let r = self.resources.max(1);
        let nodes = self.free[0].len() / r;
        let c = self.class_of(request, units);
        let (times, free, totals) = (&self.times, &self.free, &self.totals);
        let fail = &mut self.fail;
        let easier = c.map_or(0, |c| self.easier[c]);
        let bit = c.map_or(0, |c| 1u64 << c);
        let mut fits_row = |i: usize| {
            if ok[i] == 0 {
                // known not to (this class or one asking no more), a resource short
                // over all nodes, then node by node
                let fits = fail[i] & easier == 0
                    && !totals[i]
                        .iter()
                        .zip(request)
                        .any(|(&t, &q)| q > 0 && units.saturating_mul(q) > t)
                    && fit_total(request, units, &free[i]) >= units;
                if !fits {
                    fail[i] |= bit;
                }
                ok[i] = if fits { 1 } else { 2 };
            }
            ok[i] == 1
        };
        let mut fits = std::mem::take(&mut self.fits);
        let mut window = std::mem::take(&mut self.window);
        let found = 'scan: loop {
            while k < m && !fits_row(k) {
                k += 1;
            }
            assert!(k < m, "a job of {units} units never fits the profile");
            let t = times[k];
            let (_, j) = span(times, t, duration);
            if let Some(bad) = (k + 1..j).find(|&i| !fits_row(i)) {
                k = bad + 1; // every start up to it has it in its window
                continue;
            }
            if j > k + 1 {
                // node by node, each node's units over the window (stopping at its
                // first matrix where it hosts none), until the total is reached; then
                // the other nodes' too, for the allocator
                let node_units = |n: usize| {
                    let mut f = units;
                    for row in &free[k..j] {
                        f = node_fit(request, &row[n * r..(n + 1) * r], f);
                        if f == 0 {
                            break;
                        }
                    }
                    f
                };
                fits.clear();
                let mut total = 0;
                for n in 0..nodes {
                    let f = node_units(n);
                    fits.push(f);
                    total += f;
                    if total >= units {
                        fits.extend((n + 1..nodes).map(node_units));
                        break;
                    }
                }
                if total < units {
                    k += 1;
                    continue;
                }
                if request.iter().any(|&q| q > 0) {
                    // the minimum of the nodes that host a unit; the others host none
                    // of the request in the window, so zeros stand for them (the
                    // allocators look only at nodes hosting a unit)
                    window.clear();
                    window.resize(fits.len() * r, 0);
                    for (n, _) in fits.iter().enumerate().filter(|(_, &f)| f > 0) {
                        let out = &mut window[n * r..(n + 1) * r];
                        out.copy_from_slice(&free[k][n * r..(n + 1) * r]);
                        for row in &free[k + 1..j] {
                            for (o, &f) in out.iter_mut().zip(&row[n * r..(n + 1) * r]) {
                                *o = (*o).min(f);
                            }
                        }
                    }
                } else {
                    min_rows(free, k, j, &mut window);
                }
            } else {
                window.clear();
                window.extend_from_slice(&free[k]);
            }
            if let Some(found) = allocate(&window) {
                break 'scan (t, found);
            }
            k += 1;
        };
        self.row_ok = ok;
        self.fits = fits;
        self.window = window;
        found
    }

    /// The class of `(request, units)` (None past the first 64 classes asked about
    /// since the reset): for [`NodeProfile::known_short`] and the `fail` bits.
    fn class_of(&mut self, request: &[i64], units: i64) -> Option<usize> {
        if let Some(&c) = self.class_index.get(&(request.to_vec(), units)) {
            return Some(c);
        }
        let c = self.class_list.len();
        if c >= 64 {
            return None;
        }
        let no_more = |a: &(Vec<i64>, i64), b: (&[i64], i64)| {
            a.1 <= b.1 && a.0.iter().zip(b.0).all(|(x, y)| x <= y)
        };
        let mut easier = 1u64 << c;
        for (k, other) in self.class_list.iter().enumerate() {
            if no_more(other, (request, units)) {
                easier |= 1 << k;
            }
            if no_more(&(request.to_vec(), units), (&other.0, other.1)) {
                self.easier[k] |= 1 << c;
            }
        }
        self.easier.push(easier);
        self.class_list.push((request.to_vec(), units));
        self.class_index.insert((request.to_vec(), units), c);
        Some(c)
    }

    /// Whether class `c` (or a class asking no more) is known not to fit in total in
    /// the matrix of breakpoint `k`.
    pub fn known_short(&self, c: Option<usize>, k: usize) -> bool {
        c.is_some_and(|c| self.fail[k] & self.easier[c] != 0)
    }

    /// The class of `(request, units)` for [`NodeProfile::known_short`].
    pub fn request_class(&mut self, request: &[i64], units: i64) -> Option<usize> {
        self.class_of(request, units)
    }

    /// Make `t` (>= now) a breakpoint (taking the matrix in force there); its index.
    fn cut(&mut self, t: i64) -> usize {
        let i = self.times.partition_point(|&x| x < t);
        if i == self.times.len() || self.times[i] != t {
            self.pmin_valid = self.pmin_valid.min(i);
            let copy = self.free[i - 1].clone();
            let sums = self.totals[i - 1].clone();
            self.times.insert(i, t);
            self.free.insert(i, copy);
            self.totals.insert(i, sums);
            self.fail.insert(i, self.fail[i - 1]);
        }
        i
    }

    /// Take `count` units of the per-unit `request` on each `(node, count)` of `used`
    /// during `[start, start + duration)` (`start >= now`, `duration >= 1`). New
    /// breakpoints at `start` and at the end take the matrix in force there.
    pub fn reserve(
        &mut self,
        start: i64,
        duration: i64,
        request: &[i64],
        used: impl Iterator<Item = (usize, i64)> + Clone,
    ) {
        let r = self.resources;
        let i = self.cut(start);
        let j = self.cut(start + duration);
        self.pmin_valid = self.pmin_valid.min(i);
        let units: i64 = used.clone().map(|(_, c)| c).sum();
        for (row, sums) in self.free[i..j].iter_mut().zip(&mut self.totals[i..j]) {
            for (node, count) in used.clone() {
                for (f, &q) in row[node * r..(node + 1) * r].iter_mut().zip(request) {
                    *f -= count * q;
                }
            }
            for (t, &q) in sums.iter_mut().zip(request) {
                *t -= units * q;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First-fit over the nodes in index order (the rule of
    /// `dispatchlab.dispatch.allocators.FirstFit`): `(node, count)` pairs.
    fn first_fit(request: &[i64], units: i64, free: &[i64]) -> Option<Vec<(usize, i64)>> {
        let mut left = units;
        let mut out = Vec::new();
        for (n, row) in free.chunks_exact(request.len()).enumerate() {
            if left == 0 {
                break;
            }
            let c = node_fit(request, row, left);
            if c > 0 {
                out.push((n, c));
                left -= c;
            }
        }
        (left == 0).then_some(out)
    }

    fn rows(p: &NodeProfile) -> Vec<(i64, Vec<i64>)> {
        (0..p.times().len())
            .map(|k| (p.times()[k], p.matrix(k).to_vec()))
            .collect()
    }

    #[test]
    fn node_fit_and_fit_total_clip_per_node() {
        // 2 resources (cores, GPUs); a unit asks 2 cores and 1 GPU
        assert_eq!(node_fit(&[2, 1], &[5, 4], 9), 2);
        assert_eq!(node_fit(&[2, 1], &[5, 0], 9), 0);
        assert_eq!(node_fit(&[2, 1], &[5, 4], 1), 1);
        assert_eq!(node_fit(&[0, 0], &[0, 0], 3), 3); // a request of nothing
        assert_eq!(node_fit(&[2, 0], &[-1, 0], 3), 0); // floor, then clipped at 0
                                                       // nodes [4, 1], [6, 3], [1, 9]: 1 + 3 + 0 units
        let free = [4, 1, 6, 3, 1, 9];
        assert_eq!(fit_total(&[2, 1], 9, &free), 4);
        assert_eq!(fit_total(&[2, 1], 5, &free), 4);
        // capped at 2 per node, and counting stops once 2 are reached: 1 + 2
        assert_eq!(fit_total(&[2, 1], 2, &free), 3);
        assert_eq!(fit_total(&[2, 1], 1, &free), 1);
    }

    #[test]
    fn releases_join_breakpoints_by_time() {
        // 2 nodes x 2 resources; now = 10; at now node 0 has [1, 0], node 1 [0, 2].
        // Job A (2 units of [1, 1]) ends at 8 (past: released at now) on node 0;
        // job B (1 unit of [2, 0]) at 20 on node 1 and 1 at 20 on node 0; job C (3
        // units of [1, 0]) at 30 on node 1.
        let (a, b, c) = ([1, 1], [2, 0], [1, 0]);
        let mut rel = vec![
            (30, 1, 3, &c[..]),
            (20, 1, 1, &b[..]),
            (8, 0, 2, &a[..]),
            (20, 0, 1, &b[..]),
        ];
        let mut p = NodeProfile::default();
        p.reset(10, 2, &[1, 0, 0, 2], &mut rel);
        assert_eq!(
            rows(&p),
            vec![
                (10, vec![3, 2, 0, 2]),
                (20, vec![5, 2, 2, 2]),
                (30, vec![5, 2, 5, 2]),
            ]
        );
    }

    #[test]
    fn earliest_reserve_and_window_minima() {
        // the profile of releases_join_breakpoints_by_time
        let mut p = NodeProfile::from_rows(
            2,
            vec![10, 20, 30],
            vec![vec![3, 2, 0, 2], vec![5, 2, 2, 2], vec![5, 2, 5, 2]],
        );
        // 2 units of [2, 1]: at 10 node 0 hosts 1, node 1 none; at 20 node 0 hosts 2
        let req = [2, 1];
        let (t, alloc) = p.earliest(&req, 2, 5, None, |f| first_fit(&req, 2, f));
        assert_eq!((t, alloc.clone()), (20, vec![(0, 2)]));
        p.reserve(t, 5, &req, alloc.iter().copied());
        assert_eq!(
            rows(&p),
            vec![
                (10, vec![3, 2, 0, 2]),
                (20, vec![1, 0, 2, 2]),
                (25, vec![5, 2, 2, 2]),
                (30, vec![5, 2, 5, 2]),
            ]
        );
        let mut w = Vec::new();
        p.window_min(10, 11, &mut w); // rows at 10 and 20
        assert_eq!(w, vec![1, 0, 0, 2]);
        p.window_min(10, 10, &mut w); // only the row at 10
        assert_eq!(w, vec![3, 2, 0, 2]);
        p.window_min(22, 100, &mut w);
        assert_eq!(w, vec![1, 0, 2, 2]);
        // windows from now: the running minimum
        assert_eq!(p.min_until(11), &[3, 2, 0, 2]);
        assert_eq!(p.min_until(21), &[1, 0, 0, 2]);
        assert_eq!(p.min_until(99), &[1, 0, 0, 2]);
        // 4 units of [1, 0] for 15 s: at 10 the window holds 10..25 (min 1 + 0 = 1
        // unit on node 0 alone... [1, 0, 0, 2]: 1 + 0); at 20 [1, 0, 2, 2]: 3; at 25
        // [5, 2, 2, 2] then 30 [5, 2, 5, 2]: 5 + 2 -> 25, first-fit takes 4 on node 0
        let req = [1, 0];
        let (t, alloc) = p.earliest(&req, 4, 15, None, |f| first_fit(&req, 4, f));
        assert_eq!((t, alloc), (25, vec![(0, 4)]));
        // with a bound: only breakpoints at or after 26 (30 then)
        let (t, alloc) = p.earliest(&req, 4, 15, Some(26), |f| first_fit(&req, 4, f));
        assert_eq!((t, alloc), (30, vec![(0, 4)]));
        // an allocator that refuses the first fitting window: the next breakpoint
        let mut calls = Vec::new();
        let (t, _) = p.earliest(&req, 1, 1, None, |f| {
            calls.push(f.to_vec());
            (calls.len() > 1).then_some(())
        });
        assert_eq!(t, 20);
        assert_eq!(calls, vec![vec![3, 2, 0, 2], vec![1, 0, 2, 2]]);
        // a reservation from now, ending on an existing breakpoint
        p.advance(12);
        p.reserve(12, 8, &[1, 1], [(1usize, 2i64)].into_iter());
        assert_eq!(p.times(), &[12, 20, 25, 30]);
        assert_eq!(p.matrix(0), &[3, 2, -2, 0]);
        assert_eq!(p.min_until(13), &[3, 2, -2, 0]); // the kept minimum was dropped
        assert_eq!(p.min_until(40), &[1, 0, -2, 0]);
    }

    #[test]
    #[should_panic(expected = "never fits")]
    fn a_job_too_large_for_the_last_matrix_panics() {
        // 2 nodes of 2 cores: 5 one-core units never fit
        let mut p = NodeProfile::from_rows(1, vec![0], vec![vec![2, 2]]);
        p.earliest(&[1], 5, 1, None, |f| first_fit(&[1], 5, f));
    }
}
