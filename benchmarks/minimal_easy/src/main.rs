//! A minimal textbook EASY backfilling simulator: the compiled baseline that
//! `dispatchlab simulate TRACE --dispatcher easy` is measured against
//! (benchmarks/bench_native.py). std only; see README.md for the rules it follows.
#![forbid(unsafe_code)]

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::process::{exit, Command, Stdio};
use std::time::Instant;

/// One cleaned job: submit time, trace run time, units (processors) and estimate (s).
struct Job {
    submit: i64,
    run: i64,
    units: i64,
    est: i64,
}

/// Feed every line of the trace to `each` (1-based line number, text without the
/// line end). A gzipped file (magic bytes 1f 8b) is decompressed by a `gzip -dc FILE`
/// child process whose output is parsed as it comes (std has no inflate).
fn for_each_line(
    path: &str,
    mut each: impl FnMut(usize, &str) -> Result<(), String>,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{path}: {e}");
    let mut magic = [0u8; 2];
    let mut file = std::fs::File::open(path).map_err(io)?;
    let gz = file.read(&mut magic).map_err(io)? == 2 && magic == [0x1f, 0x8b];
    let mut child = None; // gzip's own messages go to our stderr
    let source: Box<dyn Read> = if gz {
        let gzip = Command::new("gzip").args(["-dc", path]).stdout(Stdio::piped()).spawn();
        let c = child.insert(gzip.map_err(|e| format!("{path}: cannot run gzip: {e}"))?);
        Box::new(c.stdout.take().ok_or("no gzip output")?)
    } else {
        Box::new(std::fs::File::open(path).map_err(io)?)
    };
    let mut reader = BufReader::with_capacity(1 << 20, source);
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            break;
        }
        number += 1;
        let text = std::str::from_utf8(&buf)
            .map_err(|_| format!("{path}: line {number}: not UTF-8 text"))?;
        each(number, text)?;
    }
    match child.map(|mut c| c.wait()).transpose().map_err(io)? {
        Some(status) if !status.success() => Err(format!("{path}: gzip failed ({status})")),
        _ => Ok(()),
    }
}

/// The integer a header value starts with (`"1664 (72, 1368)"` -> 1664).
fn leading_int(value: &str) -> Option<i64> {
    let v = value.trim_start();
    let sign = usize::from(v.starts_with(['+', '-']));
    let digits = v[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    v[..sign + digits].parse().ok()
}

/// An integer field; an integral decimal (`3600.00`) reads as that integer.
fn int_field(tok: &str) -> Option<i64> {
    let (whole, frac) = tok.split_once('.').unwrap_or((tok, ""));
    if !frac.bytes().all(|b| b == b'0') || whole.is_empty() || whole == "-" || whole == "+" {
        return None;
    }
    whole.parse().ok()
}

/// Read and clean an SWF trace as dispatchlab does: returns the jobs (sorted stably by
/// submit time) and the machine's cores (header MaxProcs, else MaxNodes).
fn parse(path: &str) -> Result<(Vec<Job>, i64), String> {
    let mut header: HashMap<String, String> = HashMap::new();
    let mut rows: Vec<[i64; 5]> = Vec::new(); // submit, run, alloc, req procs, req time
    for_each_line(path, |number, raw| {
        let line = raw.trim();
        if line.is_empty() {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix(';') {
            let rest = rest.trim_start();
            if let Some((key, value)) = rest.split_once(':') {
                let ok = key.starts_with(|c: char| c.is_ascii_uppercase())
                    && key.chars().all(|c| c.is_ascii_alphanumeric())
                    && (value.is_empty() || value.starts_with(char::is_whitespace));
                if ok {
                    let slot = header.entry(key.to_ascii_lowercase()).or_default();
                    if !slot.is_empty() {
                        slot.push('\n');
                    }
                    slot.push_str(value.trim());
                }
            }
            return Ok(());
        }
        let mut tokens = [""; 18];
        let mut count = 0;
        for tok in line.split_ascii_whitespace() {
            if count < 18 {
                tokens[count] = tok;
            }
            count += 1;
        }
        if count != 18 {
            return Err(format!("{path}: line {number}: {count} fields, expected 18"));
        }
        let mut row = [0i64; 5];
        for (slot, field) in row.iter_mut().zip([2usize, 4, 5, 8, 9]) {
            let tok = tokens[field - 1];
            *slot = int_field(tok).ok_or_else(|| {
                format!("{path}: line {number}: field {field}: not an integer: {tok:?}")
            })?;
        }
        let units = if row[3] != -1 { row[3] } else { row[2] };
        if row[4] < -1 || (row[0] < 0 && units > 0 && row[1] >= 0) {
            let (field, what) =
                if row[4] < -1 { (9, "requested time < -1") } else { (2, "no submit time") };
            return Err(format!("{path}: line {number}: field {field}: {what}"));
        }
        rows.push(row);
        Ok(())
    })?;
    let fact = |key: &str| header.get(key).and_then(|v| leading_int(v));
    let cores = match fact("maxprocs").filter(|&c| c != 0).or(fact("maxnodes")) {
        Some(c) if c > 0 => c,
        _ => return Err(format!("{path}: the trace header has neither MaxProcs nor MaxNodes")),
    };
    // requested time -1: the recorded fallback, MaxRuntime, the largest requested
    // time of the file, else its largest run time (over every line, before cleaning)
    let fallback = match header.get("dispatchlabestimatefallback").and_then(|v| leading_int(v)) {
        Some(v) => v,
        None => match fact("maxruntime").filter(|&v| v > 0) {
            Some(v) => v,
            None if rows.iter().any(|r| r[4] >= 0) => rows.iter().map(|r| r[4]).max().unwrap_or(-1),
            None => rows.iter().map(|r| r[1]).max().unwrap_or(-1),
        },
    };
    let mut jobs: Vec<Job> = rows
        .iter()
        .map(|r| Job {
            submit: r[0],
            run: r[1],
            units: if r[3] != -1 { r[3] } else { r[2] },
            est: if r[4] == -1 { fallback } else { r[4] },
        })
        .filter(|j| j.units > 0 && j.run >= 0 && j.submit >= 0)
        .collect();
    jobs.sort_by_key(|j| j.submit); // stable: equal submit times keep the file order
    Ok((jobs, cores))
}

/// Simulate EASY (one reservation, FIFO queue and backfill scan, estimate = requested
/// time); returns each job's start time (-1: rejected, wider than the machine).
fn simulate(jobs: &[Job], cores: i64) -> Vec<i64> {
    let planned = |j: usize| jobs[j].est.max(1); // planning duration: at least 1 s
    let mut start = vec![-1i64; jobs.len()];
    let mut free = cores;
    let mut ends: BTreeSet<(i64, usize)> = BTreeSet::new(); // (actual end, job)
    let mut running: BTreeSet<(i64, usize)> = BTreeSet::new(); // (planned end, job)
    let mut queue: Vec<usize> = Vec::new();
    let mut next = 0;
    loop {
        let times = [ends.first().map(|e| e.0), jobs.get(next).map(|j| j.submit)];
        let Some(now) = times.into_iter().flatten().min() else { break };
        while next < jobs.len() && jobs[next].submit == now {
            if jobs[next].units <= cores {
                queue.push(next);
            }
            next += 1;
        }
        // completions, then one pass; jobs started now that end now (0 s runs) bring
        // the loop back to this time: their completions, then another pass
        while let Some(&(_, j)) = ends.first().filter(|e| e.0 == now) {
            ends.pop_first();
            free += jobs[j].units;
            running.remove(&(start[j] + planned(j), j));
        }
        let mut started = Vec::new();
        let mut i = 0;
        while i < queue.len() && jobs[queue[i]].units <= free {
            free -= jobs[queue[i]].units;
            started.push(queue[i]);
            running.insert((now + planned(queue[i]), queue[i]));
            i += 1;
        }
        if i < queue.len() {
            // the head's shadow time: release running jobs by planned end (an end
            // already past counts as now) until it fits; extra = what is left over
            let need = jobs[queue[i]].units;
            let (mut avail, mut shadow) = (free, i64::MAX);
            for &(end, j) in running.iter() {
                let end = end.max(now);
                if end > shadow {
                    break;
                }
                avail += jobs[j].units;
                if shadow == i64::MAX && avail >= need {
                    shadow = end;
                }
            }
            let mut extra = avail - need;
            for &j in &queue[i + 1..] {
                let u = jobs[j].units;
                if free <= 0 {
                    break;
                } else if u > free {
                    continue;
                } else if now + planned(j) <= shadow {
                    free -= u; // ends by the shadow time
                } else if u <= extra {
                    free -= u; // or fits in the extra cores, which it consumes
                    extra -= u;
                } else {
                    continue;
                }
                started.push(j);
                running.insert((now + planned(j), j));
            }
        }
        for &j in &started {
            start[j] = now;
            ends.insert((now + jobs[j].run, j));
        }
        if !started.is_empty() {
            queue.retain(|&j| start[j] < 0);
        }
    }
    start
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: minimal_easy TRACE.swf[.gz]");
        exit(2);
    }
    let t0 = Instant::now();
    let (jobs, cores) = match parse(&args[1]) {
        Ok(parsed) => parsed,
        Err(msg) => {
            eprintln!("error: {msg}");
            exit(2);
        }
    };
    let t1 = Instant::now();
    let start = simulate(&jobs, cores);
    let t2 = Instant::now();
    let (mut n, mut wait, mut bsld) = (0u64, 0i64, 0f64);
    for (j, &s) in jobs.iter().zip(&start) {
        if s >= 0 {
            let w = s - j.submit;
            n += 1;
            wait += w;
            bsld += ((w + j.run) as f64 / (j.run.max(10) as f64)).max(1.0);
        }
    }
    let n_f = n.max(1) as f64;
    let (mean_wait, mean_bsld) = (wait as f64 / n_f, bsld / n_f);
    let (parse_s, sim_s) = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());
    let rejected = jobs.len() as u64 - n;
    println!("cores {cores}\njobs {n}\nrejected {rejected}\nmean_wait {mean_wait:.1}");
    println!("mean_bsld {mean_bsld:.2}\nparse_seconds {parse_s:.4}\nsimulate_seconds {sim_s:.4}");
}
