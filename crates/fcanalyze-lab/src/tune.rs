//! Experiment driver: solve a sample of deals and print position statistics.
//! Usage: tune START END STEP CELLS   (env W=weights, CAP=max positions, WORST=n to list the worst deals,
//! DFSP=the dives, BFQ=the best-first quantum, DUMP=1 for a line a deal on stderr: deal, positions, µs)
use fccore::*;
pub fn run(args: &[String]) {
    let a: u64 = args[1].parse().unwrap();
    let b: u64 = args[2].parse().unwrap();
    let step: u64 = args[3].parse().unwrap();
    let cells: usize = args[4].parse().unwrap();
    let mut s = Solver::new();
    if let Ok(w) = std::env::var("W") {
        let v: Vec<i32> = w.split(',').map(|x| x.parse().unwrap()).collect();
        let mut arr = [0; NFEATURES];
        arr[..v.len()].copy_from_slice(&v);
        s.weights = Weights(arr);
    }
    if let Ok(spec) = std::env::var("DFSP") {
        s.dives = parse_dives(&spec);
    }
    if let Ok(q) = std::env::var("BFQ") {
        s.bf_quantum = q.parse().unwrap();
    }
    let cap = std::env::var("CAP")
        .map(|x| x.parse().unwrap())
        .unwrap_or(200_000);
    let worst: usize = std::env::var("WORST")
        .map(|x| x.parse().unwrap())
        .unwrap_or(0);
    let t = std::time::Instant::now();
    let (mut tot, mut solved, mut unsolv, mut moves) = (0u64, 0u64, 0u64, 0usize);
    let mut ps = vec![];
    let (mut visits, mut expansions) = (0u64, 0u64);
    let list: Vec<u64> = match std::env::var("DEALS") {
        Ok(l) => l.split(',').map(|x| x.parse().unwrap()).collect(),
        Err(_) => (a..=b).step_by(step as usize).collect(),
    };
    for &d in &list {
        let r = s
            .search(
                &Layout::deal(d).unwrap(),
                cells,
                Strategy::Solve,
                Limits {
                    max_positions: cap,
                    max_millis: None,
                },
            )
            .unwrap();
        tot += r.positions;
        visits += s.work.visits;
        expansions += s.work.expansions;
        ps.push((r.positions, d, (r.elapsed_ms * 1e3) as u64));
        match r.outcome {
            Outcome::Solved => {
                solved += 1;
                moves += r.player_moves();
            }
            Outcome::Unsolvable => unsolv += 1,
            _ => {}
        }
    }
    let mut sorted = ps.clone();
    sorted.sort();
    let n = ps.len();
    println!(
        "n={} solved={} unsolv={} undec={} mean={:.0} median={} p90={} p99={} max={} moves={:.1} time={:.2}s",
        n, solved, unsolv, n as u64 - solved - unsolv, tot as f64 / n as f64, sorted[n / 2].0, sorted[n * 9 / 10].0,
        sorted[n * 99 / 100].0, sorted[n - 1].0, moves as f64 / solved.max(1) as f64, t.elapsed().as_secs_f64()
    );
    println!(
        "visits/deal={:.0} expansions/deal={:.0}",
        visits as f64 / n as f64,
        expansions as f64 / n as f64
    );
    if std::env::var("DUMP").is_ok() {
        for (p, d, u) in &ps {
            eprintln!("{d} {p} {u}");
        }
    }
    if worst > 0 {
        let w: Vec<String> = sorted
            .iter()
            .rev()
            .take(worst)
            .map(|(p, d, _)| format!("{d}:{p}"))
            .collect();
        println!("worst: {}", w.join(" "));
    }
}

/// The dives of a DFSP spec, `;`-separated, each
/// `[j][s][c][d]BUDGET[/QUANTUM][rRESTARTS][gGROWTH][nNOISE]:W,W,...`.
fn parse_dives(spec: &str) -> Vec<Dive> {
    let mut dives = vec![];
    for part in spec.split(';').filter(|x| !x.is_empty()) {
        let (b, ws) = part.split_once(':').unwrap();
        let (b, jump) = match b.strip_prefix('j') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let (b, shifts) = match b.strip_prefix('s') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let (b, clears) = match b.strip_prefix('c') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let (b, digs) = match b.strip_prefix('d') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let v: Vec<i32> = ws.split(',').map(|x| x.parse().unwrap()).collect();
        let mut dw = [0; NFEATURES];
        dw[..v.len()].copy_from_slice(&v);
        let (b, n) = b.split_once('n').unwrap_or((b, "32"));
        let (b, g) = b.split_once('g').unwrap_or((b, "100"));
        let (b, r) = b.split_once('r').unwrap_or((b, "0"));
        let (b, q) = b.split_once('/').unwrap_or((b, "1000000"));
        dives.push(Dive {
            weights: Weights(dw),
            budget: b.parse().unwrap(),
            quantum: q.parse().unwrap(),
            restarts: r.parse().unwrap(),
            growth: g.parse().unwrap(),
            noise: n.parse().unwrap(),
            digs,
            clears,
            shifts,
            jump,
        });
    }
    dives
}
