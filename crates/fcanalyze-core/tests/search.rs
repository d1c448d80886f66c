//! The solver's portfolio (dives sharing the store with a complete best-first search) and the column
//! statistics its heuristics read.

use fccore::replay;
use fccore::Dive;
use fccore::SolutionMove;
use fccore::{Layout, Origin, Position};
use fccore::{Limits, Move, Outcome, Solver, Strategy};
use proptest::prelude::*;

/// Random legal play from `deal` with `cells` free cells, the statistics kept: `check` sees each position
/// reached (settled) with its moves, then the move `picks` chooses is played, until the picks run out or
/// no move is left.
fn random_play(
    deal: u64,
    cells: usize,
    picks: &[u16],
    mut check: impl FnMut(&Position, &Origin, &[Move]) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let layout = Layout::deal(deal).unwrap();
    let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
    p.track_stats();
    p.settle(None);
    let mut moves = Vec::new();
    for &pick in picks {
        p.moves(&mut moves);
        check(&p, &origin, &moves)?;
        if moves.is_empty() {
            break;
        }
        let m = moves[pick as usize % moves.len()];
        p.apply(m, &origin);
        p.settle(None);
    }
    Ok(())
}

fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

#[test]
fn solve_proof_is_complete_with_and_without_dives() {
    // The dives store positions they never expand; the best-first phase must still take up every one.
    for dives in [
        Dive::PORTFOLIO.to_vec(),
        vec![],
        Dive::PORTFOLIO[..1].to_vec(),
    ] {
        let mut s = Solver::new();
        s.dives = dives;
        let r = s
            .search(
                &Layout::deal(11982).unwrap(),
                4,
                Strategy::Solve,
                limits(1_000_000),
            )
            .unwrap();
        assert_eq!(r.outcome, Outcome::Unsolvable);
        assert_eq!(r.positions, 61_643);
    }
}

#[test]
fn solve_budget_gives_undecided_never_unsolvable() {
    let mut s = Solver::new();
    for cap in [1u64, 2, 50, 1000, 61_642] {
        let r = s
            .search(
                &Layout::deal(11982).unwrap(),
                4,
                Strategy::Solve,
                limits(cap),
            )
            .unwrap();
        assert_eq!(r.outcome, Outcome::Undecided, "cap {cap}");
        assert!(r.positions <= cap);
    }
    let r = s
        .search(
            &Layout::deal(11982).unwrap(),
            4,
            Strategy::Solve,
            Limits {
                max_positions: u64::MAX,
                max_millis: Some(0),
            },
        )
        .unwrap();
    assert_ne!(r.outcome, Outcome::Unsolvable);
}

#[test]
fn tiny_dives_fall_through_to_the_complete_search() {
    // Dives that give up almost at once: the best-first phase must still solve and the line replay.
    let mut s = Solver::new();
    for d in &mut s.dives {
        d.budget = 3;
        d.quantum = 1;
    }
    s.bf_quantum = 1;
    for deal in [1u64, 2, 3, 164, 617, 1941] {
        let layout = Layout::deal(deal).unwrap();
        let r = s
            .search(&layout, 4, Strategy::Solve, Limits::default())
            .unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
        replay(&layout, 4, &r.solution).unwrap();
    }
}

#[test]
fn few_cells_solves_replay() {
    // Known minimum cells (SPEC §6): solved with the minimum, the line replays.
    let mut s = Solver::new();
    for (deal, k) in [(1u64, 3usize), (2, 1), (3, 2), (164, 0), (617, 4)] {
        let layout = Layout::deal(deal).unwrap();
        let r = s
            .search(&layout, k, Strategy::Solve, Limits::default())
            .unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal} with {k} cells");
        replay(&layout, k, &r.solution).unwrap();
    }
}

#[test]
fn solver_is_reusable_and_deterministic() {
    let mut a = Solver::new();
    let mut b = Solver::new();
    for deal in 1..=30u64 {
        let layout = Layout::deal(deal).unwrap();
        let x = a
            .search(&layout, 4, Strategy::Solve, Limits::default())
            .unwrap();
        let y = b
            .search(&layout, 4, Strategy::Solve, Limits::default())
            .unwrap();
        assert_eq!(x.outcome, Outcome::Solved);
        assert_eq!(
            (x.positions, x.solution.len()),
            (y.positions, y.solution.len()),
            "deal {deal}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random legal play with the column statistics kept: they always equal the recomputed ones, decoding
    /// a key with statistics gives the same position, and the sorted test agrees with the plain scan.
    #[test]
    fn kept_statistics_match_random_play(deal in 1u64..=32_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..150)) {
        random_play(deal, cells, &picks, |p, origin, _| {
            let p = *p;
            p.check_invariants(origin).map_err(TestCaseError::fail)?;
            let q = Position::from_key_tracked(p.key(), origin, cells as u8);
            prop_assert_eq!(q.key(), p.key());
            q.check_invariants(origin).map_err(TestCaseError::fail)?;
            prop_assert_eq!(q.stats_sum(), p.stats_sum());
            let plain = Position::from_key(p.key(), origin, cells as u8);
            prop_assert_eq!(plain.is_sorted(), p.is_sorted());
            // The move generator's shortcut from the kept runs gives the same moves as the plain one.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            plain.moves(&mut a);
            q.moves(&mut b);
            prop_assert_eq!(a, b);
            Ok(())
        })?;
        let _ = SolutionMove { mv: fccore::Move { from: 0, to: 1, count: 1 }, auto: false };
    }
}

#[test]
fn solve_proofs_count_the_reachable_set() {
    // With few cells many deals are unsolvable: Solve's proof (often ended by an exhausted dive) must
    // store exactly the positions Prove reaches.
    let mut s = Solver::new();
    let mut proofs = 0;
    for deal in 1..=60u64 {
        for k in [0usize, 1] {
            let layout = Layout::deal(deal).unwrap();
            let a = s
                .search(&layout, k, Strategy::Prove, limits(2_000_000))
                .unwrap();
            let b = s
                .search(&layout, k, Strategy::Solve, limits(2_000_000))
                .unwrap();
            if a.outcome == Outcome::Unsolvable {
                proofs += 1;
                assert_eq!(b.outcome, Outcome::Unsolvable, "deal {deal} k={k}");
                assert_eq!(a.positions, b.positions, "deal {deal} k={k}");
            } else if a.outcome == Outcome::Solved {
                assert_eq!(b.outcome, Outcome::Solved, "deal {deal} k={k}");
            }
        }
    }
    assert!(proofs > 50);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A peeked child (key and heuristic features computed without building it) equals the built child.
    #[test]
    fn peek_matches_the_built_child(deal in 1u64..=32_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..150)) {
        random_play(deal, cells, &picks, |p, origin, moves| {
            let p = *p;
            let base = p.peek_base();
            // The moves generated with their base are the moves, and the base is the peek base.
            let mut with_base = Vec::new();
            let b = p.moves_with_base(&mut with_base);
            prop_assert_eq!(&with_base, moves);
            prop_assert_eq!((b.stats, b.free, b.empty, b.tops), (base.stats, base.free, base.empty, base.tops));
            for &m in moves {
                let mut q = p;
                q.apply(m, origin);
                let before = *q.key();
                q.settle(None);
                match p.peek(m, &base, origin) {
                    Some(pk) => {
                        prop_assert_eq!(before, *q.key(), "peeked a child that needs automatic moves");
                        prop_assert_eq!(&pk.key, q.key());
                        prop_assert_eq!(pk.stats, q.stats_sum());
                        prop_assert_eq!(fccore::peek_features(&p, &pk, true), fccore::features(&q));
                    }
                    None => prop_assert!(m.to == fccore::FOUNDATION || before != *q.key()),
                }
                // A move told by its cards is found again, in this position and in the decoded one.
                let code = p.describe(m);
                prop_assert_eq!(p.undescribe(code), Some(m));
                let d = Position::from_key(p.key(), origin, cells as u8);
                let dm = d.undescribe(code).expect("a move");
                let mut dq = d;
                dq.apply(dm, origin);
                dq.settle(None);
                prop_assert_eq!(dq.key(), q.key());
            }
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The dives' composite moves (digs, clears, shifts) are lines of legal moves, each one generated by
    /// `Position::moves` after the automatic moves; and they reach the same canonical position from any
    /// column and cell order (the solution rebuilds them from the concrete position).
    #[test]
    fn composite_moves_expand_to_legal_lines(deal in 1u64..=32_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..120)) {
        let mut moves = Vec::new();
        random_play(deal, cells, &picks, |p, origin, _| {
            let p = *p;
            for kind in 0..3 {
                for arg in 0..52u8 {
                    if kind == 0 && arg >= 4 {
                        break;
                    }
                    let play = |q: &mut Position, log: Option<&mut Vec<fccore::Move>>| match kind {
                        0 => q.dig(arg, origin, log),
                        1 => q.clear(arg, origin, log),
                        _ => q.shift(arg, origin, log),
                    };
                    let mut q = p;
                    let mut line = Vec::new();
                    if !play(&mut q, Some(&mut line)) {
                        continue;
                    }
                    prop_assert!(!line.is_empty());
                    q.check_invariants(origin).map_err(TestCaseError::fail)?;
                    if kind == 0 {
                        prop_assert!(q.foundations()[arg as usize] > p.foundations()[arg as usize]);
                    }
                    let mut r = p;
                    for &m in &line {
                        r.moves(&mut moves);
                        prop_assert!(moves.contains(&m), "{:?} is not a legal move", m);
                        r.apply(m, origin);
                        r.settle(None);
                    }
                    prop_assert_eq!(r.key(), q.key());
                    let mut d = Position::from_key(p.key(), origin, cells as u8);
                    prop_assert!(play(&mut d, None));
                    prop_assert_eq!(d.key(), q.key());
                }
            }
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The pre-check of clears is exact where it rejects: a clear it says fails does fail, so the dives
    /// try the same clears with or without it.
    #[test]
    fn clear_fails_only_when_the_clear_fails(deal in 1u64..=32_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..200)) {
        random_play(deal, cells, &picks, |p, origin, _| {
            let p = *p;
            let base = p.peek_base();
            for col in 0..fccore::NCOLS {
                if p.top(col) == fccore::NONE {
                    continue;
                }
                let mut b = p.top(col);
                while p.below(b) != fccore::NONE {
                    b = p.below(b);
                }
                let mut q = p;
                if q.clear(b, origin, None) {
                    prop_assert!(!p.clear_fails(col, &base), "a clear of column {} that succeeds was rejected", col + 1);
                }
            }
            Ok(())
        })?;
    }
}
