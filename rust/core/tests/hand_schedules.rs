//! Hand-computed schedules (the numbers of tests/dispatch/test_schedules.py and the
//! engine's documented event order), on the native engine.

use dispatchlab_core::{
    make_dispatcher, simulate_counting, tsafrir, CountingWorkload, Engine, Error, Outcome, Overrun,
    Predictor, COMPLETED, KILLED, REJECTED,
};

mod common;
use common::Constant;

#[allow(clippy::too_many_arguments)] // a test helper: the columns side by side
fn run_with(
    submit: &[i64],
    run: &[i64],
    units: &[i64],
    req: &[i64],
    cores: i64,
    dispatcher: &str,
    predictor: &str,
    overrun: Overrun,
) -> Outcome {
    let jobs = CountingWorkload::new(
        submit.to_vec(),
        run.to_vec(),
        req.to_vec(),
        units.to_vec(),
        cores,
        overrun,
    )
    .unwrap();
    simulate_counting(jobs, dispatcher, predictor).unwrap()
}

fn starts(
    submit: &[i64],
    run: &[i64],
    units: &[i64],
    req: &[i64],
    cores: i64,
    d: &str,
) -> Vec<i64> {
    run_with(submit, run, units, req, cores, d, "walltime", Overrun::Run).start
}

#[test]
fn easy_backfills_behind_blocked_head_and_consumes_extra() {
    // C=10. J1 (6, 100 s) at 0; J2 (8) at 1 blocks: shadow 100, extra 2. J3 (4, 90 s)
    // at 2 ends by 92 <= 100: backfilled. J4 (2, 200 s) at 3 waits for a free core,
    // starts at 92 in the extra. J2 starts at 100.
    let s = starts(
        &[0, 1, 2, 3],
        &[100, 50, 90, 200],
        &[6, 8, 4, 2],
        &[100, 50, 90, 200],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 2, 92]);
}

#[test]
fn easy_does_not_backfill_a_job_that_would_delay_the_head() {
    let s = starts(
        &[0, 1, 2],
        &[100, 50, 150],
        &[6, 8, 4],
        &[100, 50, 150],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 150]);
}

#[test]
fn easy_backfills_a_job_ending_exactly_at_the_shadow_time() {
    let s = starts(
        &[0, 1, 2],
        &[100, 50, 98],
        &[6, 8, 4],
        &[100, 50, 98],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 2]);
    let s = starts(
        &[0, 1, 2],
        &[100, 50, 99],
        &[6, 8, 4],
        &[100, 50, 99],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 150]);
}

#[test]
fn easy_extra_capacity_is_consumed_in_queue_order() {
    let s = starts(
        &[0, 1, 2, 3, 4],
        &[100, 50, 500, 500, 500],
        &[6, 7, 2, 2, 1],
        &[100, 50, 500, 500, 500],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 2, 150, 4]);
}

#[test]
fn easy_protects_only_the_head() {
    let s = starts(
        &[0, 1, 2, 3, 5],
        &[100, 50, 150, 40, 400],
        &[6, 8, 9, 2, 2],
        &[100, 50, 150, 40, 400],
        10,
        "easy",
    );
    assert_eq!(s, vec![0, 100, 405, 3, 5]);
}

#[test]
fn fifo_head_blocks_and_easy_backfills_tied_submissions() {
    // C=4, all at 0: J1 (2 cores) starts; J2 (3) blocks J3 (1 core, 5 s) under fifo;
    // EASY backfills J3 at 0 (0 + 5 <= shadow 10).
    let args = (&[0, 0, 0], &[10, 10, 5], &[2, 3, 1], &[10, 10, 5]);
    assert_eq!(
        starts(args.0, args.1, args.2, args.3, 4, "fifo"),
        vec![0, 10, 10]
    );
    assert_eq!(
        starts(args.0, args.1, args.2, args.3, 4, "easy"),
        vec![0, 10, 0]
    );
}

#[test]
fn zero_second_jobs_end_and_free_their_cores_at_the_same_time() {
    // C=2. J0 (2 cores, 0 s) and J1 (2 cores, 10 s) at 5: J0 starts at 5 and ends at 5;
    // its completion makes another time point at 5, whose pass starts J1 at 5.
    // Events: 2 submissions + 2 completions; passes: at 5 twice, at 15 once.
    let o = run_with(
        &[5, 5],
        &[0, 10],
        &[2, 2],
        &[0, 10],
        2,
        "fifo",
        "walltime",
        Overrun::Run,
    );
    assert_eq!(o.start, vec![5, 5]);
    assert_eq!(o.end, vec![5, 15]);
    assert_eq!((o.events, o.passes), (4, 3));
}

#[test]
fn completions_come_before_submissions_at_the_same_time() {
    // C=1. J0 (1 core, 10 s) at 0 ends at 10, when J1 is submitted: J1 starts at 10.
    let o = run_with(
        &[0, 10],
        &[10, 3],
        &[1, 1],
        &[10, 3],
        1,
        "easy",
        "walltime",
        Overrun::Run,
    );
    assert_eq!(o.start, vec![0, 10]);
    assert_eq!((o.events, o.passes), (4, 3)); // passes at 0, 10, 13
}

#[test]
fn a_job_larger_than_the_platform_is_rejected_at_submission() {
    let o = run_with(
        &[0, 1],
        &[10, 10],
        &[3, 2],
        &[10, 10],
        2,
        "easy",
        "walltime",
        Overrun::Run,
    );
    assert_eq!(o.status, vec![REJECTED, COMPLETED]);
    assert_eq!((o.start[0], o.end[0], o.estimate[0]), (-1, -1, -1));
    assert_eq!(o.start[1], 1);
}

#[test]
fn overrun_kill_ends_a_job_at_its_requested_time() {
    let o = run_with(
        &[0],
        &[50],
        &[1],
        &[30],
        1,
        "fifo",
        "walltime",
        Overrun::Kill,
    );
    assert_eq!((o.end[0], o.status[0]), (30, KILLED));
    let o = run_with(
        &[0],
        &[50],
        &[1],
        &[30],
        1,
        "fifo",
        "walltime",
        Overrun::Run,
    );
    assert_eq!((o.end[0], o.status[0]), (50, COMPLETED));
}

#[test]
fn the_real_predictor_plans_with_run_times() {
    // C=10. J0 (6 cores) runs 100 s, requests 300; J1 (8 cores, 50 s) at 1 blocks;
    // J2 (4 cores, 250 s, requests 260) at 2.
    // walltime: J1's shadow is J0's planned end 300, so J2 (2 + 260 <= 300) is
    // backfilled at 2; at 100 only 6 cores are free, J1 starts when J2 ends at 252.
    // real: the shadow is 100 (extra 2); J2 (2 + 250 > 100, 4 > 2) waits; J1 starts
    // at 100 and J2 when J1 ends at 150.
    let (submit, run, units, req) = (&[0, 1, 2], &[100, 50, 250], &[6, 8, 4], &[300, 60, 260]);
    let w = run_with(
        submit,
        run,
        units,
        req,
        10,
        "easy",
        "walltime",
        Overrun::Run,
    );
    assert_eq!(w.start, vec![0, 252, 2]);
    let r = run_with(submit, run, units, req, 10, "easy", "real", Overrun::Run);
    assert_eq!(r.start, vec![0, 100, 150]);
}

/// A learning predictor: each estimate is the run time of the job that completed
/// last (the requested time before any completed); it records its calls.
#[derive(Default)]
struct LastRun {
    run: Vec<i64>,
    requested: Vec<i64>,
    last: Option<i64>,
    started: Vec<(u32, i64)>,
    calls: Vec<(i64, Vec<u32>, Vec<u32>)>,
    fail_at: Option<i64>,
}

impl Predictor for LastRun {
    fn name(&self) -> &'static str {
        "last-run"
    }
    fn observes(&self) -> bool {
        true
    }
    fn started(&mut self, job: u32, now: i64) {
        self.started.push((job, now));
    }
    fn at_time(
        &mut self,
        now: i64,
        completed: &[u32],
        submitted: &[u32],
        out: &mut Vec<i64>,
    ) -> Result<(), Error> {
        if self.fail_at == Some(now) {
            return Err(Error::Dispatch("the predictor failed".to_string()));
        }
        self.calls
            .push((now, completed.to_vec(), submitted.to_vec()));
        if let Some(&j) = completed.last() {
            self.last = Some(self.run[j as usize]);
        }
        out.extend(
            submitted
                .iter()
                .map(|&j| self.last.unwrap_or(self.requested[j as usize])),
        );
        Ok(())
    }
    fn on_expiry(
        &mut self,
        now: i64,
        expired: &[(u32, i64)],
        out: &mut Vec<Option<i64>>,
    ) -> Result<(), Error> {
        let wall = &self.requested;
        out.extend(
            expired
                .iter()
                .map(|&(j, started)| tsafrir(wall[j as usize], started, now)),
        );
        Ok(())
    }
}

/// A run of `LastRun` under fifo on 2 cores: J0 (2 cores, 10 s) at 0, J1 (1 core,
/// 5 s) at 10, when J0 ends, J2 (1 core, 7 s) at 12.
fn last_run(fail_at: Option<i64>) -> (Result<dispatchlab_core::Outcome, Error>, Vec<String>) {
    use std::sync::{Arc, Mutex};
    struct Shared(Arc<Mutex<LastRun>>);
    impl Predictor for Shared {
        fn name(&self) -> &'static str {
            "last-run"
        }
        fn observes(&self) -> bool {
            true
        }
        fn started(&mut self, job: u32, now: i64) {
            self.0.lock().unwrap().started(job, now)
        }
        fn at_time(
            &mut self,
            now: i64,
            c: &[u32],
            s: &[u32],
            out: &mut Vec<i64>,
        ) -> Result<(), Error> {
            self.0.lock().unwrap().at_time(now, c, s, out)
        }
        fn on_expiry(
            &mut self,
            now: i64,
            e: &[(u32, i64)],
            out: &mut Vec<Option<i64>>,
        ) -> Result<(), Error> {
            self.0.lock().unwrap().on_expiry(now, e, out)
        }
    }
    let (run, requested) = (vec![10, 5, 7], vec![100, 100, 100]);
    let shared = Arc::new(Mutex::new(LastRun {
        run: run.clone(),
        requested: requested.clone(),
        fail_at,
        ..LastRun::default()
    }));
    let jobs = CountingWorkload::new(
        vec![0, 10, 12],
        run,
        requested,
        vec![2, 1, 1],
        2,
        Overrun::Run,
    )
    .unwrap();
    let engine = Engine::new(
        jobs,
        make_dispatcher("fifo").unwrap(),
        Box::new(Shared(shared.clone())),
    )
    .unwrap();
    let outcome = engine.run();
    let p = shared.lock().unwrap();
    let log = p
        .calls
        .iter()
        .map(|(t, c, s)| format!("{t}: {c:?} {s:?}"))
        .chain(p.started.iter().map(|(j, t)| format!("start {j} at {t}")))
        .collect();
    (outcome, log)
}

#[test]
fn a_learning_predictor_observes_completions_before_the_submissions_of_their_time() {
    let (outcome, log) = last_run(None);
    let o = outcome.unwrap();
    // J1 submitted at 10 as J0 ends: J0 observed first, so J1's estimate is J0's 10 s
    assert_eq!(o.estimate, vec![100, 10, 10]);
    assert_eq!(o.start, vec![0, 10, 12]);
    assert_eq!(
        log,
        vec![
            "0: [] [0]",
            "10: [0] [1]",
            "12: [] [2]",
            "15: [1] []",
            "19: [2] []",
            "start 0 at 0",
            "start 1 at 10",
            "start 2 at 12",
        ]
    );
}

#[test]
fn a_predictor_error_stops_the_run_with_it() {
    let (outcome, log) = last_run(Some(12));
    match outcome {
        Err(Error::Dispatch(m)) => assert_eq!(m, "the predictor failed"),
        other => panic!("{other:?}"),
    }
    assert_eq!(log.len(), 2 + 2); // the calls at 0 and 10, the starts of J0 and J1
}

#[test]
fn an_expired_estimate_jumps_to_the_wall_time() {
    // C=10, every estimate 10 s. J0 (6 cores, runs 100 s, requests 200) starts at 0,
    // planned end 10. J1 (8 cores, 50 s) at 1 is the head. J2 (4 cores, 5 s) at 20:
    // the pass first expires J0 (planned end 10 <= 20): its wall time 0 + 200 is
    // ahead, so its planned end becomes 200; J1's shadow is 200 and J2 (20 + 10 <= 200)
    // is backfilled at 20. (Were J0 counted as ending now, the shadow would be 20 and
    // J2, 4 > extra 2, would wait for J1's end at 150.)
    let req = vec![200, 50, 5];
    let jobs = CountingWorkload::new(
        vec![0, 1, 20],
        vec![100, 50, 5],
        req.clone(),
        vec![6, 8, 4],
        10,
        Overrun::Run,
    )
    .unwrap();
    let o = Engine::new(
        jobs,
        make_dispatcher("easy").unwrap(),
        Box::new(Constant {
            estimate: 10,
            requested: req,
        }),
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(o.start, vec![0, 100, 20]);
}

#[test]
fn the_expiry_rule_leaves_zero_second_estimates_ending_now() {
    // C=3, predictor real. J0 (1 core, 0 s) ends at 0; J1 (2 cores, 20 s) starts at 0;
    // J2 (3 cores, 0 s) waits and starts at J1's end, 20, ending at once.
    let o = run_with(
        &[0, 0, 0],
        &[0, 20, 0],
        &[1, 2, 3],
        &[5, 30, 50],
        3,
        "easy",
        "real",
        Overrun::Run,
    );
    assert_eq!(o.start, vec![0, 0, 20]);
    assert_eq!(o.end, vec![0, 20, 20]);
}

#[test]
fn bad_input_names_the_field_and_row() {
    let e = CountingWorkload::new(
        vec![5, 3],
        vec![1, 1],
        vec![1, 1],
        vec![1, 1],
        2,
        Overrun::Run,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "submit: job row 1 is submitted before the row above it: sort the jobs by submit time"
    );
    let e = CountingWorkload::new(vec![0], vec![1], vec![1], vec![0], 2, Overrun::Run).unwrap_err();
    assert_eq!(e.to_string(), "units: job row 0 requests 0 units");
    let jobs = CountingWorkload::new(vec![0], vec![1], vec![1], vec![1], 2, Overrun::Run).unwrap();
    assert!(simulate_counting(jobs, "lifo", "walltime").is_err());
}
