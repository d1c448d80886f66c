//! Exact classification of one deal (SPEC §4): the least number of free cells that solves it, proven.
//!
//! Two engines take turns: a short heuristic solve ([`Strategy::Solve`], complete too, so that a small
//! reachable set ends as a proof) and the lean prover ([`Prover`]), which decides a cell count either
//! way. Solvability is monotone in the number of cells, so only two facts are needed for an exact
//! answer: a line with `m` cells and a proof that `m − 1` cells are not enough. The order is:
//!
//! 1. short solves, starting at [`ClassifyLimits::start`] cells (the commonest minimum) and going down
//!    while they succeed, or up until one does: this finds the least cell count `u` a short solve wins;
//! 2. with `u − 1` cells, a longer heuristic solve ([`ClassifyLimits::middle_positions`]), a first
//!    proof ([`ClassifyLimits::first_proof_positions`]), beams ([`ClassifyLimits::beams`]), then the
//!    prover's cascade: a proof ends the search (`m = u`); a line found lowers `u` and the search goes
//!    on with one cell fewer.
//!
//! When the prover stops at its memory ([`Prover::max_memory`]) or at
//! [`crate::cascade::LEAN_POSITIONS`] before its position budget, larger beams and a heuristic solve
//! look for a line, then the layered proof ([`crate::layered`]) takes over the cell count: it holds
//! fewer positions at once ([`crate::cascade::prove_bounded`]). `FCANALYZE_TRACE=1` prints each
//! search's step to stderr.
//!
//! Cell counts settled by monotonicity are never searched. A budget hit leaves proven bounds only.
//!
//! The lines found are those of whichever search won, up to thousands of moves: the line with the least
//! cells (the one tables store) is shortened ([`crate::shorten`], within [`ClassifyLimits::shorten`])
//! before it is returned, and searched for again by the beams, then shortened wider, when it stays long
//! ([`short_line`]); the lines with more cells are left as found.

use std::time::Instant;

use crate::beam::beam;
use crate::cascade::{prove_bounded, trace};
use crate::error::Result;
use crate::layout::Layout;
use crate::limits::Limits;
use crate::outcome::{Outcome, SearchResult, SolutionMove};
use crate::prover::Prover;
use crate::shorten::{Shortener, Shortening};
use crate::solver::{Solver, Strategy};

/// The search that settled one cell count.
#[derive(Clone, Debug)]
pub struct CellsResult {
    pub cells: usize,
    /// The deciding search's result (its `elapsed_ms` covers every search made with these cells).
    pub result: SearchResult,
    /// Whether the result comes from the prover (otherwise from a short solve).
    pub proved: bool,
}

/// Budgets and tuning of a classification.
#[derive(Clone, Copy, Debug)]
pub struct ClassifyLimits {
    /// Most positions of a short solve.
    pub solve_positions: u64,
    /// Most positions of the longer heuristic solve tried before each proof (0: none).
    pub middle_positions: u64,
    /// Most positions of the prover's first try, after the longer heuristic solve and before the beams
    /// (0: none).
    pub first_proof_positions: u64,
    /// Most positions of one prover search (a cell count that needs more stays undecided).
    pub max_positions: u64,
    /// Most milliseconds of one search, if any.
    pub max_millis: Option<u64>,
    /// The cell count the short solves start at.
    pub start: usize,
    /// Short solves with the prover's portfolio (its depth-first searches) rather than the heuristic
    /// solver.
    pub short_prover: bool,
    /// The beams ([`crate::beam`]) tried after the longer heuristic solve and before each proof: width
    /// and most positions of each, in order.
    pub beams: &'static [(usize, u64)],
    /// The shortening of the line with the least cells (`None`: the line as its search found it).
    pub shorten: Option<Shortening>,
}

/// The shortening of [`ClassifyLimits::default`]: a larger budget than a bulk run's (a classification
/// costs far more than its line's shortening), for the long lines of few cells, with the short
/// search's weights. On 400 lines of results/32k's deals table (a random sample), the mean went from
/// 90.1 to 42.6 moves, the longest to 142, for 23 ms of CPU a line (50,000 positions: 41.0, 66 ms);
/// its 12 longest lines (1,057 to 8,305 moves) to 43-311. With the bulk weights
/// ([`crate::shorten::WEIGHTS`]) the sample's mean was the same (42.4) but two of those 12 kept 2,079
/// and 523 moves.
pub const SHORTEN: Shortening = Shortening {
    width: 10,
    max_positions: 20_000,
    weights: [1, 4, 1, 2, -3, 3, 0, 0, 0, 2, 0, 0],
};

/// The budgets of the longer heuristic solve and of the first proof in [`ClassifyLimits::default`].
/// Proofs of a few million positions used to come after a heuristic solve of 500,000 positions and the
/// two beams ([`BEAMS`]), which cost more than the proof: deal 10238 with 1 cell (734,018 positions)
/// spent 0.5 s in the solve and 1.1 s in the beams before a proof of 0.6 s. The prover, at 0.7-0.8 µs
/// a position against 1.0-1.3 µs for the others, also finds most of their lines within a few million.
/// On 150 deals drawn among those of 1-32,000 a search of which took 0.1-100 s in results/32k (2,203
/// such deals), a classification took 0.88-0.93 of the time (solver 45.8 million positions → 19.0,
/// beams 45.1 → 16.5, prover 100.8 → 155.0); on 1,500 deals drawn among the other 29,788, 1.04-1.08;
/// the same minimum cells, counts and line lengths give or take a move. A solve of 50,000 took 0.79-0.80
/// and 1.06-1.07, but some lines it misses cost the prover seconds where the solve of 100,000 finds
/// them at once (deal 9 with 2 cells: 63,222 positions; BENCHMARKS.md, "Other measurements").
pub const MIDDLE_POSITIONS: u64 = 100_000;
/// See [`MIDDLE_POSITIONS`].
pub const FIRST_PROOF_POSITIONS: u64 = 2_000_000;

/// Player moves past which a classification's shortened line is searched for again ([`short_line`]).
pub const LONG_LINE: usize = 150;

/// The least width and budget of positions with which [`short_line`] shortens a line that is still
/// past [`LONG_LINE`] after the beams. The four stored lines of results/32k past 150 moves at 5de4b6b
/// (the beams found none shorter) each took one: deal 12284 with 1 cell 275 moves → 78 (3.1 s),
/// 15247 with 2 cells 250 → 67 (1.7 s), 30780 with 2 cells 217 → 48 (1.4 s), 15329 with 1 cell 161 →
/// 56 (1.6 s), on a core shared with the 1m run; a width of 10 within 200,000 positions left 136, 92,
/// 49 and 67, and 1,000 within 10 million 55, 64, 48 and 54 in 6-14 s.
pub const LONG_SHORTEN: (usize, u64) = (100, 2_000_000);

/// The beams of [`ClassifyLimits::default`]. On deals 1-19,000 the prover solved 90 cell counts only
/// after more than a million positions (5,240 s together, some after 250 million): a beam of 10,000 or
/// one of 30,000 wins 11 of the 14 costliest within 1.3 million. A beam that fails costs up to its
/// budget: on a proof of 2.6 million positions (deal 2257, 1 cell), 3.7 s, a 30,000 beam up to 4.5
/// million positions added 6.5 s, so its budget is 1.5 million.
pub const BEAMS: &[(usize, u64)] = &[(10_000, 1_500_000), (30_000, 1_500_000)];

impl Default for ClassifyLimits {
    fn default() -> Self {
        ClassifyLimits {
            solve_positions: 20_000,
            middle_positions: MIDDLE_POSITIONS,
            first_proof_positions: FIRST_PROOF_POSITIONS,
            max_positions: 400_000_000,
            max_millis: None,
            start: 2,
            short_prover: false,
            beams: BEAMS,
            shorten: Some(SHORTEN),
        }
    }
}

/// The classification of one deal: the per-cell-count searches and the proven bounds.
#[derive(Clone, Debug)]
pub struct Classification {
    /// One entry per cell count searched, by cell count.
    pub searches: Vec<CellsResult>,
    /// The deal is proven unsolvable with fewer cells than this.
    pub lower: usize,
    /// The deal is solved with this many cells (`None` if not solved up to the most cells searched).
    pub upper: Option<usize>,
}

impl Classification {
    /// The exact minimum number of cells, when proven.
    pub fn min_cells(&self) -> Option<usize> {
        self.upper.filter(|&u| u == self.lower)
    }
}

/// A reusable classifier: keeps the solver's and the prover's tables from one deal to the next.
#[derive(Default)]
pub struct Classifier {
    pub solver: Solver,
    pub prover: Prover,
    /// Where layered proofs keep resumable files (a directory per cell count, `cells-K`): a
    /// classification killed in the middle of one goes on from its last checkpoint when run again with
    /// the same directory. `None`: spill files in `TMPDIR`, not resumable.
    pub checkpoint_dir: Option<std::path::PathBuf>,
    /// Shortens the line with the least cells ([`ClassifyLimits::shorten`]).
    pub shortener: Shortener,
}

impl Classifier {
    pub fn new() -> Classifier {
        Classifier::default()
    }

    /// Classify `layout` with 0..=`max_cells` free cells.
    pub fn classify(
        &mut self,
        layout: &Layout,
        max_cells: usize,
        limits: ClassifyLimits,
    ) -> Result<Classification> {
        layout.validate(max_cells)?;
        let mut slots: Vec<Option<CellsResult>> = vec![None; max_cells + 1];
        // A position with cards in its free cells needs at least that many cells to be played at all.
        let lower = layout
            .cells
            .iter()
            .filter(|&&c| c != crate::card::NONE)
            .count();
        // 1. Short solves: the least cell count they win with.
        let (mut lower, mut upper) =
            self.short_solves(layout, max_cells, &limits, lower, &mut slots)?;
        // 2. The prover just below the least solved cell count (or at the most cells), downwards; below
        // a cell count a budget left open too (`open`), for the lower bound: a deal left undecided with
        // k cells but proven unsolvable with k - 1 is known to need k or more.
        let mut open: Option<usize> = None;
        loop {
            let k = match (open, upper) {
                (Some(o), _) if o > lower => o - 1,
                (Some(_), _) => break,
                (None, Some(u)) if u > lower => u - 1,
                (None, None) if lower <= max_cells => max_cells,
                _ => break,
            };
            match self.decide(layout, k, &limits, &mut slots)? {
                Outcome::Solved => (upper, open) = (Some(k), None),
                Outcome::Unsolvable => lower = k + 1,
                Outcome::Undecided => open = Some(k),
            }
        }
        let mut searches = kept_searches(slots, lower, upper);
        if let (Some(budget), Some(u)) = (limits.shorten, upper) {
            if let Some(c) = searches.iter_mut().find(|c| c.cells == u) {
                let (line, searched_ms) = short_line(
                    &mut self.shortener,
                    layout,
                    u,
                    &c.result.solution,
                    budget,
                    limits.beams,
                )?;
                c.result.solution = line;
                c.result.elapsed_ms += searched_ms;
            }
        }
        Ok(Classification {
            searches,
            lower,
            upper,
        })
    }

    /// The short solves, from [`ClassifyLimits::start`] cells down while they win, or up until one
    /// does, `lower` the cells the layout needs at least: the proven bounds then.
    fn short_solves(
        &mut self,
        layout: &Layout,
        max_cells: usize,
        limits: &ClassifyLimits,
        mut lower: usize,
        slots: &mut [Option<CellsResult>],
    ) -> Result<(usize, Option<usize>)> {
        let mut upper: Option<usize> = None;
        let start = limits.start.clamp(lower, max_cells);
        match self.short_solve(layout, start, limits, slots)? {
            Outcome::Solved => {
                upper = Some(start);
                for k in (lower..start).rev() {
                    match self.short_solve(layout, k, limits, slots)? {
                        Outcome::Solved => upper = Some(k),
                        Outcome::Unsolvable => {
                            lower = k + 1;
                            break;
                        }
                        Outcome::Undecided => break,
                    }
                }
            }
            first => {
                if first == Outcome::Unsolvable {
                    lower = start + 1;
                }
                for k in start + 1..=max_cells {
                    match self.short_solve(layout, k, limits, slots)? {
                        Outcome::Solved => {
                            upper = Some(k);
                            break;
                        }
                        Outcome::Unsolvable => lower = k + 1,
                        Outcome::Undecided => {}
                    }
                }
            }
        }
        Ok((lower, upper))
    }

    /// A short solve with `k` cells (the heuristic solver's, or the prover's portfolio), kept in
    /// `slots[k]`.
    fn short_solve(
        &mut self,
        layout: &Layout,
        k: usize,
        limits: &ClassifyLimits,
        slots: &mut [Option<CellsResult>],
    ) -> Result<Outcome> {
        let solve_limits = Limits {
            max_positions: limits.solve_positions.min(limits.max_positions),
            max_millis: limits.max_millis,
        };
        let r = if limits.short_prover {
            self.prover.prove(layout, k, solve_limits)?
        } else {
            self.solver
                .search(layout, k, Strategy::Solve, solve_limits)?
        };
        trace("short-solve", k, &r);
        let outcome = r.outcome;
        slots[k] = Some(CellsResult {
            cells: k,
            result: r,
            proved: false,
        });
        Ok(outcome)
    }

    /// Decide `k` cells below the short solves: a longer heuristic solve, a first proof, the beams,
    /// then the prover's cascade, the first to decide answering; each adds its time to `slots[k]`.
    fn decide(
        &mut self,
        layout: &Layout,
        k: usize,
        limits: &ClassifyLimits,
        slots: &mut [Option<CellsResult>],
    ) -> Result<Outcome> {
        if limits.middle_positions > limits.solve_positions {
            // A longer heuristic solve first: it finds most of the lines the short solves missed
            // for a small part of the prover's cost, and finishes small proofs itself.
            let r = self.solver.search(
                layout,
                k,
                Strategy::Solve,
                Limits {
                    max_positions: limits.middle_positions.min(limits.max_positions),
                    max_millis: limits.max_millis,
                },
            )?;
            trace("middle-solve", k, &r);
            let outcome = put(slots, k, r, false);
            if outcome != Outcome::Undecided {
                return Ok(outcome);
            }
        }
        // The prover within a few million positions: most proofs of that size, and most lines the
        // beams would find, for less than the beams cost. When that is the whole budget and it runs
        // out, the prover's cascade below would make the same search: only the beams are left.
        let first = limits.first_proof_positions.min(limits.max_positions);
        let mut covered = false;
        if first > 0 {
            let r = self.prover.prove(
                layout,
                k,
                Limits {
                    max_positions: first,
                    max_millis: limits.max_millis,
                },
            )?;
            trace("first-proof", k, &r);
            covered = first == limits.max_positions
                && r.outcome == Outcome::Undecided
                && r.positions >= first;
            if covered {
                // The search that went furthest.
                put(slots, k, r, true);
            } else if let Some(outcome) = keep(slots, k, r, true) {
                return Ok(outcome);
            }
        }
        for &(width, positions) in limits.beams {
            let r = beam(
                layout,
                k,
                width,
                Limits {
                    max_positions: positions.min(limits.max_positions),
                    max_millis: limits.max_millis,
                },
            )?;
            trace("beam", k, &r);
            if let Some(outcome) = keep(slots, k, r, false) {
                return Ok(outcome);
            }
        }
        if covered {
            return Ok(Outcome::Undecided);
        }
        self.prove(layout, k, limits, slots)
    }

    /// The prover's cascade with `k` cells ([`prove_bounded`]), resumable in the checkpoint directory
    /// if any; kept in `slots[k]` as the deciding search.
    fn prove(
        &mut self,
        layout: &Layout,
        k: usize,
        limits: &ClassifyLimits,
        slots: &mut [Option<CellsResult>],
    ) -> Result<Outcome> {
        let prove_limits = Limits {
            max_positions: limits.max_positions,
            max_millis: limits.max_millis,
        };
        let checkpoint = self
            .checkpoint_dir
            .as_ref()
            .map(|d| d.join(format!("cells-{k}")));
        let r = prove_bounded(
            &mut self.prover,
            &mut self.solver,
            layout,
            k,
            prove_limits,
            checkpoint.as_deref(),
        )?;
        Ok(put(slots, k, r, true))
    }
}

/// The shortened line of a classification: `line` (a win with `ncells` cells) shortened within
/// `budget`. When it stays longer than [`LONG_LINE`] player moves, the beams `beams` look for another
/// line from the start, which is shortened too, and the shorter of the two is kept (the first on a tie);
/// a line still past [`LONG_LINE`] is then shortened again, wider and within more positions
/// ([`LONG_SHORTEN`]). Also the milliseconds of those searches (0 when they did not run). A line of the
/// prover's depth-first search runs to thousands of moves, which the budget cannot undo: in `make
/// results-32k` at f1ed65c the first proof (`ClassifyLimits::first_proof_positions`) found the line of
/// deal 23628 with 1 cell (1,901,485 positions), left at 1,980 moves, where the beams had found one of
/// 58, and 13 stored lines were past 150 moves (3 before the first proof, the longest 275).
pub fn short_line(
    shortener: &mut Shortener,
    layout: &Layout,
    ncells: usize,
    line: &[SolutionMove],
    budget: Shortening,
    beams: &[(usize, u64)],
) -> Result<(Vec<SolutionMove>, f64)> {
    let moves = |l: &[SolutionMove]| l.iter().filter(|m| !m.auto).count();
    let mut short = shortener.shorten(layout, ncells, line, budget)?;
    if moves(&short) <= LONG_LINE {
        return Ok((short, 0.0));
    }
    let mut searched_ms = 0.0;
    for &(width, positions) in beams {
        let limits = Limits {
            max_positions: positions,
            max_millis: None,
        };
        let r = beam(layout, ncells, width, limits)?;
        searched_ms += r.elapsed_ms;
        if r.outcome == Outcome::Solved {
            let other = shortener.shorten(layout, ncells, &r.solution, budget)?;
            if moves(&other) < moves(&short) {
                short = other;
            }
            break;
        }
    }
    if moves(&short) > LONG_LINE {
        let start = Instant::now();
        let (width, positions) = LONG_SHORTEN;
        let wide = Shortening {
            width: budget.width.max(width),
            max_positions: budget.max_positions.max(positions),
            ..budget
        };
        // Never longer than the line given.
        short = shortener.shorten(layout, ncells, &short, wide)?;
        searched_ms += start.elapsed().as_secs_f64() * 1e3;
    }
    Ok((short, searched_ms))
}

/// Put the result `r` of a search with `k` cells in `slots[k]` (`proved`: it comes from the prover),
/// with the time of the searches before it: its outcome.
fn put(slots: &mut [Option<CellsResult>], k: usize, mut r: SearchResult, proved: bool) -> Outcome {
    r.elapsed_ms += slots[k].as_ref().map_or(0.0, |c| c.result.elapsed_ms);
    let outcome = r.outcome;
    slots[k] = Some(CellsResult {
        cells: k,
        result: r,
        proved,
    });
    outcome
}

/// Keep the result `r` of a search with `k` cells ([`put`]) when it decided: its outcome. An undecided
/// search only adds its time to the one before it, or is kept when there is none.
fn keep(
    slots: &mut [Option<CellsResult>],
    k: usize,
    r: SearchResult,
    proved: bool,
) -> Option<Outcome> {
    match (r.outcome, slots[k].as_mut()) {
        (Outcome::Undecided, Some(c)) => {
            c.result.elapsed_ms += r.elapsed_ms;
            None
        }
        _ => Some(put(slots, k, r, proved)).filter(|&o| o != Outcome::Undecided),
    }
}

/// The searches that decided their cell count, and the undecided ones monotonicity does not settle.
fn kept_searches(
    slots: Vec<Option<CellsResult>>,
    lower: usize,
    upper: Option<usize>,
) -> Vec<CellsResult> {
    slots
        .into_iter()
        .flatten()
        .filter(|c| match c.result.outcome {
            Outcome::Solved | Outcome::Unsolvable => true,
            Outcome::Undecided => c.cells >= lower && !matches!(upper, Some(u) if c.cells >= u),
        })
        .collect()
}

/// Classify `layout` with 0..=`max_cells` free cells (a fresh [`Classifier`]; reuse one for many deals).
pub fn classify(
    layout: &Layout,
    max_cells: usize,
    limits: ClassifyLimits,
) -> Result<Classification> {
    Classifier::new().classify(layout, max_cells, limits)
}
