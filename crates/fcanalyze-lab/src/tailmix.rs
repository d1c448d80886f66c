//! The 4-cell solver's heavy tail against the lean prover's ordered depth-first searches: for each deal
//! of A..B, the solver's positions and time, then the lean prover's (cap CAP), and what a schedule
//! "the solver up to X positions, then the prover" would cost (the solver's time at X taken pro rata).
//!
//! Usage: fcanalyze-lab tailmix A B [CELLS] [CAP]  (VERBOSE=1: a line per deal)
use fccore::Prover;
use fccore::*;

pub fn run(args: &[String]) {
    let a: u64 = args[1].parse().expect("first deal");
    let b: u64 = args[2].parse().expect("last deal");
    let cells: usize = args.get(3).map_or(4, |x| x.parse().expect("cells"));
    let cap: u64 = args.get(4).map_or(5_000_000, |x| x.parse().expect("cap"));
    let verbose = std::env::var("VERBOSE").is_ok();
    let limits = Limits {
        max_positions: cap,
        max_millis: None,
    };
    let mut solver = Solver::new();
    let mut rows = Vec::new();
    for deal in a..=b {
        let layout = Layout::deal(deal).unwrap();
        let s = solver
            .search(&layout, cells, Strategy::Solve, limits)
            .unwrap();
        let mut p = Prover::new();
        let r = p.prove(&layout, cells, limits).unwrap();
        if verbose {
            println!(
                "{deal} solver {:?} {} {:.2} ms prover {:?} {} {:.2} ms",
                s.outcome, s.positions, s.elapsed_ms, r.outcome, r.positions, r.elapsed_ms
            );
        }
        rows.push((
            s.positions,
            s.elapsed_ms,
            r.outcome,
            r.positions,
            r.elapsed_ms,
        ));
    }
    let n = rows.len() as f64;
    let solver_ms: f64 = rows.iter().map(|r| r.1).sum();
    let prover_ms: f64 = rows.iter().map(|r| r.4).sum();
    let least_ms: f64 = rows.iter().map(|r| r.1.min(r.4)).sum();
    println!(
        "deals {a}-{b}, {cells} cells: solver {solver_ms:.0} ms ({:.0} positions a deal), prover {prover_ms:.0} ms ({:.0}), the least of the two {least_ms:.0} ms",
        rows.iter().map(|r| r.0).sum::<u64>() as f64 / n,
        rows.iter().map(|r| r.3).sum::<u64>() as f64 / n,
    );
    for x in [500u64, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000] {
        let cost: f64 = rows
            .iter()
            .map(|&(sp, sms, ro, _, rms)| {
                if sp <= x || ro != Outcome::Solved {
                    sms
                } else {
                    sms * x as f64 / sp as f64 + rms
                }
            })
            .sum();
        let handed = rows
            .iter()
            .filter(|r| r.0 > x && r.2 == Outcome::Solved)
            .count();
        println!(
            "solver to {x:>6} positions, then the prover: {cost:.0} ms ({:.3} of the solver's), {handed} deals handed over",
            cost / solver_ms
        );
    }
}
