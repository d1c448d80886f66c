//! The lean search on several threads: the same counts as on one, wins with lines that replay, budgets
//! that end undecided.

use crate::layout::Layout;
use crate::limits::Limits;
use crate::outcome::{Budget, Outcome};

use super::Prover;

fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

/// A prover on `threads` threads that shares work from its `parallel_from`-th position on.
fn prover(threads: usize, parallel_from: u64) -> Prover {
    let mut p = Prover::new();
    p.layered_threads = threads;
    p.parallel_from = parallel_from;
    p
}

/// Proofs on two and three threads count exactly the positions one thread counts (the reachable set),
/// sharing work from the start or after a while, past the portfolio or within it.
#[test]
fn parallel_proofs_count_the_sequential_counts() {
    let cases = [
        (11982u64, 4usize, Some(61_643u64)),
        (1, 2, Some(70_882)),
        (617, 3, Some(13_582)),
        (125, 1, Some(38_512)),
        (216, 2, Some(211_054)),
        (351, 2, Some(238_118)),
        (391, 2, Some(130_611)),
        (50, 1, None),
        (66, 1, None),
        (70, 1, None),
    ];
    let mut one = Prover::new();
    for (deal, cells, known) in cases {
        let layout = Layout::deal(deal).unwrap();
        let r = one.prove(&layout, cells, limits(u64::MAX)).unwrap();
        assert_eq!(r.outcome, Outcome::Unsolvable, "deal {deal} k={cells}");
        if let Some(n) = known {
            assert_eq!(r.positions, n, "deal {deal} k={cells}");
        }
        for (threads, from, portfolio) in [(2, 0, 20_000_000), (2, 5_000, 0), (3, 100, 20_000)] {
            let mut p = prover(threads, from);
            p.portfolio_positions = portfolio;
            let q = p.prove(&layout, cells, limits(u64::MAX)).unwrap();
            assert_eq!(
                (q.outcome, q.positions),
                (Outcome::Unsolvable, r.positions),
                "deal {deal} k={cells} threads={threads} from={from}"
            );
            assert_eq!(p.stats.expanded, r.positions, "deal {deal} k={cells}");
        }
    }
}

/// Wins found by any thread come back with their line, replayed from the deal ([`Prover::prove`]
/// replays every line and fails on one that does not play).
#[test]
fn parallel_wins_come_with_replayed_lines() {
    let mut p = prover(2, 0);
    for deal in 1..=30u64 {
        let layout = Layout::deal(deal).unwrap();
        let r = p.prove(&layout, 4, limits(5_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
        assert!(r.player_moves() > 0, "deal {deal}");
    }
    for (deal, k) in [(2u64, 1usize), (3, 2), (164, 0), (617, 4), (7, 1)] {
        let layout = Layout::deal(deal).unwrap();
        let r = p.prove(&layout, k, limits(50_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal} k={k}");
    }
}

/// Below `parallel_from` positions the threads change nothing: the same line and count as one thread.
#[test]
fn searches_before_sharing_are_those_of_one_thread() {
    let mut one = Prover::new();
    let mut two = prover(2, 1_000_000);
    for (deal, k) in [(5u64, 1usize), (164, 0), (7, 1), (1, 2)] {
        let layout = Layout::deal(deal).unwrap();
        let a = one.prove(&layout, k, limits(u64::MAX)).unwrap();
        let b = two.prove(&layout, k, limits(u64::MAX)).unwrap();
        assert_eq!((a.outcome, a.positions), (b.outcome, b.positions));
        assert_eq!(a.solution, b.solution, "deal {deal} k={k}");
    }
}

/// Every budget ends a parallel search undecided, never unsolvable, within the position budget; the
/// prover is reusable afterwards.
#[test]
fn parallel_budgets_give_undecided() {
    let mut p = prover(2, 0);
    let layout = Layout::deal(11982).unwrap();
    for cap in [1u64, 2, 50, 1000, 5000, 61_642] {
        let r = p.prove(&layout, 4, limits(cap)).unwrap();
        assert_eq!(r.outcome, Outcome::Undecided, "cap {cap}");
        assert_eq!(r.exhausted, Some(Budget::Positions), "cap {cap}");
        assert!(r.positions <= cap, "cap {cap}");
    }
    let timed = Limits {
        max_positions: u64::MAX,
        max_millis: Some(0),
    };
    let r = p.prove(&layout, 4, timed).unwrap();
    assert_eq!(
        (r.outcome, r.exhausted),
        (Outcome::Undecided, Some(Budget::Time))
    );
    p.max_memory = Some(1);
    let r = p.prove(&layout, 4, limits(u64::MAX)).unwrap();
    assert_eq!(
        (r.outcome, r.exhausted),
        (Outcome::Undecided, Some(Budget::Positions))
    );
    p.max_memory = None;
    let r = p.prove(&layout, 4, limits(u64::MAX)).unwrap();
    assert_eq!((r.outcome, r.positions), (Outcome::Unsolvable, 61_643));
}
