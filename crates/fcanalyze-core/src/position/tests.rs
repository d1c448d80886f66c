//! Tests of the position's internals.

use super::*;
use crate::card::NONE;

/// [`Position::may_unstack_column`] answers as [`Position::may_unstack`] of the whole column, on
/// positions of random play from many deals, with every number of free cells.
#[test]
fn may_unstack_column_matches_the_walk() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut moves = Vec::new();
    let mut seen = [0u32; 2];
    for deal in 1..=300u64 {
        for cells in 0..=MAX_CELLS {
            let layout = Layout::deal(deal).unwrap();
            let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
            p.track_stats();
            p.settle(None);
            for _ in 0..60 {
                let base = p.peek_base();
                for col in 0..NCOLS as u8 {
                    let walk = p.may_unstack(col, NONE, &base);
                    assert_eq!(p.may_unstack_column(col, &base), walk);
                    seen[walk as usize] += 1;
                }
                p.moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                p.apply(moves[(rng % moves.len() as u64) as usize], &origin);
                p.settle(None);
            }
        }
    }
    assert!(seen[0] > 1000 && seen[1] > 1000, "{seen:?}");
}

/// The rules flag lies in the position's padding: a position is as large as before it (the searches
/// copy positions by the million).
#[test]
fn the_rules_flag_costs_no_space() {
    assert_eq!(std::mem::size_of::<Position>(), 624);
}
