//! Node-level EASY and conservative through the engine: the plans kept between passes
//! (EASY's after a pass that started nothing, conservative's after a pass that started
//! nothing) change no decision. Random busy clusters (two node types, jobs of many
//! one-core units, some with a GPU or memory, long requested times, submissions while
//! jobs run) are simulated with the plans kept and with every pass planned from
//! scratch, under every native allocator: the same starts, ends, allocations, event
//! and pass counts. The decisions of a pass themselves are pinned to the plain rule by
//! the unit tests of `backfill_nodes.rs` and, through both engines, by
//! `tests/sim/test_native_backfill_nodes.py`.

use dispatchlab_core::backfill::make_backfill;
use dispatchlab_core::backfill_nodes::NodeBackfill;
use dispatchlab_core::{
    make_allocator, make_predictor, Engine, NodeMatrix, NodeWorkload, Nodes, Outcome, Overrun,
    Params,
};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n) as i64
    }
}

/// Nodes of (core, gpu, mem): `big` of [8, 2, 64] with weight 5 and rank 1, `small`
/// of [4, 0, 16]; `n` jobs of one-core units.
fn busy_cluster(rng: &mut Rng, n: usize) -> NodeWorkload {
    let (big, small) = (2 + rng.below(5) as usize, 3 + rng.below(8) as usize);
    let mut cap = Vec::new();
    for k in 0..big + small {
        cap.extend_from_slice(if k < big { &[8, 2, 64] } else { &[4, 0, 16] });
    }
    let weights = (0..big + small).map(|k| if k < big { 5 } else { 1 });
    let ranks = (0..big + small).map(|k| i64::from(k < big)).collect();
    let nodes = Nodes::new(
        NodeMatrix::new("capacity", big + small, 3, cap).unwrap(),
        Some(weights.collect()),
        ranks,
    )
    .unwrap();
    let (mut submit, mut run, mut requested, mut units, mut req) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut t = 0;
    for _ in 0..n {
        t += rng.below(400);
        submit.push(t);
        let r = rng.below(3000);
        run.push(r);
        requested.push(r + [0, 100, 1000, 5000][rng.below(4) as usize]);
        units.push([1, 2, 3, 4, 6, 8, 12, 16, 24, 32][rng.below(10) as usize]);
        req.extend_from_slice(&[
            1,
            i64::from(rng.below(4) == 0),
            [0, 1, 2, 4][rng.below(4) as usize],
        ]);
    }
    let requests = NodeMatrix::new("requests", n, 3, req).unwrap();
    NodeWorkload::new(
        submit,
        run,
        requested,
        units,
        requests,
        nodes,
        Some(0),
        Overrun::Run,
    )
    .unwrap()
}

fn simulate(jobs: NodeWorkload, name: &str, params: &Params, alloc: &str, keep: bool) -> Outcome {
    let dispatcher = NodeBackfill::new(
        make_backfill(name, params).unwrap(),
        make_allocator(alloc).unwrap(),
    )
    .keeping_plans(keep);
    let j = &jobs.jobs;
    let predictor = make_predictor("walltime", &j.run, &j.requested, j.overrun).unwrap();
    Engine::with_nodes(jobs, Box::new(dispatcher), predictor)
        .unwrap()
        .run()
        .unwrap()
}

#[test]
fn kept_plans_change_no_decision() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let k3 = Params {
        reservations: Some(3),
        ..Params::default()
    };
    let specs = [
        ("conservative", Params::default()),
        ("easy", Params::default()),
        ("easy", k3),
    ];
    for _ in 0..12 {
        let n = 40 + rng.below(60) as usize;
        let seed = rng.0;
        for (name, params) in &specs {
            for alloc in ["first-fit", "best-fit", "consolidate", "energy-consolidate"] {
                let kept = simulate(busy_cluster(&mut Rng(seed), n), name, params, alloc, true);
                let fresh = simulate(busy_cluster(&mut Rng(seed), n), name, params, alloc, false);
                assert_eq!(
                    kept, fresh,
                    "{name} {params:?} {alloc} seed {seed:#x} n {n}"
                );
            }
        }
    }
}
