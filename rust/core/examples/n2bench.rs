use dispatchlab_core::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).unwrap();
    let v: Vec<i64> = bytes
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let (cores, n) = (v[0], v[1] as usize);
    let col = |k: usize| v[2 + k * n..2 + (k + 1) * n].to_vec();
    let reps: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(1);
    for _ in 0..reps {
        let w = CountingWorkload::new(col(0), col(1), col(2), col(3), cores, Overrun::Run).unwrap();
        let t = std::time::Instant::now();
        let o = simulate_counting(w, &args[2], "walltime").unwrap();
        println!(
            "{} {:.3}s passes={}",
            args[2],
            t.elapsed().as_secs_f64(),
            o.passes
        );
    }
}
