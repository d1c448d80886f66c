//! Shortening found lines: the result replays, is never longer, is much shorter on the fast solver's
//! lines, merges a card's two moves into one, cuts detours and the longest lines, and depends on the
//! budget only, not on the clock.

use fccore::replay;
use fccore::{shorten, Shortener, Shortening};
use fccore::{Layout, Limits, Outcome, Position, SearchResult, SolutionMove, Solver, Strategy};

/// The fast solver's line of `deal` with `cells` cells.
fn fast(deal: u64, cells: usize) -> SearchResult {
    let r = Solver::new()
        .search(
            &Layout::deal(deal).unwrap(),
            cells,
            Strategy::Solve,
            Limits::default(),
        )
        .unwrap();
    assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
    r
}

/// The classification of `layout` with up to `max_cells` cells, its lines as found (not shortened).
fn classified_as_found(layout: &Layout, max_cells: usize) -> fccore::Classification {
    let limits = fccore::ClassifyLimits {
        shorten: None,
        ..fccore::ClassifyLimits::default()
    };
    fccore::classify(layout, max_cells, limits).unwrap()
}

fn player_moves(line: &[SolutionMove]) -> usize {
    line.iter().filter(|m| !m.auto).count()
}

#[test]
fn the_fast_solvers_lines_get_much_shorter_and_replay() {
    let mut s = Shortener::new();
    let (mut before, mut after) = (0, 0);
    for deal in 1..=20 {
        let layout = Layout::deal(deal).unwrap();
        let r = fast(deal, 4);
        let line = s
            .shorten(&layout, 4, &r.solution, Shortening::default())
            .unwrap();
        assert!(replay(&layout, 4, &line).is_ok(), "deal {deal}");
        assert!(
            player_moves(&line) <= r.player_moves(),
            "deal {deal}: {} after {}",
            player_moves(&line),
            r.player_moves()
        );
        before += r.player_moves();
        after += player_moves(&line);
    }
    // 1,118 moves before, 761 after when written.
    assert!(
        after * 4 < before * 3,
        "{before} moves before, {after} after"
    );
}

#[test]
fn detours_are_merged_before_any_search() {
    // With no positions to search, only the merging of a card's two moves into one shortens: the
    // fast solver's 1,118 moves on deals 1-20 became 967 when written (cutting loops alone: 1,118).
    let none = Shortening {
        max_positions: 0,
        ..Shortening::default()
    };
    let (mut before, mut after) = (0, 0);
    for deal in 1..=20 {
        let layout = Layout::deal(deal).unwrap();
        let r = fast(deal, 4);
        let line = shorten(&layout, 4, &r.solution, none).unwrap();
        assert!(replay(&layout, 4, &line).is_ok(), "deal {deal}");
        assert!(player_moves(&line) <= r.player_moves(), "deal {deal}");
        before += r.player_moves();
        after += player_moves(&line);
    }
    assert!(
        after * 100 < before * 92,
        "{before} moves before, {after} after"
    );
}

#[test]
fn lines_with_few_cells() {
    // Deal 3 needs 2 cells and deal 164 none: the solver's lines are long, the beams fail more often.
    for (deal, cells) in [(3, 2), (164, 0), (1, 3)] {
        let layout = Layout::deal(deal).unwrap();
        let r = fast(deal, cells);
        let line = shorten(&layout, cells, &r.solution, fccore::CLASSIFY_SHORTEN).unwrap();
        assert!(replay(&layout, cells, &line).is_ok(), "deal {deal}");
        assert!(player_moves(&line) < r.player_moves(), "deal {deal}");
    }
}

/// A move from the settled `p` and the move that undoes it (a card put in a free cell and back onto a
/// card it fits on), if `p` has one.
fn detour(p: &Position, origin: &fccore::Origin) -> Option<(fccore::Move, fccore::Move)> {
    let mut moves = Vec::new();
    p.moves(&mut moves);
    moves.iter().find_map(|&there| {
        let mut q = *p;
        q.apply(there, origin);
        q.settle(None);
        let mut back = Vec::new();
        q.moves(&mut back);
        back.into_iter()
            .find(|&b| {
                let mut r = q;
                r.apply(b, origin);
                r.settle(None);
                r.key() == p.key()
            })
            .map(|b| (there, b))
    })
}

#[test]
fn a_detour_is_cut_even_without_a_budget() {
    // The first deal with a detour at the start: its line with the detour in front.
    let (deal, layout, mut p, origin, (there, back)) = (1..100)
        .find_map(|deal| {
            let layout = Layout::deal(deal).unwrap();
            let (mut p, origin) = Position::from_layout(&layout, 4).unwrap();
            p.settle(None);
            detour(&p, &origin).map(|d| (deal, layout, p, origin, d))
        })
        .expect("a deal with a detour");
    let r = fast(deal, 4);
    let lead = r.solution.iter().take_while(|m| m.auto).count();
    let mut line = r.solution[..lead].to_vec();
    for mv in [there, back] {
        let mut log = Vec::new();
        p.apply(mv, &origin);
        p.settle(Some(&mut log));
        line.push(SolutionMove { mv, auto: false });
        line.extend(log.into_iter().map(|mv| SolutionMove { mv, auto: true }));
    }
    line.extend_from_slice(&r.solution[lead..]);
    assert!(replay(&layout, 4, &line).is_ok());
    assert_eq!(player_moves(&line), r.player_moves() + 2);
    let none = Shortening {
        max_positions: 0,
        ..Shortening::default()
    };
    let out = shorten(&layout, 4, &line, none).unwrap();
    assert!(replay(&layout, 4, &out).is_ok());
    assert!(player_moves(&out) <= r.player_moves(), "deal {deal}");
}

#[test]
fn the_budget_decides_not_the_clock() {
    let layout = Layout::deal(617).unwrap();
    let r = fast(617, 4);
    let mut lengths = Vec::new();
    for max_positions in [0, 1, 50, 2_000, 20_000] {
        let budget = Shortening {
            max_positions,
            ..Shortening::default()
        };
        let a = shorten(&layout, 4, &r.solution, budget).unwrap();
        let b = Shortener::new()
            .shorten(&layout, 4, &r.solution, budget)
            .unwrap();
        assert_eq!(a, b, "budget {max_positions}");
        assert!(replay(&layout, 4, &a).is_ok());
        lengths.push(player_moves(&a));
    }
    assert!(
        lengths.iter().all(|&n| n <= r.player_moves()),
        "{lengths:?}"
    );
    assert!(
        lengths[4] * 3 < r.player_moves() * 2,
        "{lengths:?} after {}",
        r.player_moves()
    );
}

#[test]
fn a_line_that_does_not_win_is_refused() {
    let layout = Layout::deal(1).unwrap();
    let r = fast(1, 4);
    let half = &r.solution[..r.solution.len() / 2];
    assert!(shorten(&layout, 4, half, Shortening::default()).is_err());
}

#[test]
fn a_classification_shortens_the_line_with_the_least_cells() {
    // Deal 3 needs 2 cells (a proof with 1); its line with 2 cells is shortened, nothing else changes.
    let layout = Layout::deal(3).unwrap();
    let found = classified_as_found(&layout, 4);
    let short = fccore::classify(&layout, 4, fccore::ClassifyLimits::default()).unwrap();
    assert_eq!((short.lower, short.upper), (2, Some(2)));
    assert_eq!((found.lower, found.upper), (2, Some(2)));
    assert_eq!(found.searches.len(), short.searches.len());
    for (a, b) in found.searches.iter().zip(&short.searches) {
        assert_eq!((a.cells, a.result.outcome), (b.cells, b.result.outcome));
        assert_eq!(a.result.positions, b.result.positions);
        if b.cells == 2 {
            assert!(replay(&layout, 2, &b.result.solution).is_ok());
            assert!(
                b.result.player_moves() < a.result.player_moves(),
                "{} after {}",
                b.result.player_moves(),
                a.result.player_moves()
            );
        } else {
            assert_eq!(a.result.solution, b.result.solution);
        }
    }
}

/// Deal `deal` needs `cells` cells and its line as found stays past 150 moves after the
/// classification's shortening: its layout and the line `classify_short_line` makes of that line
/// (after searches of its own), replayed.
fn long_line_made_short(deal: u64, cells: usize) -> (Layout, Vec<SolutionMove>) {
    let layout = Layout::deal(deal).unwrap();
    let found = classified_as_found(&layout, cells);
    assert_eq!((found.lower, found.upper), (cells, Some(cells)));
    let line = &found.searches.last().unwrap().result.solution;
    let budget = fccore::CLASSIFY_SHORTEN;
    let shortened = shorten(&layout, cells, line, budget).unwrap();
    assert!(player_moves(&shortened) > fccore::CLASSIFY_LONG_LINE);
    let (short, ms) = fccore::classify_short_line(
        &mut Shortener::new(),
        &layout,
        cells,
        line,
        budget,
        fccore::CLASSIFY_BEAMS,
    )
    .unwrap();
    assert!(ms > 0.0);
    assert!(replay(&layout, cells, &short).is_ok());
    (layout, short)
}

#[test]
fn a_line_the_beams_leave_long_is_shortened_once_more_wider() {
    // Deal 15247 needs 2 cells, and the beams find no line with 2 cells: results/32k stored 250 moves
    // at 5de4b6b. The wider shortening (`LONG_SHORTEN`) takes it to a few dozen.
    let (_, short) = long_line_made_short(15247, 2);
    assert!(
        player_moves(&short) <= 100,
        "{} moves",
        player_moves(&short)
    );
}

#[test]
fn a_classification_searches_again_for_a_line_its_shortening_leaves_long() {
    // Deal 23628 needs 1 cell: the first proof finds its line with 1 cell, thousands of moves, which
    // the shortening's budget leaves far past 150; the classification's beams find another from the
    // start, shortened to a few dozen moves.
    let (layout, short) = long_line_made_short(23628, 1);
    assert!(player_moves(&short) <= 80, "{} moves", player_moves(&short));
    // A classification stores that line.
    let c = fccore::classify(&layout, 1, fccore::ClassifyLimits::default()).unwrap();
    assert_eq!(c.searches.last().unwrap().result.solution, short);
    // A line the shortening makes short enough is not searched for again.
    let line = fast(1, 4).solution;
    let budget = fccore::CLASSIFY_SHORTEN;
    let (short, ms) = fccore::classify_short_line(
        &mut Shortener::new(),
        &Layout::deal(1).unwrap(),
        4,
        &line,
        budget,
        fccore::CLASSIFY_BEAMS,
    )
    .unwrap();
    assert_eq!(
        (short, ms),
        (
            shorten(&Layout::deal(1).unwrap(), 4, &line, budget).unwrap(),
            0.0
        )
    );
}
