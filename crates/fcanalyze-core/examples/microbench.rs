//! Micro-benchmark of the move generator and the child peek on positions from random play.
//! Usage: microbench ROUNDS   (deterministic, for instruction counts)
use fccore::position::{Layout, Position};
use fccore::search::peek_features;

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(10, |x| x.parse().unwrap());
    let mut positions = Vec::new();
    let mut origins = Vec::new();
    let mut rng = 12345u64;
    let mut moves = Vec::new();
    for deal in 1..=200u64 {
        let (mut p, origin) = Position::from_layout(&Layout::deal(deal).unwrap(), 4).unwrap();
        p.track_stats();
        p.settle(None);
        for _ in 0..40 {
            p.moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let m = moves[(rng % moves.len() as u64) as usize];
            p.apply(m, &origin);
            p.settle(None);
            positions.push((p, origins.len()));
        }
        origins.push(origin);
    }
    let mut total = 0u64;
    for _ in 0..rounds {
        for (p, o) in &positions {
            p.moves(&mut moves);
            let base = p.peek_base();
            for &m in &moves {
                if let Some(pk) = p.peek(m, &base, &origins[*o]) {
                    total += peek_features(p, &pk, false)[1] as u64;
                }
            }
        }
    }
    println!("{} positions, checksum {total}", positions.len());
}
