//! Integer step functions: the hot spots of `dispatchlab.metrics.series` (the queue
//! length and the resources in use over time, and their time-weighted distributions)
//! for int64 data, with exactly the results of its numpy reference.
//!
//! int64 arithmetic wraps around as numpy's does (sums modulo 2^64): integer addition
//! is associative and commutative even then, so the order in which the values are
//! added changes no result, and every result here is bit-identical to the reference's
//! (the reference adds in a stable-sorted order; this module need not).

/// Sort `pairs` by their first element (any order among equal ones), every first
/// element being in `[base, base + span]` (wrapping): nothing when they are sorted
/// already, the library's sort when small, else [`radix_sort`] on the offsets from
/// `base`.
fn sort_by_time(pairs: &mut Vec<(i64, i64)>, base: i64, span: u64) {
    if pairs.windows(2).all(|w| w[0].0 <= w[1].0) {
        return;
    }
    if pairs.len() < 256 {
        pairs.sort_unstable_by_key(|p| p.0);
        return;
    }
    radix_sort(pairs, span, |p| (p.0 as u64).wrapping_sub(base as u64));
}

/// Sort `items` by `key(item)` (any order among equal keys), every key being in
/// `[0, span]`: a least-significant-digit radix sort (digits of at most 11 bits, only
/// as many as `span` needs; a pass whose digit all share moves nothing).
fn radix_sort<T: Copy + Default>(items: &mut Vec<T>, span: u64, key: impl Fn(&T) -> u64) {
    let bits = u64::BITS - span.leading_zeros();
    let passes = bits.div_ceil(11).max(1);
    let width = bits.div_ceil(passes);
    let mask = (1_u64 << width) - 1;
    let mut buf = vec![T::default(); items.len()];
    let mut start = vec![0_usize; 1 << width];
    for pass in 0..passes {
        let shift = pass * width;
        let digit = |item: &T| ((key(item) >> shift) & mask) as usize;
        start.fill(0);
        for item in items.iter() {
            start[digit(item)] += 1;
        }
        if start.contains(&items.len()) {
            continue; // one digit shared by all: this pass moves nothing
        }
        let mut sum = 0;
        for slot in start.iter_mut() {
            let count = *slot;
            *slot = sum;
            sum += count;
        }
        for item in items.iter() {
            let d = digit(item);
            buf[start[d]] = *item;
            start[d] += 1;
        }
        std::mem::swap(items, &mut buf);
    }
}

/// The breakpoints and values of `sum of weight[i] over [lo[i], hi[i])` on the horizon
/// `[h0, h1)`, as `dispatchlab.metrics.series.step_function` computes them: every
/// interval clipped to the horizon, empty ones (after clipping) left out; at a time
/// where several intervals open and close, the value after all the changes holds; the
/// value is 0 before the first change (the first breakpoint is always `h0`); only
/// breakpoints before `h1`; a breakpoint whose value equals the previous one's is
/// merged into it. So `times` is strictly increasing, starts at `h0`, and consecutive
/// `values` differ.
///
/// # Panics
/// If the three slices differ in length or `h1 <= h0` (the caller handles an empty
/// horizon: the function then has no breakpoint).
pub fn step_function(
    lo: &[i64],
    hi: &[i64],
    weight: &[i64],
    h0: i64,
    h1: i64,
) -> (Vec<i64>, Vec<i64>) {
    assert!(
        lo.len() == hi.len() && hi.len() == weight.len(),
        "step_function: lo, hi and weight differ in length"
    );
    assert!(h0 < h1, "step_function: empty horizon [{h0}, {h1})");
    if (h1 as u64).wrapping_sub(h0 as u64) < 1 << 32 && lo.len() < 1 << 31 {
        step_function_packed(lo, hi, weight, h0, h1)
    } else {
        step_function_pairs(lo, hi, weight, h0, h1)
    }
}

/// The breakpoints of [`step_function`] as its changes come, in time order: the value
/// after all the changes at a time (`add(t, value)`), merged as the function says.
struct Breakpoints {
    h0: i64,
    times: Vec<i64>,
    values: Vec<i64>,
}

impl Breakpoints {
    /// Room for `changes` breakpoints after `h0`'s: no reallocation while adding.
    fn new(h0: i64, changes: usize) -> Self {
        let mut times = Vec::with_capacity(changes + 1);
        let mut values = Vec::with_capacity(changes + 1);
        times.push(h0);
        values.push(0);
        Breakpoints { h0, times, values }
    }

    fn add(&mut self, t: i64, value: i64) {
        if t == self.h0 {
            self.values[0] = value; // the changes at h0 replace the 0 before them
        } else if self.values.last() != Some(&value) {
            self.times.push(t);
            self.values.push(value);
        }
    }
}

/// [`step_function`] on a horizon shorter than 2^32 s (136 years) of fewer than 2^31
/// intervals: each opening and closing in 8 bytes, its offset from `h0` (32 bits)
/// above its interval's row and whether it closes (32 bits), in one list sorted once
/// and scanned once (half the memory and the traffic of (time, weight) pairs, no merge
/// of two lists whose branches the times make unpredictable).
fn step_function_packed(
    lo: &[i64],
    hi: &[i64],
    weight: &[i64],
    h0: i64,
    h1: i64,
) -> (Vec<i64>, Vec<i64>) {
    let span = (h1 as u64).wrapping_sub(h0 as u64);
    let mut events: Vec<u64> = Vec::with_capacity(2 * lo.len());
    for (i, (&a, &b)) in lo.iter().zip(hi).enumerate() {
        let (a, b) = (a.clamp(h0, h1), b.clamp(h0, h1));
        if a < b {
            let row = (i as u64) << 1;
            events.push(((a.wrapping_sub(h0) as u64) << 32) | row);
            events.push(((b.wrapping_sub(h0) as u64) << 32) | row | 1);
        }
    }
    radix_sort(&mut events, span, |e| e >> 32);
    let mut out = Breakpoints::new(h0, events.len());
    let (mut value, mut k) = (0_i64, 0);
    while k < events.len() {
        let offset = events[k] >> 32;
        if offset >= span {
            break; // the rest is at or after h1 too: outside the domain
        }
        while let Some(&e) = events.get(k).filter(|e| *e >> 32 == offset) {
            let w = weight[(e as u32 >> 1) as usize];
            value = value.wrapping_add(if e & 1 == 1 { w.wrapping_neg() } else { w });
            k += 1;
        }
        out.add(h0.wrapping_add(offset as i64), value);
    }
    (out.times, out.values)
}

/// [`step_function`] on any horizon: the openings and closings as (time, weight) pairs
/// in one list, sorted once ([`sort_by_time`]) and scanned once.
fn step_function_pairs(
    lo: &[i64],
    hi: &[i64],
    weight: &[i64],
    h0: i64,
    h1: i64,
) -> (Vec<i64>, Vec<i64>) {
    let mut events: Vec<(i64, i64)> = Vec::with_capacity(2 * lo.len());
    for ((&a, &b), &w) in lo.iter().zip(hi).zip(weight) {
        let (a, b) = (a.clamp(h0, h1), b.clamp(h0, h1));
        if a < b {
            events.push((a, w));
            events.push((b, w.wrapping_neg()));
        }
    }
    sort_by_time(&mut events, h0, (h1 as u64).wrapping_sub(h0 as u64));
    let mut out = Breakpoints::new(h0, events.len());
    let (mut value, mut k) = (0_i64, 0);
    while k < events.len() {
        let t = events[k].0;
        if t >= h1 {
            break; // the rest is at or after h1 too: outside the domain
        }
        while let Some(&(_, w)) = events.get(k).filter(|e| e.0 == t) {
            value = value.wrapping_add(w);
            k += 1;
        }
        out.add(t, value);
    }
    (out.times, out.values)
}

/// The sorted distinct `keys` and the sum of `weights` per key (wrapping, as numpy):
/// `dispatchlab.metrics.series._group_sum` for int64 keys and weights.
///
/// # Panics
/// If `keys` and `weights` differ in length.
pub fn group_sum(keys: &[i64], weights: &[i64]) -> (Vec<i64>, Vec<i64>) {
    assert_eq!(
        keys.len(),
        weights.len(),
        "group_sum: keys and weights differ in length"
    );
    let mut pairs: Vec<(i64, i64)> = keys.iter().copied().zip(weights.iter().copied()).collect();
    if let (Some(&lo), Some(&hi)) = (keys.iter().min(), keys.iter().max()) {
        sort_by_time(&mut pairs, lo, (hi as u64).wrapping_sub(lo as u64));
    }
    let mut out_keys: Vec<i64> = Vec::new();
    let mut sums: Vec<i64> = Vec::new();
    for (k, w) in pairs {
        match (out_keys.last(), sums.last_mut()) {
            (Some(&last), Some(sum)) if last == k => *sum = sum.wrapping_add(w),
            _ => {
                out_keys.push(k);
                sums.push(w);
            }
        }
    }
    (out_keys, sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_of_three_jobs() {
        // [0, 10), [5, 10), [10, 20): 1 on [0, 5), 2 on [5, 10), 1 on [10, 20)
        let (t, v) = step_function(&[0, 5, 10], &[10, 10, 20], &[1, 1, 1], 0, 20);
        assert_eq!(t, vec![0, 5, 10]);
        assert_eq!(v, vec![1, 2, 1]);
    }

    #[test]
    fn zero_before_the_first_change_and_clipping() {
        let (t, v) = step_function(&[3, -5], &[8, 100], &[2, 4], 1, 10);
        assert_eq!(t, vec![1, 3, 8]);
        assert_eq!(v, vec![4, 6, 4]);
    }

    #[test]
    fn empty_intervals_and_equal_neighbours_change_nothing() {
        let (t, v) = step_function(&[2, 4, 4], &[2, 6, 4], &[7, 1, 9], 0, 10);
        assert_eq!(t, vec![0, 4, 6]);
        assert_eq!(v, vec![0, 1, 0]);
        // an interval closing when another opens: no breakpoint
        let (t, v) = step_function(&[0, 5], &[5, 9], &[3, 3], 0, 9);
        assert_eq!(t, vec![0]);
        assert_eq!(v, vec![3]);
    }

    #[test]
    fn sums_wrap_around() {
        let (_, v) = step_function(&[0, 1], &[5, 5], &[i64::MAX, 1], 0, 5);
        assert_eq!(v, vec![i64::MAX, i64::MIN]);
    }

    #[test]
    fn radix_sort_sorts() {
        // a small linear congruential generator: offsets over 40 bits, many ties
        let mut x: u64 = 12345;
        let mut pairs: Vec<(i64, i64)> = (0..5000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (
                    -7 + ((x >> 24) % (1 << 40)) as i64 / if i % 3 == 0 { 1 << 30 } else { 1 },
                    i,
                )
            })
            .collect();
        let mut want = pairs.clone();
        want.sort_by_key(|p| p.0);
        sort_by_time(&mut pairs, -7, 1 << 40);
        let keys: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let want_keys: Vec<i64> = want.iter().map(|p| p.0).collect();
        assert_eq!(keys, want_keys);
        let mut got = pairs.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want); // the same pairs
                               // extreme bounds: the whole int64 range
        let mut pairs: Vec<(i64, i64)> = (0..1000)
            .map(|i| {
                (
                    if i % 2 == 0 {
                        i64::MIN + i
                    } else {
                        i64::MAX - i
                    },
                    i,
                )
            })
            .collect();
        sort_by_time(&mut pairs, i64::MIN, u64::MAX);
        assert!(pairs.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn packed_and_pair_events_agree() {
        // a small linear congruential generator: intervals over a horizon just under
        // 2^32 s, many ties, weights of any size, some intervals outside the horizon
        let mut x: u64 = 987654321;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 11
        };
        let (h0, h1) = (-1_000_i64, -1_000 + (1_i64 << 32) - 1);
        for n in [0_usize, 1, 7, 300, 5000] {
            let (mut lo, mut hi, mut weight) = (vec![], vec![], vec![]);
            for i in 0..n {
                let a =
                    h0 - 50 + (next() % (1 << 32)) as i64 / if i % 4 == 0 { 1 << 20 } else { 1 };
                lo.push(a);
                hi.push(a + (next() % (1 << 31)) as i64 * (i % 3) as i64);
                weight.push(if i % 5 == 0 {
                    (next() as i64).wrapping_mul(4099) // huge weights: sums wrap, as in release
                } else {
                    (next() % 9) as i64
                });
            }
            let packed = step_function_packed(&lo, &hi, &weight, h0, h1);
            assert_eq!(packed, step_function_pairs(&lo, &hi, &weight, h0, h1));
            assert_eq!(packed, step_function(&lo, &hi, &weight, h0, h1));
        }
    }

    #[test]
    fn group_sums() {
        let (k, s) = group_sum(&[3, 1, 3, 2, 1], &[1, 2, 3, 4, 5]);
        assert_eq!(k, vec![1, 2, 3]);
        assert_eq!(s, vec![7, 4, 4]);
        assert_eq!(group_sum(&[], &[]), (vec![], vec![]));
    }
}
