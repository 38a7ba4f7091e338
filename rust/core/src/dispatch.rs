//! Native dispatchers on counting platforms: `fifo` (`dispatchlab.dispatch.priority`)
//! and `easy` with backfill order fifo and one reservation
//! (`dispatchlab.dispatch.backfill`).

use crate::planned;
use crate::state::{Running, RunningSet};
use crate::Error;

/// What a dispatcher sees at a pass (read-only).
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// the current time (s)
    pub now: i64,
    /// cores free now
    pub free_cores: i64,
    /// the waiting job rows, in queue order
    pub queue: &'a [u32],
    /// cores per job row
    pub units: &'a [i64],
    /// each job row's estimate at submission (s)
    pub estimate: &'a [i64],
    /// the running jobs, in planned-end order (raw planned ends: see
    /// [`View::releases`])
    pub running: &'a RunningSet,
}

impl View<'_> {
    /// The running jobs' `(planned end, cores)` in planned-end order, a planned end
    /// already past counting as now (the Python view's `running.est_end`).
    pub fn releases(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let now = self.now;
        self.running
            .entries()
            .iter()
            .map(move |e| (e.est_end.max(now), e.units))
    }
}

/// A dispatcher: at each pass, the job rows to start now, in order.
pub trait Dispatcher: Send {
    /// The dispatcher's registered name.
    fn name(&self) -> &'static str;

    /// Append to `out` the rows of the waiting jobs to start now (they must fit the
    /// free cores together). Called only when the queue is not empty.
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>);
}

/// Strict first-come-first-served: jobs start in queue order while they fit; the
/// first that does not fit blocks the queue.
#[derive(Debug, Default, Clone)]
pub struct Fifo;

impl Dispatcher for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let mut free = view.free_cores;
        for &job in view.queue {
            let u = view.units[job as usize];
            if u > free {
                return;
            }
            free -= u;
            out.push(job);
        }
    }
}

/// EASY backfilling (Mu'alem & Feitelson 2001), backfill order fifo, one reservation.
///
/// 1. start jobs in queue order while they fit;
/// 2. the first job that does not fit (the head) gets a reservation at its shadow
///    time: the earliest time it fits, releasing running jobs in planned-end order (a
///    planned end already past counts as now) and the jobs started in step 1 at
///    `now + max(estimate, 1)`. The extra cores are those free at the shadow time,
///    counting every job whose planned end is at or before it, minus the head's;
/// 3. the rest of the queue is scanned in queue order: a job that fits now starts if
///    `now + max(estimate, 1) <= shadow`, or else if it also fits in the extra
///    cores, which it then consumes.
#[derive(Debug, Default, Clone)]
pub struct Easy {
    started: Vec<(i64, i64)>,
}

impl Easy {
    /// The head's shadow time and extra cores: `need` (> `free`) cores, releasing the
    /// running jobs (in planned-end order, a past end counting as `now`) and the
    /// `(planned end, cores)` of the jobs `started` in this pass (any order) in time
    /// order, all releases at one time together. Only the releases up to the shadow
    /// time are read (the running set is already sorted).
    fn shadow_and_extra(
        free: i64,
        need: i64,
        now: i64,
        running: &[Running],
        started: &mut [(i64, i64)],
    ) -> (i64, i64) {
        started.sort_unstable();
        let (mut a, mut b) = (0, 0);
        let mut avail = free;
        loop {
            let ta = running.get(a).map(|e| e.est_end.max(now));
            let tb = started.get(b).map(|s| s.0);
            let t = match (ta, tb) {
                (Some(x), Some(y)) => x.min(y),
                (Some(x), None) | (None, Some(x)) => x,
                // unreachable for a head that fits the empty platform: the engine
                // rejects the others at submission
                (None, None) => return (i64::MAX, 0),
            };
            while a < running.len() && running[a].est_end.max(now) == t {
                avail += running[a].units;
                a += 1;
            }
            while b < started.len() && started[b].0 == t {
                avail += started[b].1;
                b += 1;
            }
            if avail >= need {
                return (t, avail - need);
            }
        }
    }
}

impl Dispatcher for Easy {
    fn name(&self) -> &'static str {
        "easy"
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let now = view.now;
        let queue = view.queue;
        let mut free = view.free_cores;
        let mut i = 0;
        while i < queue.len() && view.units[queue[i] as usize] <= free {
            free -= view.units[queue[i] as usize];
            out.push(queue[i]);
            i += 1;
        }
        if i == queue.len() {
            return;
        }
        let need = view.units[queue[i] as usize];
        self.started.clear();
        self.started.extend(queue[..i].iter().map(|&j| {
            let j = j as usize;
            (now + planned(view.estimate[j]), view.units[j])
        }));
        let (shadow, mut extra) =
            Self::shadow_and_extra(free, need, now, view.running.entries(), &mut self.started);
        for &job in &queue[i + 1..] {
            if free <= 0 {
                break;
            }
            let u = view.units[job as usize];
            if u > free {
                continue;
            }
            if now + planned(view.estimate[job as usize]) <= shadow {
                free -= u;
            } else if u <= extra {
                free -= u;
                extra -= u;
            } else {
                continue;
            }
            out.push(job);
        }
    }
}

/// The native dispatchers by registered name: `fifo` or `easy`.
pub fn make_dispatcher(name: &str) -> Result<Box<dyn Dispatcher>, Error> {
    match name {
        "fifo" => Ok(Box::new(Fifo)),
        "easy" => Ok(Box::new(Easy::default())),
        _ => Err(Error::Input {
            field: "dispatcher",
            row: None,
            message: format!("no native dispatcher {name:?} (the native ones: fifo, easy)"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_counts_every_release_at_the_shadow_time() {
        let mut running = RunningSet::default();
        running.insert(0, 2, 1); // planned end past: released at now = 5
        running.insert(1, 7, 2);
        running.insert(2, 9, 3);
        // 1 free, head needs 4: releases at 5 (1 core), 7 (2 running + 1 started),
        // 9 (3 cores)
        let mut started = vec![(7, 1)];
        let got = Easy::shadow_and_extra(1, 4, 5, running.entries(), &mut started);
        assert_eq!(got, (7, 1));
        let got = Easy::shadow_and_extra(1, 4, 5, running.entries(), &mut []);
        assert_eq!(got, (7, 0));
        let got = Easy::shadow_and_extra(1, 6, 5, running.entries(), &mut [(8, 1)]);
        assert_eq!(got, (9, 2));
    }

    #[test]
    fn unknown_names_are_input_errors() {
        assert!(matches!(
            make_dispatcher("sjf"),
            Err(Error::Input {
                field: "dispatcher",
                ..
            })
        ));
    }
}
