//! Experiment driver: one beam search ([`fccore::lab::beam_weighted`]) of a deal.
//! Usage: beam DEAL CELLS WIDTH [MAX_POSITIONS]   (env W=weights of the heuristic's features)
use fccore::*;
pub fn run(args: &[String]) {
    let deal: u64 = args[1].parse().unwrap();
    let cells: usize = args[2].parse().unwrap();
    let width: usize = args[3].parse().unwrap();
    let max_positions = args.get(4).map_or(u64::MAX, |x| x.parse().unwrap());
    let limits = Limits {
        max_positions,
        max_millis: None,
    };
    let mut w = Weights::BEST_FIRST;
    if let Ok(s) = std::env::var("W") {
        let v: Vec<i32> = s.split(',').map(|x| x.parse().unwrap()).collect();
        w.0 = [0; NFEATURES];
        w.0[..v.len()].copy_from_slice(&v);
    }
    let r = lab::beam_weighted(&Layout::deal(deal).unwrap(), cells, width, &w, limits).unwrap();
    println!(
        "deal {deal}@{cells} width {width}: {} after {} positions, {} moves, {:.1} s",
        r.outcome.as_str(),
        r.positions,
        r.player_moves(),
        r.elapsed_ms / 1e3
    );
}
