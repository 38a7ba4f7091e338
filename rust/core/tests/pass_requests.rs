//! What a dispatcher that is not one of the native ones may ask of the engine
//! (`Dispatcher::dispatch_in`: rejections, wake-ups, withdrawals, a stop; passes on an
//! empty queue) and what it sees (`PassContext`): the Python engine's rules, which the
//! binding's adapter of a Python dispatcher relies on.

use dispatchlab_core::{
    simulate_counting_by, simulate_nodes_by, Allocation, CountingWorkload, Dispatcher, Engine,
    Error, NodeMatrix, NodeView, NodeWorkload, Nodes, Outcome, Overrun, PassContext, PassRequests,
    Placement, View, COMPLETED, REJECTED,
};

mod common;
use common::Constant;

/// One call's script: rows to start, rows to reject, wake-ups, withdrawals, a stop.
type Step = (Vec<u32>, Vec<u32>, Vec<i64>, Vec<i64>, Option<&'static str>);

/// A scripted dispatcher: at each call, the script's entry for the call number, and a
/// log of what it saw.
#[derive(Default)]
struct Scripted {
    empty_queue: bool,
    calls: usize,
    /// per call: (rows to start, rows to reject, wake-ups, withdrawals, stop)
    script: Vec<Step>,
    /// per call: (now, queue, submitted, completed, reestimated, woken, changes)
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

type Seen = (i64, Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>, bool, u64);

impl Dispatcher for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn dispatch(&mut self, _view: &View<'_>, _out: &mut Vec<u32>) {
        unreachable!("the engine calls dispatch_in")
    }

    fn dispatch_in(
        &mut self,
        view: &View<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<u32>,
        req: &mut PassRequests,
    ) {
        assert!(req.is_empty());
        self.seen.lock().unwrap().push((
            view.now,
            view.queue.to_vec(),
            ctx.submitted.to_vec(),
            ctx.completed.to_vec(),
            ctx.reestimated.to_vec(),
            ctx.woken,
            view.changes,
        ));
        if let Some((start, reject, wake, withdraw, stop)) = self.script.get(self.calls) {
            out.extend(start);
            req.reject.extend(reject);
            req.wake.extend(wake);
            req.withdraw.extend(withdraw);
            req.stop = stop.map(str::to_string);
        }
        self.calls += 1;
    }

    fn call_on_empty_queue(&mut self) -> bool {
        self.empty_queue
    }
}

fn jobs(submit: &[i64], run: &[i64], req: &[i64]) -> CountingWorkload {
    let n = submit.len();
    CountingWorkload::new(
        submit.to_vec(),
        run.to_vec(),
        req.to_vec(),
        vec![1; n],
        1,
        Overrun::Run,
    )
    .unwrap()
}

fn run(d: Scripted, w: CountingWorkload) -> (Result<Outcome, Error>, Vec<Seen>) {
    let seen = d.seen.clone();
    let out = simulate_counting_by(w, Box::new(d), "walltime");
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

#[test]
fn rejects_wakes_and_what_changed() {
    // one core; J0 (10 s) and J1 at 0, J2 at 5. Call 0 (t=0): start J0, wake at 3 and
    // 4, withdraw 4. Call 1 (t=3, woken): reject J1. Call 2 (t=5): J2 submitted.
    // Call 3 (t=10, J0 done): start J2.
    let d = Scripted {
        script: vec![
            (vec![0], vec![], vec![3, 4], vec![4], None),
            (vec![], vec![1], vec![], vec![], None),
            (vec![], vec![], vec![], vec![], None),
            (vec![2], vec![], vec![], vec![], None),
        ],
        ..Scripted::default()
    };
    let (out, seen) = run(d, jobs(&[0, 0, 5], &[10, 1, 1], &[10, 1, 1]));
    let out = out.unwrap();
    assert_eq!(out.start, vec![0, -1, 10]);
    assert_eq!(out.status, vec![COMPLETED, REJECTED, COMPLETED]);
    // a rejected job keeps its estimate at submission
    assert_eq!(out.estimate, vec![10, 1, 1]);
    // events: 3 submissions, 2 completions, 1 wake-up (the withdrawn one is none);
    // passes at 0, 3, 5, 10, 11 (no pass at 4)
    assert_eq!((out.events, out.passes), (6, 5));
    let now: Vec<i64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(now, vec![0, 3, 5, 10]);
    assert_eq!(seen[0].2, vec![0, 1]);
    assert!(seen[1].5 && !seen[2].5);
    assert_eq!(seen[2].1, vec![2]); // J1 left the queue
    assert_eq!(seen[2].2, vec![2]);
    assert_eq!(seen[3].3, vec![0]);
    // changes: the rejection, then the completion
    assert_eq!(
        seen.iter().map(|s| s.6).collect::<Vec<_>>(),
        vec![0, 0, 1, 2]
    );
}

#[test]
fn passes_on_an_empty_queue_when_asked() {
    let (out, seen) = run(
        Scripted {
            empty_queue: true,
            script: vec![(vec![0], vec![], vec![], vec![], None)],
            ..Scripted::default()
        },
        jobs(&[0], &[4], &[4]),
    );
    assert_eq!(out.unwrap().passes, 2);
    assert_eq!(seen.len(), 2); // the pass at 4, after J0 ended, on an empty queue
    assert_eq!(seen[1].3, vec![0]);
    let (_, seen) = run(
        Scripted {
            script: vec![(vec![0], vec![], vec![], vec![], None)],
            ..Scripted::default()
        },
        jobs(&[0], &[4], &[4]),
    );
    assert_eq!(seen.len(), 1);
}

#[test]
fn a_stop_and_broken_requests_end_the_run() {
    let stop = Scripted {
        script: vec![(vec![], vec![], vec![], vec![], Some("it failed"))],
        ..Scripted::default()
    };
    let (out, _) = run(stop, jobs(&[0], &[4], &[4]));
    assert_eq!(out.unwrap_err(), Error::Dispatch("it failed".to_string()));
    let cases: [(Step, &str); 3] = [
        (
            (vec![0], vec![0], vec![], vec![], None),
            "scripted rejected job row 0, which is not waiting",
        ),
        (
            (vec![], vec![], vec![0], vec![], None),
            "scripted asked to wake at 0, not after now (0)",
        ),
        (
            (vec![], vec![], vec![7], vec![7, 7], None),
            "scripted withdrew a wake-up at 7, but none is pending then (now 0)",
        ),
    ];
    for (step, message) in cases {
        let d = Scripted {
            script: vec![step],
            ..Scripted::default()
        };
        let (out, _) = run(d, jobs(&[0], &[4], &[4]));
        assert_eq!(out.unwrap_err(), Error::Dispatch(message.to_string()));
    }
}

#[test]
fn new_estimates_are_reported_once() {
    // two cores; J0 (10 s, requested 20) and J1 (8 s, requested 20) start at 0 with
    // estimates of 2 s; at 2 both expire and get 20 s; J2 (at 2) waits for a core.
    let d = Scripted {
        script: vec![
            (vec![0, 1], vec![], vec![], vec![], None),
            (vec![], vec![], vec![], vec![], None),
            (vec![2], vec![], vec![], vec![], None),
        ],
        ..Scripted::default()
    };
    let seen = d.seen.clone();
    let mut w = jobs(&[0, 0, 2], &[10, 8, 1], &[20, 20, 20]);
    w.total_cores = 2;
    let out = Engine::new(
        w,
        Box::new(d),
        Box::new(Constant {
            estimate: 2,
            requested: vec![20, 20, 20],
        }),
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(out.start, vec![0, 0, 8]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[1].0, 2);
    assert_eq!(seen[1].4, vec![0, 1]); // both re-estimated at 2, in planned-end order
    assert_eq!(seen[1].6, 1); // one expiry pass: one change
    assert_eq!(seen[2].0, 8);
    assert!(seen[2].4.is_empty()); // reported once
    assert_eq!(seen[2].3, vec![1]);
}

/// What a node-level pass saw: (now, completed, woken).
type NodeSeen = (i64, Vec<u32>, bool);

/// Places scripted jobs on node 0 (one unit each) and asks the scripted requests,
/// logging (now, completed, woken) at each node-level pass.
struct NodeScripted {
    calls: usize,
    script: Vec<Step>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<NodeSeen>>>,
}

impl Dispatcher for NodeScripted {
    fn name(&self) -> &'static str {
        "node-scripted"
    }

    fn dispatch(&mut self, _view: &View<'_>, _out: &mut Vec<u32>) {
        unreachable!("a node-level run")
    }

    fn dispatch_nodes_in(
        &mut self,
        view: &View<'_>,
        _nodes: &NodeView<'_>,
        ctx: &PassContext<'_>,
        out: &mut Vec<Placement>,
        req: &mut PassRequests,
    ) {
        self.seen
            .lock()
            .unwrap()
            .push((view.now, ctx.completed.to_vec(), ctx.woken));
        if let Some((start, reject, wake, withdraw, stop)) = self.script.get(self.calls) {
            out.extend(start.iter().map(|&job| Placement {
                job,
                allocation: Allocation {
                    nodes: vec![0],
                    counts: vec![1],
                },
            }));
            req.reject.extend(reject);
            req.wake.extend(wake);
            req.withdraw.extend(withdraw);
            req.stop = stop.map(str::to_string);
        }
        self.calls += 1;
    }
}

#[test]
fn node_level_passes_take_the_same_requests() {
    // one node of 1 core and 2 GPUs; J0 (10 s) and J1 at 0: start J0, wake at 3, reject
    // J1 at 3; J2 at 5 waits until J0 ends at 10
    let capacity = NodeMatrix::new("capacity", 1, 2, vec![1, 2]).unwrap();
    let requests = NodeMatrix::new("requests", 3, 2, vec![1, 0, 1, 1, 1, 0]).unwrap();
    let jobs = NodeWorkload::new(
        vec![0, 0, 5],
        vec![10, 1, 1],
        vec![10, 1, 1],
        vec![1, 1, 1],
        requests,
        Nodes::plain(capacity),
        Some(0),
        Overrun::Run,
    )
    .unwrap();
    let d = NodeScripted {
        calls: 0,
        script: vec![
            (vec![0], vec![], vec![3], vec![], None),
            (vec![], vec![1], vec![], vec![], None),
            (vec![], vec![], vec![], vec![], None),
            (vec![2], vec![], vec![], vec![], None),
        ],
        seen: Default::default(),
    };
    let seen = d.seen.clone();
    let out = simulate_nodes_by(jobs, Box::new(d), "walltime").unwrap();
    assert_eq!(out.start, vec![0, -1, 10]);
    assert_eq!(out.status, vec![COMPLETED, REJECTED, COMPLETED]);
    assert_eq!((out.events, out.passes), (6, 5));
    let seen = seen.lock().unwrap();
    let now: Vec<i64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(now, vec![0, 3, 5, 10]);
    assert!(seen[1].2 && !seen[2].2);
    assert_eq!(seen[3].1, vec![0]);
}
