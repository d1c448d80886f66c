//! Experiment driver: one search of a deal by the solver ([`fccore::Solver`]), at most 200,000,000
//! positions.
//! Usage: probe DEAL CELLS [prove]
use fccore::*;
pub fn run(args: &[String]) {
    let deal: u64 = args[1].parse().unwrap();
    let cells: usize = args[2].parse().unwrap();
    let prove = args.get(3).map(|s| s == "prove").unwrap_or(false);
    let mut s = Solver::new();
    let r = s
        .search(
            &Layout::deal(deal).unwrap(),
            cells,
            if prove {
                Strategy::Prove
            } else {
                Strategy::Solve
            },
            Limits {
                max_positions: 200_000_000,
                max_millis: None,
            },
        )
        .unwrap();
    println!(
        "{:?} positions={} moves={} ms={:.1}",
        r.outcome,
        r.positions,
        r.player_moves(),
        r.elapsed_ms
    );
}
