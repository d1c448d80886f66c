//! The short-line search: lines replay, budgets hold, lines are short, proofs only from complete searches.

use fccore::replay;
use fccore::SolutionMove;
use fccore::{solve_short, ShortConfig, ShortSolver};
use fccore::{Autoplay, Layout, Position, FOUNDATION};
use fccore::{Limits, Outcome, SearchResult, Solver, Strategy};

fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

fn short(deal: u64, cells: usize) -> SearchResult {
    solve_short(&Layout::deal(deal).unwrap(), cells, Limits::default()).unwrap()
}

/// A solver set to find shortest lines: A* on the number of blocked runs, which no move lowers by more
/// than one (an admissible estimate), going on until no shorter line can exist.
fn exact() -> ShortSolver {
    let mut s = ShortSolver::new();
    s.config.beam = 0;
    s.config.wg = 1;
    s.config.wh = 1;
    s.config.exact = true;
    s.config.fallback = false;
    s
}

#[test]
fn short_lines_replay_and_win() {
    for deal in [1, 2, 3, 164, 617, 1000] {
        let r = short(deal, 4);
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
        assert!(replay(&Layout::deal(deal).unwrap(), 4, &r.solution).is_ok());
        assert!(r.exhausted.is_none());
        assert!(
            r.player_moves() > 10 && r.player_moves() < 45,
            "deal {deal}: {}",
            r.player_moves()
        );
    }
}

#[test]
fn fewer_cells_and_proofs() {
    // Deal 3 needs 2 cells, deal 164 none, deal 1 three (so 2 cells: a proof), 11982 is unsolvable.
    for (deal, cells) in [(3, 2), (164, 0), (2, 1)] {
        let r = short(deal, cells);
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal} cells {cells}");
        assert!(replay(&Layout::deal(deal).unwrap(), cells, &r.solution).is_ok());
    }
    assert_eq!(short(1, 2).outcome, Outcome::Unsolvable);
    let r = short(11982, 4);
    assert_eq!(r.outcome, Outcome::Unsolvable);
    assert_eq!(
        r.positions, 61_643,
        "a proof reports the reachable set (SPEC §3)"
    );
    // Without the complete fallback, the beam alone never claims a proof.
    let mut s = ShortSolver::new();
    s.config.fallback = false;
    let r = s
        .solve(&Layout::deal(11982).unwrap(), 4, Limits::default())
        .unwrap();
    assert_eq!(r.outcome, Outcome::Undecided);
}

#[test]
fn budgets_give_the_best_line_so_far_or_undecided() {
    let layout = Layout::deal(5).unwrap();
    for cap in [1u64, 2, 100, 5_000, 50_000] {
        let r = solve_short(&layout, 4, limits(cap)).unwrap();
        assert!(r.positions <= cap, "cap {cap}: {} positions", r.positions);
        assert_ne!(r.outcome, Outcome::Unsolvable, "cap {cap}");
        match r.outcome {
            Outcome::Solved => assert!(replay(&layout, 4, &r.solution).is_ok()),
            _ => assert!(r.exhausted.is_some() && r.solution.is_empty()),
        }
    }
    let r = solve_short(&Layout::deal(11982).unwrap(), 4, limits(10_000)).unwrap();
    assert_eq!(r.outcome, Outcome::Undecided);
    let r = solve_short(
        &layout,
        4,
        Limits {
            max_positions: 10_000_000,
            max_millis: Some(0),
        },
    )
    .unwrap();
    assert_ne!(r.outcome, Outcome::Unsolvable);
    // The exact A* phase too: a budget hit gives undecided and a lower bound proven so far.
    let mut ex = exact();
    for cap in [2u64, 5_000] {
        let r = ex.solve(&Layout::deal(1).unwrap(), 4, limits(cap)).unwrap();
        assert_eq!(r.outcome, Outcome::Undecided);
        assert!(r.positions <= cap);
        assert!(ex.lower_bound <= 37, "deal 1 has a line of 37 moves");
    }
    assert!(
        ex.lower_bound >= 28,
        "at least the blocked runs of the deal"
    );
    // A budget hit after a first line keeps that line.
    let full = solve_short(&layout, 4, Limits::default()).unwrap();
    let mut s = ShortSolver::new();
    s.config.passes = 3;
    let r = s.solve(&layout, 4, limits(full.positions + 1_000)).unwrap();
    assert_eq!(r.outcome, Outcome::Solved);
    assert!(r.player_moves() <= full.player_moves());
}

#[test]
fn shorter_than_the_fast_solver() {
    let mut fast = Solver::new();
    let (mut sum_short, mut sum_fast) = (0, 0);
    for deal in 1..=15 {
        let layout = Layout::deal(deal).unwrap();
        let f = fast
            .search(&layout, 4, Strategy::Solve, Limits::default())
            .unwrap();
        let s = solve_short(&layout, 4, Limits::default()).unwrap();
        assert!(s.player_moves() <= f.player_moves(), "deal {deal}");
        sum_short += s.player_moves();
        sum_fast += f.player_moves();
    }
    assert!(
        sum_short * 3 < sum_fast * 2,
        "short {sum_short} fast {sum_fast}"
    );
}

#[test]
fn known_shortest_lines() {
    // Shortest lengths under SPEC §2 found by the exact A* (and matched by its lower bound).
    let mut ex = exact();
    for (deal, best) in [(18, 25), (28, 23), (6, 27)] {
        let layout = Layout::deal(deal).unwrap();
        let r = ex.solve(&layout, 4, limits(2_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved);
        assert_eq!(r.player_moves(), best, "deal {deal}");
        assert_eq!(ex.lower_bound, best as u32, "deal {deal}");
        assert!(replay(&layout, 4, &r.solution).is_ok());
        let s = solve_short(&layout, 4, Limits::default()).unwrap();
        assert!(
            s.player_moves() >= best && s.player_moves() <= best + 3,
            "deal {deal}: {} against {best}",
            s.player_moves()
        );
    }
}

#[test]
fn positions_other_than_deals() {
    // A position a few moves into deal 7, a sorted position and a won one.
    let deal = Layout::deal(7).unwrap();
    let (mut p, origin) = Position::from_layout(&deal, 4).unwrap();
    let mut moves = Vec::new();
    for _ in 0..5 {
        p.settle(None);
        p.moves(&mut moves);
        p.apply(moves[moves.len() / 2], &origin);
    }
    let layout = p.layout();
    let r = solve_short(&layout, 4, Limits::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Solved);
    assert!(replay(&layout, 4, &r.solution).is_ok());

    let mut cols = vec![vec![]; 8];
    for c in (0..52u8).rev() {
        cols[(c % 4) as usize].push(c);
    }
    let sorted = Layout {
        columns: cols,
        cells: vec![],
        foundations: [0; 4],
        ..Layout::default()
    };
    let r = solve_short(&sorted, 4, Limits::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Solved);
    assert!(replay(&sorted, 4, &r.solution).is_ok());
    assert!(r
        .solution
        .iter()
        .all(|m: &SolutionMove| m.mv.to == FOUNDATION));

    let won = Layout {
        columns: vec![],
        cells: vec![],
        foundations: [13; 4],
        ..Layout::default()
    };
    let r = solve_short(&won, 4, Limits::default()).unwrap();
    assert_eq!((r.outcome, r.player_moves()), (Outcome::Solved, 0));
}

#[test]
fn shortest_lines_under_max_autoplay() {
    // Under max autoplay only same-suit blocks are certain, so the bound is lower and still a bound:
    // the exact A* proves these lengths (its lower bound meets its line), the beam's lines are no
    // shorter, and the same deals take more moves under the safe rules.
    let mut ex = exact();
    for (deal, best) in [(2, 21), (3, 18)] {
        let layout = Layout::deal(deal).unwrap().with_autoplay(Autoplay::Max);
        let r = ex.solve(&layout, 4, limits(2_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved);
        assert_eq!(r.player_moves(), best, "deal {deal}");
        assert_eq!(ex.lower_bound, best as u32, "deal {deal}");
        assert!(replay(&layout, 4, &r.solution).is_ok());
        assert!(r.solution.iter().all(|m| m.auto || m.mv.to != FOUNDATION));
        let s = solve_short(&layout, 4, Limits::default()).unwrap();
        assert!(replay(&layout, 4, &s.solution).is_ok());
        assert!(
            s.player_moves() >= best && s.player_moves() <= best + 2,
            "deal {deal}: {} against {best}",
            s.player_moves()
        );
        assert!(
            s.player_moves() < short(deal, 4).player_moves(),
            "deal {deal}"
        );
    }
}

#[test]
fn beams_along_the_line_keep_or_shorten_it() {
    // Beams from positions along the best line only ever replace it by a shorter one.
    for autoplay in [Autoplay::Safe, Autoplay::Max] {
        let layout = Layout::deal(5).unwrap().with_autoplay(autoplay);
        let plain = solve_short(&layout, 4, Limits::default()).unwrap();
        let mut s = ShortSolver::new();
        s.config.tails = 4;
        let r = s.solve(&layout, 4, Limits::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Solved);
        assert!(replay(&layout, 4, &r.solution).is_ok());
        assert!(r.player_moves() <= plain.player_moves(), "{autoplay}");
        assert!(r.positions > plain.positions, "{autoplay}");
    }
}

#[test]
fn the_shortest_setting_proves_its_lines_or_a_bound() {
    // `solve --short --prove`: lines proven shortest under both rules (the lengths of the exact A*
    // above), and within a small budget a line with a bound below it, never above a shortest line.
    let mut s = ShortSolver::new();
    s.config = ShortConfig::shortest();
    for (deal, rules, best) in [(6, Autoplay::Safe, 27), (3, Autoplay::Max, 18)] {
        let layout = Layout::deal(deal).unwrap().with_autoplay(rules);
        let r = s.solve(&layout, 4, limits(5_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved);
        assert_eq!(
            (r.player_moves(), s.lower_bound),
            (best, best as u32),
            "deal {deal}"
        );
        assert!(replay(&layout, 4, &r.solution).is_ok());
    }
    // Deal 1 takes 37 moves at least (`exact` with 20 M positions); 300,000 prove less.
    let layout = Layout::deal(1).unwrap();
    let r = s.solve(&layout, 4, limits(300_000)).unwrap();
    assert_eq!(r.outcome, Outcome::Solved);
    assert!(replay(&layout, 4, &r.solution).is_ok());
    // At least the deal's blocked runs, at most the shortest line's length.
    assert!(
        s.lower_bound >= 28 && s.lower_bound <= 37,
        "{}",
        s.lower_bound
    );
    assert!(r.player_moves() >= 37);
}
