//! The lean prover and exact classification: the same rules as `Position` (children, sorted test),
//! exact reachable-set counts, lines that replay, budgets that end undecided, known minimum cells.

use fccore::replay;
use fccore::{classify, ClassifyLimits};
use fccore::{Key, Layout, Position};
use fccore::{Limits, Outcome, Solver, Strategy};
use fccore::{Prover, Rules, Thread};
use proptest::prelude::*;

fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

fn sorted_keys(mut v: Vec<Key>) -> Vec<Key> {
    v.sort_unstable();
    v.dedup();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Random play: the prover's compact positions decode from the key alone and give exactly the
    /// children (as canonical keys) that `Position` gives, and the same sorted test.
    #[test]
    fn lean_children_match_position(deal in 1u64..=1_000_000, cells in 0usize..=8, picks in proptest::collection::vec(any::<u16>(), 1..200)) {
        let layout = Layout::deal(deal).unwrap();
        let rules = Rules::new(&layout, cells);
        let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
        p.settle(None);
        let mut moves = Vec::new();
        let mut lean_kids = Vec::new();
        for pick in picks {
            p.moves(&mut moves);
            let theirs = sorted_keys(moves.iter().map(|&m| {
                let mut q = p;
                q.apply(m, &origin);
                q.settle(None);
                *q.key()
            }).collect());
            let lean = rules.decode(p.key());
            prop_assert_eq!(lean.key(), p.key());
            rules.children(&lean, &mut lean_kids);
            prop_assert_eq!(sorted_keys(lean_kids.clone()), theirs);
            prop_assert_eq!(rules.is_sorted(p.key()), p.is_sorted());
            if moves.is_empty() {
                break;
            }
            let m = moves[pick as usize % moves.len()];
            p.apply(m, &origin);
            p.settle(None);
        }
    }
}

#[test]
fn deal_11982_with_4_cells_has_61643_positions() {
    let mut p = Prover::new();
    let r = p
        .prove(&Layout::deal(11982).unwrap(), 4, limits(u64::MAX))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Unsolvable);
    assert_eq!(r.positions, 61_643);
}

#[test]
fn proofs_count_the_reachable_set_as_prove_does() {
    // Any order of expansion reaches the same set: the portfolio, one ordered search, one in the move
    // generator's order and the portfolio cut short all count what `Strategy::Prove` counts.
    let portfolios = [
        Thread::PORTFOLIO.to_vec(),
        vec![Thread::PORTFOLIO[0]],
        vec![Thread {
            weights: None,
            quantum: 1,
        }],
    ];
    let mut solver = Solver::new();
    let mut provers: Vec<Prover> = portfolios
        .iter()
        .map(|t| {
            let mut p = Prover::new();
            p.threads = t.clone();
            p
        })
        .collect();
    // The portfolio handing every waiting position to its first thread early in the search.
    let mut early = Prover::new();
    early.portfolio_positions = 300;
    provers.push(early);
    let mut proofs = 0;
    for deal in 1..=60u64 {
        for k in [0usize, 1] {
            let layout = Layout::deal(deal).unwrap();
            let a = solver
                .search(&layout, k, Strategy::Prove, limits(3_000_000))
                .unwrap();
            for p in &mut provers {
                let b = p.prove(&layout, k, limits(3_000_000)).unwrap();
                match a.outcome {
                    Outcome::Unsolvable => {
                        assert_eq!(b.outcome, Outcome::Unsolvable, "deal {deal} k={k}");
                        assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                    }
                    Outcome::Solved => {
                        assert_eq!(b.outcome, Outcome::Solved, "deal {deal} k={k}");
                        replay(&layout, k, &b.solution).unwrap();
                    }
                    Outcome::Undecided => {}
                }
            }
            proofs += (a.outcome == Outcome::Unsolvable) as usize;
        }
    }
    assert!(proofs > 50);
}

#[test]
#[ignore = "about a minute and 1.1 GB: run with --ignored"]
fn deal_26063_with_1_cell_has_37426252_positions() {
    let mut p = Prover::new();
    let r = p
        .prove(&Layout::deal(26063).unwrap(), 1, limits(u64::MAX))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Unsolvable);
    assert_eq!(r.positions, 37_426_252);
}

#[test]
fn wins_found_by_the_prover_replay() {
    let mut p = Prover::new();
    for deal in 1..=40u64 {
        let layout = Layout::deal(deal).unwrap();
        let r = p.prove(&layout, 4, limits(5_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
        replay(&layout, 4, &r.solution).unwrap();
        assert!(r.player_moves() > 0);
    }
    // Solvable with few cells (SPEC §6): found by the prover, and the line replays.
    for (deal, k) in [(1u64, 3usize), (2, 1), (3, 2), (164, 0), (617, 4)] {
        let layout = Layout::deal(deal).unwrap();
        let r = p.prove(&layout, k, limits(50_000_000)).unwrap();
        assert_eq!(r.outcome, Outcome::Solved, "deal {deal} k={k}");
        replay(&layout, k, &r.solution).unwrap();
    }
    // A position that is won already, and one that is sorted: lines of zero or more moves that replay.
    let mut layout = Layout::deal(1).unwrap();
    layout.columns = vec![vec![]; 8];
    layout.foundations = [13; 4];
    let r = p.prove(&layout, 0, limits(10)).unwrap();
    assert_eq!((r.outcome, r.player_moves()), (Outcome::Solved, 0));
}

#[test]
fn budgets_give_undecided_never_unsolvable() {
    let mut p = Prover::new();
    let layout = Layout::deal(11982).unwrap();
    for cap in [1u64, 2, 50, 1000, 61_642] {
        let r = p.prove(&layout, 4, limits(cap)).unwrap();
        assert_eq!(r.outcome, Outcome::Undecided, "cap {cap}");
        assert!(r.positions <= cap);
    }
    let r = p
        .prove(
            &layout,
            4,
            Limits {
                max_positions: u64::MAX,
                max_millis: Some(0),
            },
        )
        .unwrap();
    assert_eq!(r.outcome, Outcome::Undecided);
    p.max_memory = Some(1);
    let r = p.prove(&layout, 4, limits(u64::MAX)).unwrap();
    assert_eq!(r.outcome, Outcome::Undecided);
    p.max_memory = None;
    // The prover is reusable after budgets: a full proof again.
    let r = p.prove(&layout, 4, limits(u64::MAX)).unwrap();
    assert_eq!((r.outcome, r.positions), (Outcome::Unsolvable, 61_643));
}

#[test]
fn classify_known_minimum_cells() {
    for (deal, m) in [(1u64, 3usize), (2, 1), (3, 2), (164, 0), (617, 4)] {
        let layout = Layout::deal(deal).unwrap();
        let c = classify(&layout, 4, ClassifyLimits::default()).unwrap();
        assert_eq!(c.min_cells(), Some(m), "deal {deal}: {c:?}");
        assert_eq!((c.lower, c.upper), (m, Some(m)));
        // The line with m cells replays; the proof with m - 1 cells is there (monotonicity does the rest).
        let solved = c.searches.iter().find(|s| s.cells == m).unwrap();
        assert_eq!(solved.result.outcome, Outcome::Solved);
        replay(&layout, m, &solved.result.solution).unwrap();
        if m > 0 {
            let proof = c.searches.iter().find(|s| s.cells == m - 1).unwrap();
            assert_eq!(proof.result.outcome, Outcome::Unsolvable);
        }
        assert!(c.searches.windows(2).all(|w| w[0].cells < w[1].cells));
    }
}

#[test]
fn classify_11982_needs_5_cells() {
    let layout = Layout::deal(11982).unwrap();
    let c = classify(&layout, 4, ClassifyLimits::default()).unwrap();
    assert_eq!((c.lower, c.upper, c.min_cells()), (5, None, None));
    let proof = c.searches.iter().find(|s| s.cells == 4).unwrap();
    assert_eq!(
        (proof.result.outcome, proof.result.positions),
        (Outcome::Unsolvable, 61_643)
    );
    let c = classify(&layout, 5, ClassifyLimits::default()).unwrap();
    assert_eq!(c.min_cells(), Some(5));
}

#[test]
fn classify_budget_leaves_bounds() {
    // Deal 1 needs 3 cells; its 2-cell proof has 70,882 positions. A smaller prover budget leaves the
    // lower bound open, never a wrong minimum.
    let layout = Layout::deal(1).unwrap();
    let c = classify(
        &layout,
        4,
        ClassifyLimits {
            solve_positions: 1000,
            max_positions: 5000,
            ..ClassifyLimits::default()
        },
    )
    .unwrap();
    assert_eq!(c.min_cells(), None);
    assert!(c.lower <= 2, "{c:?}");
    assert!(!matches!(c.upper, Some(u) if u < 3), "{c:?}");
    assert!(c
        .searches
        .iter()
        .any(|s| s.result.outcome == Outcome::Undecided));
}

#[test]
fn classify_proves_below_a_cell_count_left_open() {
    // Deal 1's proof with 2 cells has 70,882 positions, with 1 cell 63. A budget of 5,000 leaves the
    // 2-cell count open, and the 1-cell proof below it still gives the lower bound: 2 or 3 cells.
    let layout = Layout::deal(1).unwrap();
    let c = classify(
        &layout,
        4,
        ClassifyLimits {
            max_positions: 5000,
            ..ClassifyLimits::default()
        },
    )
    .unwrap();
    assert_eq!(
        (c.lower, c.upper, c.min_cells()),
        (2, Some(3), None),
        "{c:?}"
    );
    let outcome = |k: usize| {
        let s = c.searches.iter().find(|s| s.cells == k).unwrap();
        (s.result.outcome, s.result.positions)
    };
    assert_eq!(outcome(1), (Outcome::Unsolvable, 63));
    assert_eq!(outcome(2).0, Outcome::Undecided);
    assert_eq!(outcome(3).0, Outcome::Solved);
}

/// A won position reached by the layered search comes with a line to it, found again backwards through
/// the seeds kept on disk, and the line replays. Positions: a deal's columns without the cards below
/// eight, which are home.
#[test]
fn layered_wins_come_with_lines() {
    use fccore::{prove_layered, LayeredConfig, LayeredOutcome};
    let mut lines = 0;
    for deal in 1..=12u64 {
        let mut layout = Layout::deal(deal).unwrap();
        for col in layout.columns.iter_mut() {
            col.retain(|&c| fccore::rank(c) >= 7);
        }
        layout.foundations = [7; 4];
        for k in [0usize, 1] {
            // Spill files every 100 seeds: most steps back read a kept layer from disk. Two threads
            // for the even deals: the line runs through groups either searched.
            let threads = 2 - deal as usize % 2;
            let config = LayeredConfig {
                flush_keys: Some(100),
                threads,
                ..LayeredConfig::default()
            };
            let r = prove_layered(&layout, k, limits(2_000_000), &config).unwrap();
            if r.outcome != LayeredOutcome::Won {
                continue;
            }
            assert!(r.chain.len() > 3, "deal {deal} k={k}: {r:?}");
            let rules = fccore::Rules::new(&layout, k);
            let line = fccore::checked_line(&layout, k, &rules, r.chain, "layered")
                .unwrap_or_else(|e| panic!("deal {deal} k={k}: {e}"));
            fccore::replay(&layout, k, &line).unwrap();
            lines += 1;
        }
    }
    assert!(lines >= 15, "{lines} lines");
}

/// The layered proof reaches the same set as the depth-first prover, holds fewer positions at once, and
/// says won where a line exists.
#[test]
fn layered_proofs_count_what_the_prover_counts() {
    use fccore::{prove_layered, LayeredConfig, LayeredOutcome};
    let flushing = |flush: usize, threads: usize| LayeredConfig {
        flush_keys: Some(flush),
        threads,
        ..LayeredConfig::default()
    };
    let layout = Layout::deal(11982).unwrap();
    let r = prove_layered(&layout, 4, limits(u64::MAX), &LayeredConfig::default()).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
    assert_eq!(r.positions, 61_643);
    assert!(r.peak_positions < r.positions / 4, "{r:?}");
    // The seeds of later layers go through spill files (written every 500 keys here).
    let r = prove_layered(&layout, 4, limits(u64::MAX), &flushing(500, 1)).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
    assert_eq!(r.positions, 61_643);
    assert!(r.peak_disk > 0, "{r:?}");
    // Threads share each layer's groups out: the same count, whatever their number.
    for threads in [2, 3] {
        let r = prove_layered(&layout, 4, limits(u64::MAX), &flushing(500, threads)).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
    }
    let mut prover = Prover::new();
    let mut proofs = 0;
    for deal in 1..=30u64 {
        for k in [0usize, 1] {
            let layout = Layout::deal(deal).unwrap();
            let a = prover.prove(&layout, k, limits(500_000)).unwrap();
            // One thread for odd deals, two for even ones.
            let threads = 2 - deal as usize % 2;
            let b = prove_layered(&layout, k, limits(500_000), &flushing(5000, threads)).unwrap();
            match a.outcome {
                Outcome::Unsolvable => {
                    assert_eq!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
                    assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                    proofs += 1;
                }
                Outcome::Solved => {
                    assert_ne!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
                    if b.outcome == LayeredOutcome::Won {
                        // The line to the won position, found again backwards through the kept
                        // seeds, replays from the deal.
                        let rules = fccore::Rules::new(&layout, k);
                        let line = fccore::checked_line(&layout, k, &rules, b.chain, "layered")
                            .unwrap_or_else(|e| panic!("deal {deal} k={k}: {e}"));
                        fccore::replay(&layout, k, &line).unwrap();
                    }
                }
                Outcome::Undecided => {}
            }
        }
    }
    assert!(proofs > 20, "{proofs} proofs");
    // A late position, tens to kings stacked the wrong way up in four columns: won without cells.
    let late = Layout {
        columns: (0..4u8)
            .map(|s| (9..=12u8).map(|r| fccore::make_card(r, s)).collect())
            .collect(),
        cells: vec![],
        foundations: [9; 4],
        ..Layout::default()
    };
    assert_eq!(
        prover.prove(&late, 0, limits(u64::MAX)).unwrap().outcome,
        Outcome::Solved
    );
    let r = prove_layered(&late, 0, limits(u64::MAX), &LayeredConfig::default()).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Won);
    let rules = fccore::Rules::new(&late, 0);
    let line = fccore::checked_line(&late, 0, &rules, r.chain, "layered").unwrap();
    assert!(!line.is_empty());

    // Budgets end undecided, never unsolvable.
    let deal = Layout::deal(11982).unwrap();
    let r = prove_layered(&deal, 4, limits(1000), &LayeredConfig::default()).unwrap();
    assert!(matches!(r.outcome, LayeredOutcome::Undecided(_)));
    let one_byte = LayeredConfig {
        max_memory: Some(1),
        ..LayeredConfig::default()
    };
    let r = prove_layered(&deal, 4, limits(u64::MAX), &one_byte).unwrap();
    assert!(matches!(r.outcome, LayeredOutcome::Undecided(_)));
}
