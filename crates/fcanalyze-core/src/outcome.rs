//! What a search ends in: always exactly one outcome, a value, never an error (SPEC §3).

use std::time::Instant;

use crate::position::Move;

/// The result kind of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A winning line was found (and replayed).
    Solved,
    /// Every reachable position was examined and none is won: a proof.
    Unsolvable,
    /// A budget (positions or time) ran out first.
    Undecided,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::Unsolvable => "unsolvable",
            Outcome::Undecided => "undecided",
        }
    }
}

/// One move of a solution, as played from the dealt position: automatic moves are included and marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolutionMove {
    pub mv: Move,
    pub auto: bool,
}

/// The answer of one search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub outcome: Outcome,
    /// Distinct canonical positions stored by the search (for a proof: the reachable set's size).
    pub positions: u64,
    /// The winning line when solved, from the given position (its own automatic moves first).
    pub solution: Vec<SolutionMove>,
    /// Wall-clock time of the search in milliseconds.
    pub elapsed_ms: f64,
    /// Which budget ran out, for undecided searches.
    pub exhausted: Option<Budget>,
}

/// The budgets a search can run out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    Positions,
    Time,
    /// The free disk space (the layered proof's spill files).
    Disk,
}

impl SearchResult {
    /// The result of a search that started at `start` and ends now.
    pub fn since(
        start: Instant,
        outcome: Outcome,
        positions: u64,
        solution: Vec<SolutionMove>,
        exhausted: Option<Budget>,
    ) -> SearchResult {
        SearchResult {
            outcome,
            positions,
            solution,
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
            exhausted,
        }
    }

    /// Moves a player makes: automatic moves not counted, a supermove counted once.
    pub fn player_moves(&self) -> usize {
        self.solution.iter().filter(|m| !m.auto).count()
    }
}
