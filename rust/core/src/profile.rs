//! The availability profile of a counting platform (`dispatchlab.dispatch.profile.
//! CoreProfile`): free cores over future time, for reservations.
//!
//! A step function from `now`: `free[k]` holds on `[times[k], times[k + 1])` and the
//! last level holds forever. Running jobs release their cores at their effective
//! planned end (an end already past counts as now: such jobs are free again at `now`
//! in the profile though they still hold their cores physically, which the
//! dispatchers check separately). A job planned at `t` with estimate `e` holds its
//! cores on `[t, t + max(e, 1))` ([`crate::planned`]).

/// Free cores over time from now (counting platforms).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CoreProfile {
    times: Vec<i64>,
    free: Vec<i64>,
}

impl CoreProfile {
    /// Reset to the profile at `now` of `free_now` physically free cores and the
    /// running jobs' `(effective end >= now, cores)` releases in ascending end order
    /// (several releases at one time make one breakpoint).
    pub fn reset(&mut self, now: i64, free_now: i64, releases: impl Iterator<Item = (i64, i64)>) {
        self.times.clear();
        self.free.clear();
        self.times.push(now);
        self.free.push(free_now);
        let mut level = free_now;
        for (t, units) in releases {
            level += units;
            let last = self.times.len() - 1;
            if t <= self.times[last] {
                self.free[last] = level;
            } else {
                self.times.push(t);
                self.free.push(level);
            }
        }
    }

    /// The breakpoints' times (ascending; the first is now).
    pub fn times(&self) -> &[i64] {
        &self.times
    }

    /// The free cores from each breakpoint on.
    pub fn levels(&self) -> &[i64] {
        &self.free
    }

    /// The earliest start `t >= now` (a breakpoint) with `units` cores free on
    /// `[t, t + duration)` (`duration >= 1`). Panics if none exists (the last level is
    /// the whole platform, so it exists for a job that fits the empty platform).
    pub fn earliest(&self, units: i64, duration: i64) -> i64 {
        self.earliest_from(units, duration, 0)
    }

    /// [`CoreProfile::earliest`], scanning from breakpoint `k` on.
    fn earliest_from(&self, units: i64, duration: i64, mut k: usize) -> i64 {
        let (times, free) = (&self.times, &self.free);
        let m = times.len();
        loop {
            while k < m && free[k] < units {
                k += 1;
            }
            assert!(k < m, "a job of {units} cores never fits the profile");
            let stop = times[k] + duration;
            let mut j = k + 1;
            while j < m && times[j] < stop {
                if free[j] < units {
                    break;
                }
                j += 1;
            }
            if j < m && times[j] < stop {
                k = j + 1; // every start up to breakpoint j has j in its window
            } else {
                return times[k];
            }
        }
    }

    /// Take `units` cores on `[t, t + duration)` at the earliest `t` where they fit
    /// ([`CoreProfile::earliest`]) and return `t`: one scan for both. `after`: a time
    /// known not to be later than that `t` (the scan begins at the first breakpoint at
    /// or after it); a job placed earlier in this profile at `t'` with no more cores
    /// and no longer duration gives such a bound, as every window before `t'` held
    /// fewer free cores than it needed then and reservations since only took more.
    ///
    /// Adjacent breakpoints left on the same level are merged (the step function is
    /// unchanged, later scans are shorter).
    pub fn place(&mut self, units: i64, duration: i64, after: Option<i64>) -> i64 {
        let k0 = after.map_or(0, |a| self.times.partition_point(|&x| x < a));
        let start = self.earliest_from(units, duration, k0);
        let (times, free) = (&mut self.times, &mut self.free);
        let k = times.partition_point(|&x| x < start);
        let stop = start + duration;
        let j = times[k..].partition_point(|&x| x < stop) + k;
        if j == times.len() || times[j] != stop {
            times.insert(j, stop);
            free.insert(j, free[j - 1]);
        } else if free[j] == free[j - 1] - units {
            // the level after the window equals the window's new last level: merged
            times.remove(j);
            free.remove(j);
        }
        for level in &mut free[k..j] {
            *level -= units;
        }
        if k > 0 && free[k - 1] == free[k] {
            times.remove(k);
            free.remove(k);
        }
        start
    }

    /// Move the profile's start to `now` (at or before its second breakpoint: no
    /// breakpoint lies between its old start and `now`).
    pub fn advance(&mut self, now: i64) {
        debug_assert!(self.times.get(1).is_none_or(|&t| now < t));
        self.times[0] = now;
    }

    /// Make `t` (>= now) a breakpoint (taking the level in force there); its index.
    fn cut(&mut self, t: i64) -> usize {
        let i = self.times.partition_point(|&x| x < t);
        if i == self.times.len() || self.times[i] != t {
            self.times.insert(i, t);
            self.free.insert(i, self.free[i - 1]);
        }
        i
    }

    /// Take `units` cores on `[start, start + duration)` (`start >= now`,
    /// `duration >= 1`).
    pub fn reserve(&mut self, start: i64, duration: i64, units: i64) {
        let i = self.cut(start);
        let j = self.cut(start + duration);
        for level in &mut self.free[i..j] {
            *level -= units;
        }
    }

    /// The minimum free cores on `[start, start + duration)` (`start >= now`,
    /// `duration >= 1`).
    pub fn min_over(&self, start: i64, duration: i64) -> i64 {
        let i = self.times.partition_point(|&x| x <= start) - 1;
        let j = self.times.partition_point(|&x| x < start + duration);
        self.free[i..j].iter().copied().min().unwrap_or(i64::MAX)
    }

    /// The minimum free cores on `[now, stop)` for `stop > now`, from `prefix_min`
    /// (the running minimum of the levels: see [`CoreProfile::prefix_min`]).
    pub fn min_until(&self, prefix_min: &[i64], stop: i64) -> i64 {
        prefix_min[self.times.partition_point(|&x| x < stop) - 1]
    }

    /// Fill `out` with the running minimum of the levels from now.
    pub fn prefix_min(&self, out: &mut Vec<i64>) {
        out.clear();
        let mut m = i64::MAX;
        out.extend(self.free.iter().map(|&f| {
            m = m.min(f);
            m
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(now: i64, free: i64, releases: &[(i64, i64)]) -> CoreProfile {
        let mut p = CoreProfile::default();
        p.reset(now, free, releases.iter().copied());
        p
    }

    #[test]
    fn releases_at_or_before_now_join_the_first_level() {
        let p = profile(5, 1, &[(5, 2), (7, 1), (7, 3), (9, 4)]);
        assert_eq!(p.times(), &[5, 7, 9]);
        assert_eq!(p.levels(), &[3, 7, 11]);
    }

    #[test]
    fn conservative_plan_of_test_schedules() {
        // The DIFFER workload of tests/dispatch/test_schedules.py at time 5, C=10: J1
        // (6 cores) runs to 100, J4 (2 cores) to 43; J2 (8, 50 s), J3 (9, 150 s) and
        // J5 (2, 400 s) wait. J2 goes to 100, J3 to 150, J5 to 300.
        let mut p = profile(5, 2, &[(43, 2), (100, 6)]);
        assert_eq!(p.earliest(8, 50), 100);
        p.reserve(100, 50, 8);
        assert_eq!(p.earliest(9, 150), 150);
        p.reserve(150, 150, 9);
        assert_eq!(p.min_over(5, 400), 1);
        assert_eq!(p.earliest(2, 400), 300);
        let mut pm = Vec::new();
        p.prefix_min(&mut pm);
        assert_eq!(p.min_until(&pm, 43), 2);
        assert_eq!(p.min_until(&pm, 44), 2);
        assert_eq!(p.min_until(&pm, 151), 1);
    }

    #[test]
    fn place_is_earliest_then_reserve_with_merged_breakpoints() {
        // the plan of conservative_plan_of_test_schedules, placed (J3 with the bound of
        // J2's placement: more cores, longer)
        let mut p = profile(5, 2, &[(43, 2), (100, 6)]);
        assert_eq!(p.place(8, 50, None), 100);
        assert_eq!(p.place(9, 150, Some(100)), 150);
        assert_eq!(p.place(2, 400, None), 300);
        assert_eq!(p.times(), &[5, 43, 100, 150, 300, 700]);
        assert_eq!(p.levels(), &[2, 4, 2, 1, 8, 10]);
        // the level after the window equals the window's new level: merged
        let mut q = profile(0, 4, &[]);
        q.reserve(10, 10, 2);
        assert_eq!(q.levels(), &[4, 2, 4]);
        assert_eq!(q.place(2, 10, None), 0);
        assert_eq!((q.times(), q.levels()), (&[0, 20][..], &[2, 4][..]));
        // the level before the window equals its new level: merged
        let mut r = profile(0, 2, &[(10, 2)]);
        assert_eq!(r.place(2, 5, Some(10)), 10);
        assert_eq!((r.times(), r.levels()), (&[0, 15][..], &[2, 4][..]));
        r.advance(3);
        assert_eq!(r.times(), &[3, 15]);
    }
}
