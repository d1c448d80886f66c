//! Exact classification of a range of deals with worker threads, one deal at a time each.
//! Usage: classify-range FIRST LAST [THREADS] [MAX_CELLS]
//! env: SOLVE=short-solve budget, CAP=prover budget, START=first cell count, OUT=per-deal TSV file,
//! DEALS=comma list instead of a range.
use fccore::Layout;
use fccore::{Classifier, ClassifyLimits};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// A deal's row: deal, lower and upper bound of its minimum cells, milliseconds, the searches made.
type Row = (u64, usize, Option<usize>, f64, String);

/// The row as a line of the STREAM and OUT files (tab-separated, `-` for no upper bound).
fn tsv(r: &Row) -> String {
    let up = r.2.map_or("-".into(), |u| u.to_string());
    format!("{}\t{}\t{}\t{:.1}\t{}", r.0, r.1, up, r.3, r.4)
}

/// The classification budget: the defaults, each overridden by its environment variable.
fn limits_from_env() -> ClassifyLimits {
    let d = ClassifyLimits::default();
    ClassifyLimits {
        solve_positions: env("SOLVE", d.solve_positions),
        middle_positions: env("MIDDLE", d.middle_positions),
        first_proof_positions: env("FIRST", d.first_proof_positions),
        max_positions: env("CAP", d.max_positions),
        max_millis: std::env::var("MS").ok().map(|v| v.parse().unwrap()),
        start: env("START", d.start),
        short_prover: env("SHORT_PROVER", 0u8) == 1,
        beams: if env("BEAMS", 1u8) == 1 { d.beams } else { &[] },
        shorten: d.shorten,
    }
}

/// Classify one deal: its row.
fn classify_one(c: &mut Classifier, deal: u64, max_cells: usize, limits: ClassifyLimits) -> Row {
    let t = Instant::now();
    let r = c
        .classify(&Layout::deal(deal).unwrap(), max_cells, limits)
        .unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let detail: Vec<String> = r
        .searches
        .iter()
        .map(|s| {
            format!(
                "{}{}:{}:{}:{:.0}",
                s.cells,
                if s.proved { "p" } else { "s" },
                &s.result.outcome.as_str()[..1],
                s.result.positions,
                s.result.elapsed_ms
            )
        })
        .collect();
    (deal, r.lower, r.upper, ms, detail.join(" "))
}

pub fn run(args: &[String]) {
    let deals: Vec<u64> = match std::env::var("DEALS") {
        Ok(list) => list.split(',').map(|x| x.trim().parse().unwrap()).collect(),
        Err(_) => {
            let a: u64 = args[1].parse().unwrap();
            let b: u64 = args[2].parse().unwrap();
            (a..=b).collect()
        }
    };
    let threads: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(2);
    let max_cells: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(4);
    let limits = limits_from_env();
    eprintln!("{} deals, {threads} threads, {limits:?}", deals.len());
    let deals = Arc::new(deals);
    let next = Arc::new(AtomicUsize::new(0));
    let rows = Arc::new(Mutex::new(Vec::new()));
    // Rows are also streamed to STREAM as deals finish (deal, lower, upper, ms, searches).
    let stream = Arc::new(Mutex::new(
        std::env::var("STREAM")
            .ok()
            .map(|p| std::fs::File::create(p).unwrap()),
    ));
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (deals, next, rows) = (deals.clone(), next.clone(), rows.clone());
            let stream = stream.clone();
            std::thread::spawn(move || {
                let mut c = Classifier::new();
                c.prover.max_memory = std::env::var("MEM_MB")
                    .ok()
                    .map(|v| v.parse::<usize>().unwrap() << 20);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= deals.len() {
                        break;
                    }
                    let row = classify_one(&mut c, deals[i], max_cells, limits);
                    if row.3 > 5000.0 {
                        eprintln!("slow: deal {} {:.1}s {}", row.0, row.3 / 1e3, row.4);
                    }
                    if let Some(f) = stream.lock().unwrap().as_mut() {
                        writeln!(f, "{}", tsv(&row)).unwrap();
                        f.flush().unwrap();
                    }
                    let mut rows = rows.lock().unwrap();
                    rows.push(row);
                    if rows.len() % 1000 == 0 {
                        eprintln!(
                            "{} deals done, {:.0}s",
                            rows.len(),
                            t0.elapsed().as_secs_f64()
                        );
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let wall = t0.elapsed().as_secs_f64();
    let mut rows = rows.lock().unwrap().clone();
    rows.sort_by_key(|r| r.0);
    report(&rows, wall, max_cells);
}

/// The OUT file and the summary: minimum cells, undecided deals and the slowest 20.
fn report(rows: &[Row], wall: f64, max_cells: usize) {
    let mut hist = [0usize; 10];
    let mut undecided = vec![];
    for r in rows {
        match r.2 {
            Some(u) if u == r.1 => hist[u] += 1,
            _ => undecided.push((r.0, r.1, r.2)),
        }
    }
    if let Ok(path) = std::env::var("OUT") {
        let mut f = std::fs::File::create(path).unwrap();
        for r in rows {
            writeln!(f, "{}", tsv(r)).unwrap();
        }
    }
    let total: f64 = rows.iter().map(|r| r.3).sum();
    let mut by_time = rows.to_vec();
    by_time.sort_by(|a, b| b.3.partial_cmp(&a.3).unwrap());
    println!(
        "wall {wall:.1}s, deal time {:.1}s (mean {:.2} ms)",
        total / 1e3,
        total / rows.len() as f64
    );
    println!("min cells: {:?}", &hist[..=max_cells + 1]);
    println!(
        "undecided ({}): {:?}",
        undecided.len(),
        &undecided[..undecided.len().min(30)]
    );
    let top: f64 = by_time.iter().take(20).map(|r| r.3).sum();
    println!(
        "slowest 20 ({:.1}s, {:.0}%):",
        top / 1e3,
        100.0 * top / total
    );
    for r in by_time.iter().take(20) {
        println!("  {} {:.1}s {}", r.0, r.3 / 1e3, r.4);
    }
}
