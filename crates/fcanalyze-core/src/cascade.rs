//! The cascade that decides one cell count within a memory budget: the lean prover first, up to
//! [`LEAN_POSITIONS`] or its memory; when it stops there, a wide beam, a beam over the layers and a
//! short heuristic solve look for the line of a solvable position; and last the layered proof
//! ([`crate::layered`]), which holds fewer positions at once and is about as fast per position.
//! [`crate::classify`] and the Python binding (`strategy="prove"`) both decide a cell count through
//! [`prove_bounded`].
//!
//! With `FCANALYZE_TRACE=1` in the environment, every step of the cascade and of a classification
//! ([`trace`]) prints one line to stderr: the step, the cell count, its outcome, positions and time.

use std::path::Path;
use std::sync::OnceLock;

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

/// Most positions of the lean prover in the cascade, below its memory: past it the giant stage begins.
/// The layered proof costs about the same per position (deal 26063 with 1 cell: 31.3 s of CPU against
/// the lean prover's 28.2 s, and less where the lean prover's table outgrows the caches), so a larger
/// lean prover only adds to the cost of the proofs it cannot finish: deals 982 (2 cells), 24966 and
/// 20410 (1 cell) each spent 500-700 s filling 10 GB (340 million positions) before their layered
/// proofs started from nothing. Every line the lean prover found in deals 1-32,000 came within 66
/// million positions (deal 267 with 2 cells), so they stay with it.
pub const LEAN_POSITIONS: u64 = 100_000_000;
/// The beams [`prove_bounded`] tries when the prover stops: width and most positions (a
/// beam of 1,000,000 did not win deal 17760 with 2 cells within 150 million positions either, in 600 s).
const GIANT_BEAMS: &[(usize, u64)] = &[(100_000, 20_000_000)];
/// Most bytes a beam holds per position kept (its set of keys, the kept depths, the candidates): 96
/// when the set took at most 31 bytes a key, 16 more since its shards double (up to 48).
const BEAM_BYTES_PER_POSITION: usize = 112;
/// The layer beam [`prove_bounded`] tries after them ([`layer_beam`]): seeds per layer,
/// positions kept per layer, most positions. It wins deal 17760 with 2 cells within 13.5 million
/// positions; 10,000 seeds, or 500,000 positions a layer, do not.
const GIANT_LAYER_BEAM: (usize, usize, u64) = (20_000, 1_000_000, 30_000_000);
/// Most bytes a layer beam holds per position kept (its map of parents while it doubles, the seeds).
const LAYER_BEAM_BYTES_PER_POSITION: usize = 160;
/// Most positions of the heuristic solver after the beams. It used to search with as many positions as
/// the memory holds (100 million and more, minutes), and in deals 1-32,000 it never decided a cell
/// count the layered proof then did not: the layered proof finds lines too. A depth-first solver that
/// wanders far before its line is what remains worth a try, within the budget of a beam.
const GIANT_SOLVER_POSITIONS: u64 = 20_000_000;

/// Whether `FCANALYZE_TRACE` asks for the steps' lines (read once).
fn tracing() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os("FCANALYZE_TRACE").is_some_and(|v| !v.is_empty() && v != "0")
    })
}

/// With `FCANALYZE_TRACE=1`, one line to stderr for a step of a classification or of the cascade: what
/// ran (`step`), with how many cells, and what it gave.
pub(crate) fn trace(step: &str, cells: usize, r: &SearchResult) {
    if tracing() {
        eprintln!(
            "fcanalyze trace: cells={cells} step={step} outcome={} positions={} ms={:.0}{}",
            r.outcome.as_str(),
            r.positions,
            r.elapsed_ms,
            match r.exhausted {
                Some(Budget::Positions) => " exhausted=positions",
                Some(Budget::Time) => " exhausted=time",
                Some(Budget::Disk) => " exhausted=disk",
                None => "",
            }
        );
    }
}

/// The prover, up to [`LEAN_POSITIONS`] or its memory ([`Prover::max_memory`]). When it stops there
/// before the position budget, the reachable set is large: either the position is solvable and the
/// depth-first search went the wrong way, or it is a large proof. A wide beam ([`GIANT_BEAMS`]), a
/// layer beam ([`GIANT_LAYER_BEAM`]) and a heuristic solve ([`GIANT_SOLVER_POSITIONS`]) then look for
/// the lines of the first kind, each within the memory, and if they find none, the layered proof
/// decides. A won position it reaches gives the line found again backwards, replayed like every line;
/// when even that does not fit in the memory, the answer is undecided. Without a memory budget the
/// prover alone decides, up to the position budget.
///
/// With a `checkpoint` directory, the layered proof is resumable there
/// ([`LayeredConfig::checkpoint_dir`]), and when the directory holds a checkpoint the search goes straight
/// to it (the searches before it ran out before it was saved).
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
    let Some(memory) = prover.max_memory else {
        let r = prover.prove(layout, ncells, limits)?;
        trace("prover", ncells, &r);
        return Ok(r);
    };
    let lean = Limits {
        max_positions: limits.max_positions.min(LEAN_POSITIONS),
        ..limits
    };
    let r = prover.prove(layout, ncells, lean)?;
    trace("prover", ncells, &r);
    if r.outcome != Outcome::Undecided
        || r.exhausted != Some(Budget::Positions)
        || r.positions >= limits.max_positions
    {
        return Ok(r);
    }
    // Each search after the prover adds its time, and the first to decide answers; each keeps as many
    // positions as the memory holds at its bytes per position.
    let mut spent = r.elapsed_ms;
    let mut decided = |step: &str, b: SearchResult| {
        trace(step, ncells, &b);
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
        if let Some(answer) = decided("giant-beam", b) {
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
    if let Some(answer) = decided("layer-beam", b) {
        return Ok(answer);
    }
    // The solver's positions cost BYTES_PER_POSITION on average, and up to twice that while its arena and
    // table double (deal 982 at 2 cells reached 13.5 GB under a 10 GiB budget with a 48-byte estimate).
    let s = solver.search(
        layout,
        ncells,
        Strategy::Solve,
        within(GIANT_SOLVER_POSITIONS, 2 * BYTES_PER_POSITION),
    )?;
    // A solver this large gives its tables back now, not at its next search (the layered proof needs the
    // memory).
    *solver = Solver::new();
    if let Some(answer) = decided("giant-solver", s) {
        return Ok(answer);
    }
    layered_result(
        layout,
        ncells,
        limits,
        Some(memory),
        threads,
        checkpoint,
        spent,
    )
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
        let r = SearchResult {
            outcome: Outcome::Solved,
            positions: l.positions,
            solution: checked_line(layout, ncells, &rules, l.chain, "the layered proof's line")?,
            elapsed_ms: l.elapsed_ms,
            exhausted: None,
        };
        trace("layered", ncells, &r);
        return Ok(SearchResult {
            elapsed_ms: spent + r.elapsed_ms,
            ..r
        });
    }
    let r = SearchResult {
        outcome: match l.outcome {
            LayeredOutcome::Unsolvable => Outcome::Unsolvable,
            _ => Outcome::Undecided,
        },
        positions: l.positions,
        solution: vec![],
        elapsed_ms: l.elapsed_ms,
        exhausted: match l.outcome {
            LayeredOutcome::Undecided(b) => Some(b),
            LayeredOutcome::Won => Some(Budget::Positions),
            LayeredOutcome::Unsolvable => None,
        },
    };
    trace("layered", ncells, &r);
    Ok(SearchResult {
        elapsed_ms: spent + r.elapsed_ms,
        ..r
    })
}
