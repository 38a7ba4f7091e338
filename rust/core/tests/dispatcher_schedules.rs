//! Hand-computed schedules of sjf, ljf, easy's parameters and conservative: the
//! workloads and expected starts of tests/dispatch/test_schedules.py (its comments
//! reason every start), on the native engine.

use dispatchlab_core::{
    make_dispatcher_with, simulate_counting_with, CountingWorkload, Dispatcher, Engine, Order,
    OrderParam, Outcome, Overrun, Params, View, Walltime,
};

/// Columns side by side: submit, run, units, requested time.
type Jobs<'a> = (&'a [i64], &'a [i64], &'a [i64], &'a [i64]);

fn run(jobs: Jobs<'_>, cores: i64, dispatcher: &str, params: &Params) -> Outcome {
    let (submit, run, units, req) = jobs;
    let w = CountingWorkload::new(
        submit.to_vec(),
        run.to_vec(),
        req.to_vec(),
        units.to_vec(),
        cores,
        Overrun::Run,
    )
    .unwrap();
    simulate_counting_with(w, dispatcher, params, "walltime").unwrap()
}

fn starts(jobs: Jobs<'_>, cores: i64, dispatcher: &str, params: &Params) -> Vec<i64> {
    run(jobs, cores, dispatcher, params).start
}

fn none() -> Params {
    Params::default()
}

fn skip() -> Params {
    Params {
        skip: Some(true),
        ..Params::default()
    }
}

// C=4. J0 (3 cores, 10 s) at 0 starts. At 1: J1 (2 cores, 20 s), J2 (1 core, 100 s),
// J3 (1 core, 50 s); one core is free.
const SORTED: Jobs<'static> = (
    &[0, 1, 1, 1],
    &[10, 20, 100, 50],
    &[3, 2, 1, 1],
    &[10, 20, 100, 50],
);

#[test]
fn sjf_strict_and_skip() {
    // SJF order at 1: J1 (20), J3 (50), J2 (100). strict: J1 needs 2 > 1 free -> stop;
    // at 10 (4 free) all start. skip: J3 starts at 1; at 10 (3 free) J1 and J2.
    assert_eq!(starts(SORTED, 4, "sjf", &none()), vec![0, 10, 10, 10]);
    assert_eq!(starts(SORTED, 4, "sjf", &skip()), vec![0, 10, 10, 1]);
}

#[test]
fn ljf_strict() {
    // LJF order at 1: J2 (100), J3 (50), J1 (20). J2 starts at 1; J3 does not fit ->
    // stop. At 10 (3 free): J3 then J1.
    assert_eq!(starts(SORTED, 4, "ljf", &none()), vec![0, 10, 1, 10]);
    // skip: J3 does not fit either at 1; same schedule
    assert_eq!(starts(SORTED, 4, "ljf", &skip()), vec![0, 10, 1, 10]);
}

#[test]
fn sjf_ties_go_to_queue_order() {
    // C=1, three 10 s jobs at 0 with equal estimates: queue order under sjf and ljf.
    let jobs: Jobs<'_> = (&[0, 0, 0], &[10, 10, 10], &[1, 1, 1], &[10, 10, 10]);
    assert_eq!(starts(jobs, 1, "sjf", &none()), vec![0, 10, 20]);
    assert_eq!(starts(jobs, 1, "ljf", &skip()), vec![0, 10, 20]);
}

#[test]
fn easy_sjf_backfill_order_keeps_the_oldest_head() {
    // C=10. J1 (6, 100 s) at 0; J2 (8) at 1 is the head (shadow 100, extra 2); J3 (4,
    // 90 s) and J4 (4, 50 s) at 2. Queue order backfills J3 at 2, J4 waits for J2's
    // end at 150; the sjf scan backfills J4 at 2 and J3 starts at 150.
    let jobs: Jobs<'_> = (
        &[0, 1, 2, 2],
        &[100, 50, 90, 50],
        &[6, 8, 4, 4],
        &[100, 50, 90, 50],
    );
    assert_eq!(starts(jobs, 10, "easy", &none()), vec![0, 100, 2, 150]);
    let sjf = Params {
        order: Some(OrderParam::Order(Order::Sjf)),
        ..Params::default()
    };
    assert_eq!(starts(jobs, 10, "easy", &sjf), vec![0, 100, 150, 2]);
}

// C=10. J1 (6, 100 s) at 0; J2 (8, 50 s) at 1; J3 (9, 150 s) at 2; J4 (2, 40 s) at 3;
// J5 (2, 400 s) at 5: the workload where EASY and conservative differ.
const DIFFER: Jobs<'static> = (
    &[0, 1, 2, 3, 5],
    &[100, 50, 150, 40, 400],
    &[6, 8, 9, 2, 2],
    &[100, 50, 150, 40, 400],
);

#[test]
fn conservative_reserves_every_job() {
    // J2 reserved at 100, J3 at 150 ([150,300), 9 cores); J4 starts at 3; J5 (2 cores,
    // 400 s) finds 1 free core on [150,300): starts at 300.
    assert_eq!(
        starts(DIFFER, 10, "conservative", &none()),
        vec![0, 100, 150, 3, 300]
    );
    // EASY protects only the head: J5 is backfilled at 5 and J3 waits until 405
    assert_eq!(starts(DIFFER, 10, "easy", &none()), vec![0, 100, 405, 3, 5]);
}

#[test]
fn easy_with_two_reservations_protects_the_second_job() {
    let two = Params {
        reservations: Some(2),
        ..Params::default()
    };
    assert_eq!(starts(DIFFER, 10, "easy", &two), vec![0, 100, 150, 3, 300]);
}

#[test]
fn easy_with_one_reservation_through_the_profile_is_easy() {
    // K = 1 runs the shadow-time planner; K larger than the queue the profile planner
    // with every job reserved, which is conservative
    let many = Params {
        reservations: Some(100),
        ..Params::default()
    };
    assert_eq!(
        starts(DIFFER, 10, "easy", &many),
        starts(DIFFER, 10, "conservative", &none())
    );
}

#[test]
fn a_queue_priority_picks_the_head() {
    // C=10, J0 (10 cores, 10 s) runs; J1 (6, 100 s), J2 (6, 20 s) wait, J2 ranked
    // first. scope=queue: J2 is the head and starts at 10, J1 at 30. Without the
    // priority (or scope=backfill, where it only orders the scan) J1 goes first.
    let jobs: Jobs<'_> = (&[0, 1, 1], &[10, 100, 20], &[10, 6, 6], &[10, 100, 20]);
    let rank = Order::Rank(vec![0, 2, 1]);
    let queue = Params {
        priority: Some(rank.clone()),
        scope: Some("queue".into()),
        ..Params::default()
    };
    assert_eq!(starts(jobs, 10, "easy", &queue), vec![0, 30, 10]);
    let backfill = Params {
        priority: Some(rank),
        ..Params::default()
    };
    assert_eq!(starts(jobs, 10, "easy", &backfill), vec![0, 10, 110]);
}

#[test]
fn zero_second_job_triggers_another_pass_at_the_same_time() {
    // C=4. At 5, J1 (4 cores, 0 s) starts and ends at 5; another pass at 5 starts J2.
    let jobs: Jobs<'_> = (&[5, 5], &[0, 7], &[4, 4], &[10, 10]);
    for name in ["fifo", "sjf", "ljf", "easy", "conservative"] {
        let o = run(jobs, 4, name, &none());
        assert_eq!(o.start, vec![5, 5], "{name}");
        assert_eq!(o.end, vec![5, 12], "{name}");
        assert_eq!((o.events, o.passes), (4, 3), "{name}");
    }
}

/// A dispatcher run without [`Dispatcher::start`]: `Sorted` then sorts the queue at
/// every pass instead of keeping its tree.
struct WithoutStart(Box<dyn Dispatcher>);

impl Dispatcher for WithoutStart {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        self.0.dispatch(view, out)
    }
}

#[test]
fn sorted_lists_give_the_same_schedule_with_and_without_their_tree() {
    // 1,200 pseudo-random jobs on 64 cores (a linear congruential generator)
    let mut x: u64 = 12345;
    let mut draw = |m: i64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % m as u64) as i64
    };
    let n = 1200;
    let mut submit = Vec::with_capacity(n);
    let mut t = 0;
    for _ in 0..n {
        t += draw(30);
        submit.push(t);
    }
    let run: Vec<i64> = (0..n).map(|_| draw(2000)).collect();
    let req: Vec<i64> = run.iter().map(|&r| r + draw(500)).collect();
    let units: Vec<i64> = (0..n).map(|_| 1 + draw(40)).collect();
    for (name, skip) in [("sjf", false), ("sjf", true), ("ljf", false), ("ljf", true)] {
        let params = Params {
            skip: Some(skip),
            ..Params::default()
        };
        let outcome = |wrap: bool| {
            let w = CountingWorkload::new(
                submit.clone(),
                run.clone(),
                req.clone(),
                units.clone(),
                64,
                Overrun::Run,
            )
            .unwrap();
            let d = make_dispatcher_with(name, &params, None).unwrap();
            let d: Box<dyn Dispatcher> = if wrap { Box::new(WithoutStart(d)) } else { d };
            Engine::new(w, d, Box::new(Walltime::new(&req)))
                .unwrap()
                .run()
                .unwrap()
        };
        let (a, b) = (outcome(false), outcome(true));
        assert_eq!(a, b, "{name} skip={skip}");
        // the workload queues jobs (the order matters)
        assert!(a.start.iter().zip(&submit).any(|(s, t)| s > t));
    }
}

#[test]
fn easy_consumes_the_extra_cores_within_one_pass() {
    // C=10. J0 (6 cores, 100 s) at 0; J1 (8 cores, 50 s) at 1 is the head: shadow 100,
    // extra 10 - 8 = 2. J2, J3, J4 (1 core, 500 s each) at 2, in one pass: J2 and J3
    // take the 2 extra cores, J4 does not fit them and waits; J1 starts at 100 (8
    // free), J4 when J1 ends at 150. In queue order and in sjf order (all equal).
    let jobs: Jobs<'_> = (
        &[0, 1, 2, 2, 2],
        &[100, 50, 500, 500, 500],
        &[6, 8, 1, 1, 1],
        &[100, 50, 500, 500, 500],
    );
    assert_eq!(starts(jobs, 10, "easy", &none()), vec![0, 100, 2, 2, 150]);
    let sjf = Params {
        order: Some(OrderParam::Order(Order::Sjf)),
        ..Params::default()
    };
    assert_eq!(starts(jobs, 10, "easy", &sjf), vec![0, 100, 2, 2, 150]);
}
