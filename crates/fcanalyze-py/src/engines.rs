//! The core's searches as the Python functions run them, in plain Rust (no Python values): the engines
//! of `solve` and `solve_deals`, a classification with its memory, checkpoint and threads, and the
//! successors of a position.

use std::path::PathBuf;

use fccore::Prover;
use fccore::SearchResult;
use fccore::{Classification, ClassifyLimits};
use fccore::{Error, Limits, Position, Solver, Strategy};
use fccore::{Layout, Move};

/// The engines of `solve` and `solve_deals`, kept from one deal to the next: the heuristic solver for
/// `strategy="solve"`, and for `strategy="prove"` the lean prover, followed within its memory by the
/// rest of the cascade ([`fccore::prove_bounded`]).
#[derive(Default)]
pub struct Engines {
    solver: Option<Solver>,
    prover: Option<Prover>,
    /// The prover's memory; past it the layered proof takes over.
    max_memory: Option<usize>,
    /// Threads of a proof (the lean prover's and the layered proof's; 0 counts as 1).
    threads: usize,
}

impl Engines {
    /// Engines whose prover holds at most `max_memory` bytes (`None`: no bound) and proves on `threads`
    /// threads.
    pub fn with_memory(max_memory: Option<usize>, threads: usize) -> Engines {
        Engines {
            max_memory,
            threads,
            ..Engines::default()
        }
    }

    pub fn search(
        &mut self,
        layout: &Layout,
        cells: usize,
        strategy: Strategy,
        limits: Limits,
    ) -> Result<SearchResult, Error> {
        match strategy {
            Strategy::Prove => {
                let prover = self.prover.get_or_insert_with(Prover::new);
                prover.max_memory = self.max_memory;
                prover.layered_threads = self.threads.max(1);
                let solver = self.solver.get_or_insert_with(Solver::new);
                fccore::prove_bounded(prover, solver, layout, cells, limits, None)
            }
            _ => self
                .solver
                .get_or_insert_with(Solver::new)
                .search(layout, cells, strategy, limits),
        }
    }
}

/// How `classify` runs: the prover's memory, where layered proofs keep resumable files, the threads
/// of a layered proof, and the positions of the wide beams before one.
pub struct ClassifyRun {
    pub max_memory: Option<usize>,
    pub checkpoint_dir: Option<PathBuf>,
    pub threads: usize,
    pub wide_beam_positions: u64,
}

impl ClassifyRun {
    /// Classify `layout` with 0..=`max_cells` free cells within `limits`.
    pub fn classify(
        self,
        layout: &Layout,
        max_cells: usize,
        limits: ClassifyLimits,
    ) -> Result<Classification, Error> {
        let mut classifier = fccore::Classifier::new();
        classifier.prover.max_memory = self.max_memory;
        classifier.checkpoint_dir = self.checkpoint_dir;
        classifier.prover.layered_threads = self.threads.max(1);
        classifier.prover.wide_beam_positions = self.wide_beam_positions;
        classifier.classify(layout, max_cells, limits)
    }
}

/// A move, the automatic moves after it, and the layout it leads to.
pub type Successor = (Move, Vec<Move>, Layout);

/// The search's view of `layout` with `cells` free cells: the automatic moves that settle it, the
/// settled layout, and every move the search generates from there ([`Successor`]).
pub fn successors(
    layout: &Layout,
    cells: usize,
) -> Result<(Vec<Move>, Layout, Vec<Successor>), Error> {
    let (mut p, origin) = Position::from_layout(layout, cells)?;
    let mut autos = Vec::new();
    p.settle(Some(&mut autos));
    let mut moves = Vec::new();
    p.moves(&mut moves);
    let next = moves
        .iter()
        .map(|&m| {
            let mut q = p;
            q.apply(m, &origin);
            let mut log = Vec::new();
            q.settle(Some(&mut log));
            (m, log, q.layout())
        })
        .collect();
    Ok((autos, p.layout(), next))
}
