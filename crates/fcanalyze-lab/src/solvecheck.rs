//! Solve (deal, cells) pairs from stdin ("deal cells" per line) with a position cap: how many a
//! heuristic solve wins and at what cost. Usage: solvecheck CAP [prove|oldprove]
use fccore::Prover;
use fccore::*;
use std::io::BufRead;
pub fn run(args: &[String]) {
    let cap: u64 = args[1].parse().unwrap();
    let lean = args.get(2).is_some_and(|s| s == "prove");
    let old = args.get(2).is_some_and(|s| s == "oldprove");
    let mut s = Solver::new();
    let mut p = Prover::new();
    let (mut n, mut solved, mut ms, mut pos) = (0, 0, 0.0, 0u64);
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let layout = Layout::deal(v[0]).unwrap();
        let limits = Limits {
            max_positions: cap,
            max_millis: None,
        };
        let r = if lean {
            p.prove(&layout, v[1] as usize, limits).unwrap()
        } else {
            let strategy = if old {
                Strategy::Prove
            } else {
                Strategy::Solve
            };
            s.search(&layout, v[1] as usize, strategy, limits).unwrap()
        };
        n += 1;
        ms += r.elapsed_ms;
        pos += r.positions;
        if r.outcome == Outcome::Solved {
            solved += 1;
        } else {
            println!("miss {} {} {:?} {}", v[0], v[1], r.outcome, r.positions);
        }
    }
    println!(
        "cap {cap}: solved {solved}/{n}, {:.1}s, {:.1}M positions",
        ms / 1e3,
        pos as f64 / 1e6
    );
}
