//! Micro-benchmark of the move generator and the child peek on positions from random play.
//!
//! `cargo bench -p fcanalyze-core --bench microbench`. The positions are the same on every run (200
//! deals, up to 40 moves of seeded random play from each); one round generates the moves of every
//! position and peeks at every child, summing a feature so that nothing is optimised away. The checksum
//! of one round is printed first: a change meant only to make the generator or the peek faster leaves it
//! as it was (5515 positions, checksum 794683). For instruction counts, run the bench binary under a
//! profiler with `--profile-time SECONDS`.
use criterion::{criterion_group, criterion_main, Criterion};
use fccore::peek_features;
use fccore::Origin;
use fccore::{Layout, Move, Position};
use std::hint::black_box;

/// Positions from seeded random play (with 4 cells), each with the index of its deal's origin.
fn positions() -> (Vec<(Position, usize)>, Vec<Origin>) {
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
    (positions, origins)
}

/// One round: the moves of every position and a peek at every child; the sum of a peeked feature.
fn round(positions: &[(Position, usize)], origins: &[Origin], moves: &mut Vec<Move>) -> u64 {
    let mut total = 0u64;
    for (p, o) in positions {
        p.moves(moves);
        let base = p.peek_base();
        for &m in moves.iter() {
            if let Some(pk) = p.peek(m, &base, &origins[*o]) {
                total += peek_features(p, &pk, false)[1] as u64;
            }
        }
    }
    total
}

fn moves_and_peek(c: &mut Criterion) {
    let (positions, origins) = positions();
    let mut moves = Vec::new();
    println!(
        "{} positions, checksum {}",
        positions.len(),
        round(&positions, &origins, &mut moves)
    );
    c.bench_function("moves_and_peek", |b| {
        b.iter(|| round(black_box(&positions), &origins, &mut moves))
    });
}

criterion_group!(benches, moves_and_peek);
criterion_main!(benches);
