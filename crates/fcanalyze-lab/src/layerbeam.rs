//! Experiment driver: one layer beam ([`fccore::lab::layer_beam`]) of a deal.
//! Usage: layerbeam DEAL CELLS WIDTH LAYER_CAP [MAX_POSITIONS]
use fccore::*;
pub fn run(args: &[String]) {
    let deal: u64 = args[1].parse().unwrap();
    let cells: usize = args[2].parse().unwrap();
    let width: usize = args[3].parse().unwrap();
    let cap: usize = args[4].parse().unwrap();
    let max_positions = args.get(5).map_or(u64::MAX, |x| x.parse().unwrap());
    let limits = Limits {
        max_positions,
        max_millis: None,
    };
    let r = lab::layer_beam(&Layout::deal(deal).unwrap(), cells, width, cap, limits).unwrap();
    println!(
        "deal {deal}@{cells} width {width} layer cap {cap}: {} after {} positions, {} moves, {:.1} s",
        r.outcome.as_str(),
        r.positions,
        r.player_moves(),
        r.elapsed_ms / 1e3
    );
}
