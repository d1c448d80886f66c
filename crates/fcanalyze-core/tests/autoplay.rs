//! The rules of automatic moves as an option: under `Autoplay::Max` every card that fits its foundation
//! goes home at once and none goes home by hand; every search follows the layout's rules, its counts
//! are its own, and the independent replay holds lines to them.

use fccore::{prove_layered, replay, solve_short, LayeredConfig, LayeredOutcome};
use fccore::{Autoplay, Key, Layout, Position, SolutionMove, FOUNDATION};
use fccore::{Limits, Outcome, Prover, Rules, Solver, Strategy};
use proptest::prelude::*;

/// Deal 11982 with 4 free cells under max autoplay: every reachable position, none won. The same
/// count as under the safe rules: no reachable position has more than two cards home, and aces and twos
/// go home automatically under both rules (docs/rules.md).
const DEAL_11982_MAX: u64 = 61_643;

/// Reachable sets that the rules change, proven under max autoplay (deal, cells, positions), with the
/// count under the safe rules: 617 with 3 cells 13,582, deal 1 with 2 cells 70,882, 125 with 1 cell
/// 38,512. Deal 164 with no free cell is solvable under the safe rules but not under max autoplay: a
/// card that goes home at once may be one a column still needed.
const MAX_COUNTS: [(u64, usize, u64); 4] = [
    (617, 3, 13_214),
    (1, 2, 55_438),
    (125, 1, 17_023),
    (164, 0, 51_511),
];

fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

fn max_deal(n: u64) -> Layout {
    Layout::deal(n).unwrap().with_autoplay(Autoplay::Max)
}

/// Whether some exposed card of `p` (the top of a column or in a free cell) fits its foundation.
fn any_card_fits(p: &Position) -> bool {
    let f = p.foundations();
    let fits = |c: u8| c != fccore::NONE && f[fccore::suit(c) as usize] == fccore::rank(c);
    (0..8).any(|col| fits(p.top(col))) || (0..p.ncells()).any(|s| fits(p.cell(s)))
}

fn sorted_keys(mut v: Vec<Key>) -> Vec<Key> {
    v.sort_unstable();
    v.dedup();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random play under max autoplay: a settled position has no card that fits its foundation, so no
    /// move goes there by hand; positions rebuilt from keys keep the rules; the prover's compact rules
    /// give the same children; the line replays under max autoplay.
    #[test]
    fn max_settle_sends_every_fitting_card_home(deal in 1u64..=1_000_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..150)) {
        let layout = max_deal(deal);
        let rules = Rules::new(&layout, cells);
        let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
        prop_assert_eq!(p.autoplay(), Autoplay::Max);
        let mut line = Vec::new();
        let mut log = Vec::new();
        p.settle(Some(&mut log));
        line.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        let (mut moves, mut lean_kids) = (Vec::new(), Vec::new());
        for pick in picks {
            prop_assert!(!any_card_fits(&p));
            let q = Position::from_key(p.key(), &origin, cells as u8);
            prop_assert_eq!(q.autoplay(), Autoplay::Max);
            p.moves(&mut moves);
            prop_assert!(moves.iter().all(|m| m.to != FOUNDATION));
            let theirs = sorted_keys(moves.iter().map(|&m| {
                let mut q = p;
                q.apply(m, &origin);
                q.settle(None);
                *q.key()
            }).collect());
            rules.children(&rules.decode(p.key()), &mut lean_kids);
            prop_assert_eq!(sorted_keys(lean_kids.clone()), theirs);
            if moves.is_empty() {
                break;
            }
            let m = moves[pick as usize % moves.len()];
            let mut fast = p;
            fast.apply_settled(m, &origin);
            p.apply(m, &origin);
            line.push(SolutionMove { mv: m, auto: false });
            p.settle(Some(&mut log));
            line.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
            prop_assert_eq!(fast.key(), p.key());
        }
        // The line is legal move by move under max autoplay: only the final "won" check may fail.
        if let Err(e) = replay(&layout, cells, &line) {
            prop_assert_eq!(e.index, line.len(), "{}", e.reason);
        }
    }
}

/// Exhaustive counts under max autoplay: the same from the prover, the heuristic solver's exhaustive
/// mode and the layered proof; deal 11982's is its count under the safe rules, the others differ.
#[test]
fn exhaustive_counts_under_max_autoplay() {
    let cases = [(11982, 4, DEAL_11982_MAX)].into_iter().chain(MAX_COUNTS);
    for (deal, cells, count) in cases {
        let layout = max_deal(deal);
        let r = Prover::new()
            .prove(&layout, cells, limits(u64::MAX))
            .unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (Outcome::Unsolvable, count),
            "deal {deal}"
        );
        let s = Solver::new()
            .search(&layout, cells, Strategy::Prove, limits(50_000_000))
            .unwrap();
        assert_eq!(
            (s.outcome, s.positions),
            (Outcome::Unsolvable, count),
            "deal {deal}"
        );
        let l = prove_layered(&layout, cells, limits(u64::MAX), &LayeredConfig::default()).unwrap();
        assert_eq!(
            (l.outcome, l.positions),
            (LayeredOutcome::Unsolvable, count),
            "deal {deal}"
        );
        let safe = Prover::new()
            .prove(&Layout::deal(deal).unwrap(), cells, limits(u64::MAX))
            .unwrap();
        assert_eq!(safe.positions == count, deal == 11982, "deal {deal}");
    }
}

/// Every search's line under max autoplay replays under max autoplay, and has no foundation move by
/// hand; deal 11982 is solvable with 5 cells under max autoplay too.
#[test]
fn searches_under_max_autoplay_give_lines_that_replay() {
    for (deal, cells) in [(1u64, 4usize), (617, 4), (164, 1), (11982, 5), (2, 1)] {
        let layout = max_deal(deal);
        let runs = [
            Solver::new().search(&layout, cells, Strategy::Solve, limits(10_000_000)),
            Prover::new().prove(&layout, cells, limits(u64::MAX)),
            solve_short(&layout, cells, limits(2_000_000)),
        ];
        for r in runs {
            let r = r.unwrap();
            assert_eq!(r.outcome, Outcome::Solved, "deal {deal} k={cells}");
            replay(&layout, cells, &r.solution).unwrap();
            assert!(r.solution.iter().all(|m| m.auto || m.mv.to != FOUNDATION));
        }
    }
}

/// The replay holds a line to the layout's rules: a foundation move by hand is refused under max
/// autoplay, and a safe line with a card left to go home by hand is refused too.
#[test]
fn replay_refuses_lines_that_break_max_autoplay() {
    // Three suits home, spades to the queen: the king goes home by itself under either rules; by hand
    // it breaks max autoplay.
    let layout = Layout {
        columns: vec![vec![fccore::make_card(12, 3)]],
        foundations: [13, 13, 13, 12],
        ..Layout::default()
    };
    let by_hand = [SolutionMove {
        mv: fccore::Move {
            from: 0,
            to: FOUNDATION,
            count: 1,
        },
        auto: false,
    }];
    let e = replay(&layout.clone().with_autoplay(Autoplay::Max), 0, &by_hand).unwrap_err();
    assert_eq!(e.index, 0);
    assert!(e.reason.contains("by hand"), "{}", e.reason);
    // Deal 1's line under the safe rules sends cards home by hand or leaves some that fit in play.
    let layout = Layout::deal(1).unwrap();
    let r = Solver::new()
        .search(&layout, 4, Strategy::Solve, limits(10_000_000))
        .unwrap();
    replay(&layout, 4, &r.solution).unwrap();
    assert!(replay(&layout.with_autoplay(Autoplay::Max), 4, &r.solution).is_err());
}
