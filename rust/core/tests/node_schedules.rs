//! Hand-computed node-level schedules on the native engine (the Python engine gives
//! the same starts, ends, statuses, allocations and counts).

use dispatchlab_core::{
    simulate_nodes_with, Allocation, NodeMatrix, NodeWorkload, Nodes, Outcome, Overrun, Params,
    COMPLETED, REJECTED,
};

/// Two nodes of 4 cores and 1 GPU; jobs (submit, run, units, requested time, cores and
/// GPUs per unit): J0 (0, 10, 2, 10, 2c), J1 (0, 5, 1, 5, 1c+1g), J2 (1, 7, 3, 7, 2c),
/// J3 (2, 3, 1, 3, 1c+2g: no node has 2 GPUs, rejected), J4 (2, 0, 1, 1, 1c).
fn run(dispatcher: &str, skip: bool) -> Outcome {
    let capacity = NodeMatrix::new("capacity", 2, 2, vec![4, 1, 4, 1]).unwrap();
    let requests = NodeMatrix::new("requests", 5, 2, vec![2, 0, 1, 1, 2, 0, 1, 2, 1, 0]).unwrap();
    let jobs = NodeWorkload::new(
        vec![0, 0, 1, 2, 2],
        vec![10, 5, 7, 3, 0],
        vec![10, 5, 7, 3, 1],
        vec![2, 1, 3, 1, 1],
        requests,
        Nodes::plain(capacity),
        Some(0),
        Overrun::Run,
    )
    .unwrap();
    let params = Params {
        skip: skip.then_some(true),
        ..Params::default()
    };
    simulate_nodes_with(jobs, dispatcher, &params, "walltime").unwrap()
}

fn alloc(nodes: &[u32], counts: &[i64]) -> Allocation {
    Allocation {
        nodes: nodes.to_vec(),
        counts: counts.to_vec(),
    }
}

#[test]
fn fifo_places_on_nodes_and_the_blocked_head_waits_for_both() {
    // J0 on node 0 (2 x 2 cores), J1 on node 1 (its GPU); J2 needs 3 units of 2 cores:
    // one fits node 1 until J0 ends at 10, then 2 on node 0 and 1 on node 1; J4 (0 s)
    // waits behind J2 and takes node 1's last 2 cores at 10; J3 is rejected
    let o = run("fifo", false);
    assert_eq!(o.start, vec![0, 0, 10, -1, 10]);
    assert_eq!(o.end, vec![10, 5, 17, -1, 10]);
    assert_eq!(o.status[3], REJECTED);
    assert!(o
        .status
        .iter()
        .enumerate()
        .all(|(j, &s)| j == 3 || s == COMPLETED));
    assert_eq!(
        o.allocations,
        vec![
            alloc(&[0], &[2]),
            alloc(&[1], &[1]),
            alloc(&[0, 1], &[2, 1]),
            Allocation::default(),
            alloc(&[1], &[1]),
        ]
    );
    // 5 submissions and 4 completions; passes at 0, 1, 2, 5, 10 (twice: J4 ends at
    // 10) and 17
    assert_eq!((o.events, o.passes), (9, 7));
    let (offsets, nodes, counts) = o.flat_allocations();
    assert_eq!(offsets, vec![0, 1, 2, 4, 4, 5]);
    assert_eq!(nodes, vec![0, 1, 0, 1, 1]);
    assert_eq!(counts, vec![2, 1, 2, 1, 1]);
}

#[test]
fn sjf_skip_passes_over_what_does_not_fit() {
    // sjf at 0: J1 (estimate 5) first, on node 0; J0 then spreads over both nodes; at
    // 2: J4 (estimate 1) on node 0's last core, J2 passed over until 10
    let o = run("sjf", true);
    assert_eq!(o.start, vec![0, 0, 10, -1, 2]);
    assert_eq!(o.end, vec![10, 5, 17, -1, 2]);
    assert_eq!(o.allocations[0], alloc(&[0, 1], &[1, 1]));
    assert_eq!(o.allocations[1], alloc(&[0], &[1]));
    assert_eq!(o.allocations[4], alloc(&[0], &[1]));
    assert_eq!(o.allocations[2], alloc(&[0, 1], &[2, 1]));
    assert_eq!((o.events, o.passes), (9, 7));
}

#[test]
fn unknown_node_level_dispatchers_are_input_errors() {
    let capacity = NodeMatrix::new("capacity", 1, 1, vec![4]).unwrap();
    let requests = NodeMatrix::new("requests", 1, 1, vec![1]).unwrap();
    let jobs = NodeWorkload::new(
        vec![0],
        vec![1],
        vec![1],
        vec![1],
        requests,
        Nodes::plain(capacity),
        Some(0),
        Overrun::Run,
    )
    .unwrap();
    let e = simulate_nodes_with(jobs, "lifo", &Params::default(), "walltime").unwrap_err();
    assert!(e
        .to_string()
        .starts_with("dispatcher: no native dispatcher"));
}
