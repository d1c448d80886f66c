//! The cascade that decides one cell count within a memory budget: the lean prover first; when its
//! memory runs out before its position budget, a wide beam, a beam over the layers and the heuristic
//! solver, each with as many positions as the memory holds; and last the layered proof
//! ([`crate::layered`]), which holds fewer positions at once. [`crate::classify`] and the Python
//! binding (`strategy="prove"`) both decide a cell count through [`prove_bounded`].

use std::path::Path;

use crate::beam::{beam, layer_beam};
use crate::error::Result;
use crate::layered::{has_checkpoint, prove_layered, LayeredConfig, LayeredOutcome};
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::checked_line;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::prover::{Prover, Rules};
use crate::solver::{Solver, Strategy};
use crate::store::BYTES_PER_POSITION;

/// The beams [`prove_bounded`] tries when the prover runs out of memory: width and most positions (a
/// beam of 1,000,000 did not win deal 17760 with 2 cells within 150 million positions either, in 600 s).
const GIANT_BEAMS: &[(usize, u64)] = &[(100_000, 20_000_000)];
/// Most bytes a beam holds per position kept (its set of keys, the kept depths, the candidates).
const BEAM_BYTES_PER_POSITION: usize = 96;
/// The layer beam [`prove_bounded`] tries after them ([`layer_beam`]): seeds per layer,
/// positions kept per layer, most positions. It wins deal 17760 with 2 cells within 13.5 million
/// positions; 10,000 seeds, or 500,000 positions a layer, do not.
const GIANT_LAYER_BEAM: (usize, usize, u64) = (20_000, 1_000_000, 30_000_000);
/// Most bytes a layer beam holds per position kept (its map of parents while it doubles, the seeds).
const LAYER_BEAM_BYTES_PER_POSITION: usize = 160;

/// The prover within its memory ([`Prover::max_memory`]). When the memory runs out before the position
/// budget, the reachable set is large: either the position is solvable and the depth-first search went
/// the wrong way, or it is a large proof. A wide beam ([`GIANT_BEAMS`]), a layer beam
/// ([`GIANT_LAYER_BEAM`]) and the heuristic solver then
/// search with as many positions as the memory holds (they find the lines of the first kind), and if
/// they too run out, the layered proof decides (it holds fewer positions at once). A won position it
/// reaches gives the line found again backwards, replayed like every line; when even
/// that does not fit in the memory, the answer is undecided.
///
/// With a `checkpoint` directory, the layered proof is resumable there
/// ([`LayeredConfig::checkpoint_dir`]), and when the directory holds a checkpoint the search goes straight
/// to it (the prover and the solver ran out of memory before it was saved).
pub fn prove_bounded(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    checkpoint: Option<&Path>,
) -> Result<SearchResult> {
    let threads = prover.layered_threads;
    if let Some(dir) = checkpoint.filter(|d| prover.max_memory.is_some() && has_checkpoint(d)) {
        return layered_result(
            layout,
            ncells,
            limits,
            prover.max_memory,
            threads,
            Some(dir),
            0.0,
        );
    }
    let r = prover.prove(layout, ncells, limits)?;
    let Some(memory) = prover.max_memory else {
        return Ok(r);
    };
    if r.outcome != Outcome::Undecided
        || r.exhausted != Some(Budget::Positions)
        || r.positions >= limits.max_positions
    {
        return Ok(r);
    }
    // Each search after the prover adds its time, and the first to decide answers; each keeps as many
    // positions as the memory holds at its bytes per position.
    let mut spent = r.elapsed_ms;
    let mut decided = |b: SearchResult| {
        spent += b.elapsed_ms;
        (b.outcome != Outcome::Undecided).then_some(SearchResult {
            elapsed_ms: spent,
            ..b
        })
    };
    let within = |positions: u64, bytes_per_position: usize| Limits {
        max_positions: positions
            .min((memory / bytes_per_position) as u64)
            .min(limits.max_positions),
        max_millis: limits.max_millis,
    };
    // A wide beam next: it finds the line of deal 13599 with one cell within 2.3 million positions,
    // which the prover and the solver missed for hundreds of millions.
    for &(width, positions) in GIANT_BEAMS {
        let b = beam(
            layout,
            ncells,
            width,
            within(positions, BEAM_BYTES_PER_POSITION),
        )?;
        if let Some(answer) = decided(b) {
            return Ok(answer);
        }
    }
    // Then a beam over the layers, for lines no heuristic points to (deal 17760 with 2 cells).
    let (width, layer_cap, positions) = GIANT_LAYER_BEAM;
    let b = layer_beam(
        layout,
        ncells,
        width,
        layer_cap,
        within(positions, LAYER_BEAM_BYTES_PER_POSITION),
    )?;
    if let Some(answer) = decided(b) {
        return Ok(answer);
    }
    // The solver's positions cost BYTES_PER_POSITION on average, and up to twice that while its arena and
    // table double (deal 982 at 2 cells reached 13.5 GB under a 10 GiB budget with a 48-byte estimate).
    let s = solver.search(
        layout,
        ncells,
        Strategy::Solve,
        within(u64::MAX, 2 * BYTES_PER_POSITION),
    )?;
    // A solver this large gives its tables back now, not at its next search (the layered proof needs the
    // memory).
    *solver = Solver::new();
    if let Some(answer) = decided(s) {
        return Ok(answer);
    }
    let memory = prover.max_memory;
    layered_result(layout, ncells, limits, memory, threads, checkpoint, spent)
}

/// The layered proof's answer as a search result (a line replayed when won), after `spent` ms of
/// searches that ran out of memory; `threads` share its layers.
fn layered_result(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    threads: usize,
    checkpoint: Option<&Path>,
    spent: f64,
) -> Result<SearchResult> {
    let config = LayeredConfig {
        max_memory,
        threads,
        checkpoint_dir: checkpoint.map(Path::to_path_buf),
        ..LayeredConfig::default()
    };
    let l = prove_layered(layout, ncells, limits, &config)?;
    if l.outcome == LayeredOutcome::Won && !l.chain.is_empty() {
        let rules = Rules::new(layout, ncells);
        return Ok(SearchResult {
            outcome: Outcome::Solved,
            positions: l.positions,
            solution: checked_line(layout, ncells, &rules, l.chain, "the layered proof's line")?,
            elapsed_ms: spent + l.elapsed_ms,
            exhausted: None,
        });
    }
    Ok(SearchResult {
        outcome: match l.outcome {
            LayeredOutcome::Unsolvable => Outcome::Unsolvable,
            _ => Outcome::Undecided,
        },
        positions: l.positions,
        solution: vec![],
        elapsed_ms: spent + l.elapsed_ms,
        exhausted: match l.outcome {
            LayeredOutcome::Undecided(b) => Some(b),
            LayeredOutcome::Won => Some(Budget::Positions),
            LayeredOutcome::Unsolvable => None,
        },
    })
}
