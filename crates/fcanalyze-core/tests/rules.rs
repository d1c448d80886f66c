//! The rules and the engine against the published figures and the independent replay.

use fccore::replay;
use fccore::SolutionMove;
use fccore::{Layout, Position, FOUNDATION};
use fccore::{Limits, Outcome, Solver, Strategy};
use proptest::prelude::*;

fn run(deal: u64, cells: usize, strategy: Strategy) -> fccore::SearchResult {
    let mut s = Solver::new();
    s.search(
        &Layout::deal(deal).unwrap(),
        cells,
        strategy,
        Limits {
            max_positions: 50_000_000,
            max_millis: None,
        },
    )
    .unwrap()
}

#[test]
fn deal_11982_has_61643_positions_and_no_win() {
    for strategy in [Strategy::Prove, Strategy::Solve] {
        let r = run(11982, 4, strategy);
        assert_eq!(r.outcome, Outcome::Unsolvable);
        assert_eq!(r.positions, 61_643);
    }
}

#[test]
fn deal_11982_is_solvable_with_5_cells() {
    let r = run(11982, 5, Strategy::Solve);
    assert_eq!(r.outcome, Outcome::Solved);
    replay(&Layout::deal(11982).unwrap(), 5, &r.solution).unwrap();
}

#[test]
fn known_minimum_cells() {
    // SPEC §6: deal 1 needs 3 cells, 2 needs 1, 3 needs 2, 164 needs 0, 617 needs 4.
    for (deal, min) in [(1u64, 3usize), (2, 1), (3, 2), (164, 0), (617, 4)] {
        if min > 0 {
            let r = run(deal, min - 1, Strategy::Prove);
            assert_eq!(
                r.outcome,
                Outcome::Unsolvable,
                "deal {deal} with {} cells",
                min - 1
            );
        }
        let r = run(deal, min, Strategy::Solve);
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal} with {min} cells");
        replay(&Layout::deal(deal).unwrap(), min, &r.solution).unwrap();
    }
}

#[test]
fn proof_size_does_not_depend_on_order() {
    for deal in [1u64, 3, 617] {
        let a = run(deal, 2, Strategy::Prove);
        let b = run(deal, 2, Strategy::Solve);
        if a.outcome == Outcome::Unsolvable {
            assert_eq!(b.outcome, Outcome::Unsolvable);
            assert_eq!(a.positions, b.positions, "deal {deal}");
        }
    }
}

#[test]
fn undecided_when_the_budget_runs_out() {
    let mut s = Solver::new();
    let r = s
        .search(
            &Layout::deal(11982).unwrap(),
            4,
            Strategy::Prove,
            Limits {
                max_positions: 1000,
                max_millis: None,
            },
        )
        .unwrap();
    assert_eq!(r.outcome, Outcome::Undecided);
    assert!(r.positions <= 1000);
}

#[test]
fn first_deals_solve_with_four_cells_and_replay() {
    let mut s = Solver::new();
    for deal in 1..=200u64 {
        let layout = Layout::deal(deal).unwrap();
        let r = s
            .search(&layout, 4, Strategy::Solve, Limits::default())
            .unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
        replay(&layout, 4, &r.solution).unwrap();
    }
}

#[test]
fn replay_rejects_illegal_lines() {
    let layout = Layout::deal(1).unwrap();
    let mut s = Solver::new();
    let r = s
        .search(&layout, 4, Strategy::Solve, Limits::default())
        .unwrap();
    // Dropping the last player move leaves the game unfinished.
    let mut short = r.solution.clone();
    while short.last().is_some_and(|m| m.auto) {
        short.pop();
    }
    short.pop();
    assert!(replay(&layout, 4, &short).is_err());
    // A move from an empty free cell.
    let bad = [SolutionMove {
        mv: fccore::Move {
            from: 8,
            to: 0,
            count: 1,
        },
        auto: false,
    }];
    assert!(replay(&layout, 4, &bad)
        .unwrap_err()
        .reason
        .contains("empty"));
    // The same line with fewer cells than it uses fails somewhere.
    assert!(replay(&layout, 1, &r.solution).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random legal play from random deals: links and keys stay consistent, decoding a key gives the
    /// same canonical position, and every generated move (with its automatic moves) is accepted by the
    /// independent replay.
    #[test]
    fn random_play_keeps_the_rules(deal in 1u64..=fccore::MAX_DEAL, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..120)) {
        let layout = Layout::deal(deal).unwrap();
        let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
        let mut line = Vec::new();
        let mut log = Vec::new();
        p.settle(Some(&mut log));
        line.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        let mut moves = Vec::new();
        for pick in picks {
            p.check_invariants(&origin).map_err(TestCaseError::fail)?;
            let q = Position::from_key(p.key(), &origin, cells as u8);
            prop_assert_eq!(q.key(), p.key());
            q.check_invariants(&origin).map_err(TestCaseError::fail)?;
            p.moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            let m = moves[pick as usize % moves.len()];
            p.apply(m, &origin);
            line.push(SolutionMove { mv: m, auto: false });
            p.settle(Some(&mut log));
            line.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        }
        // The line is legal move by move: only the final "won" check may fail.
        if let Err(e) = replay(&layout, cells, &line) {
            prop_assert_eq!(e.index, line.len(), "{}", e.reason);
            prop_assert!(!p.is_won());
        }
        let _ = FOUNDATION;
    }
}
