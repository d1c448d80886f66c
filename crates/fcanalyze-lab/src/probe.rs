//! Experiment driver: one search of a deal by the solver ([`fccore::Solver`]), at most MAX_POSITIONS
//! positions (200,000,000).
//! Usage: probe DEAL CELLS [prove|solve] [MAX_POSITIONS]
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
                max_positions: args.get(4).map_or(200_000_000, |x| x.parse().unwrap()),
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
