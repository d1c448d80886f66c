//! Prover measurements: lean DEAL CELLS [CAP] [old] (CORES=T: the prover's threads; PARALLEL_FROM=N:
//! positions it searches on one thread first); LAYERED=1 [MEM_MB=M] [THREADS=T] [SET_LEN=N] [TRADES=0]
//! for the layered proof (its groups searched by levels past N positions; without groups by orbits).
use fccore::Prover;
use fccore::*;
pub fn run(args: &[String]) {
    let deal: u64 = args[1].parse().unwrap();
    let cells: usize = args[2].parse().unwrap();
    let cap: u64 = args
        .get(3)
        .map(|s| s.parse().unwrap())
        .unwrap_or(4_000_000_000);
    let old = args.get(4).is_some_and(|s| s == "old");
    let limits = Limits {
        max_positions: cap,
        max_millis: None,
    };
    let layout = Layout::deal(deal).unwrap();
    if std::env::var("LAYERED").is_ok() {
        let mem = std::env::var("MEM_MB")
            .ok()
            .map(|v| v.parse::<usize>().unwrap() << 20);
        let threads = std::env::var("THREADS").map_or(1, |v| v.parse().unwrap());
        let config = fccore::LayeredConfig {
            max_memory: mem,
            threads,
            max_set_len: std::env::var("SET_LEN").ok().map(|v| v.parse().unwrap()),
            trades: std::env::var("TRADES").map_or(true, |v| v != "0"),
            ..Default::default()
        };
        let r = fccore::prove_layered(&layout, cells, limits, &config).unwrap();
        println!(
            "deal {deal} k={cells} layered {:?} positions={} peak_positions={} peak_MB={} peak_disk_MB={} ms={:.1} rate={:.2}M/s",
            r.outcome,
            r.positions,
            r.peak_positions,
            r.peak_bytes >> 20,
            r.peak_disk >> 20,
            r.elapsed_ms,
            r.positions as f64 / r.elapsed_ms / 1e3
        );
        let mb = |b: usize| b >> 20;
        let p = r.peak_parts;
        println!(
            "at the peak: set_MB={} stack_MB={} merge_MB={} buffers_MB={} group_positions={}",
            mb(p[0]),
            mb(p[1]),
            mb(p[2]),
            mb(p[3]),
            p[4]
        );
        if !r.chain.is_empty() {
            let rules = fccore::Rules::new(&layout, cells);
            let line = fccore::checked_line(&layout, cells, &rules, r.chain, "layered").unwrap();
            let moves = line.iter().filter(|m| !m.auto).count();
            println!("line of {moves} moves (replayed)");
        }
        return;
    }
    let r = if old {
        Solver::new()
            .search(&layout, cells, Strategy::Prove, limits)
            .unwrap()
    } else {
        let mut p = Prover::new();
        if let Ok(n) = std::env::var("CORES") {
            p.layered_threads = n.parse().unwrap();
        }
        if let Ok(n) = std::env::var("PARALLEL_FROM") {
            p.parallel_from = n.parse().unwrap();
        }
        if let Ok(n) = std::env::var("PORTFOLIO") {
            p.portfolio_positions = n.parse().unwrap();
        }
        if let Ok(spec) = std::env::var("THREADS") {
            // e.g. "3,1,3,3,1/64;6,1,4,4,2/64;-/64"
            p.threads = spec
                .split(';')
                .map(|t| {
                    let (w, q) = t.split_once('/').unwrap_or((t, "64"));
                    let weights = if w == "-" {
                        None
                    } else {
                        let v: Vec<u32> = w.split(',').map(|x| x.parse().unwrap()).collect();
                        Some(v.try_into().unwrap())
                    };
                    fccore::Thread {
                        weights,
                        quantum: q.parse().unwrap(),
                    }
                })
                .collect();
        }
        p.max_memory = std::env::var("MEM_MB")
            .ok()
            .map(|v| v.parse::<usize>().unwrap() << 20);
        let r = p.prove(&layout, cells, limits).unwrap();
        if std::env::var("HIST").is_ok() {
            let h = &p.stats.by_home;
            let total: u64 = h.iter().sum();
            let mut above = total;
            let mut peak = 0u64;
            for (i, &n) in h.iter().enumerate() {
                if n > 0 {
                    eprintln!(
                        "home {i:2}: {n:>11} ({:.1}%), this and above {:.1}%",
                        100.0 * n as f64 / total as f64,
                        100.0 * above as f64 / total as f64
                    );
                }
                peak = peak.max(above);
                above -= n;
            }
        }
        eprintln!(
            "{:?} set {:.1} B/pos",
            p.stats,
            p.stats.set_bytes as f64 / r.positions as f64
        );
        r
    };
    println!(
        "deal {deal} k={cells} {:?} positions={} moves={} ms={:.1} rate={:.2}M/s",
        r.outcome,
        r.positions,
        r.player_moves(),
        r.elapsed_ms,
        r.positions as f64 / r.elapsed_ms / 1e3
    );
}
