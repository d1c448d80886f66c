//! The cascade that decides one cell count within a memory budget: the lean prover first, up to
//! [`LEAN_POSITIONS`] or its memory; when it stops there, a wide beam, a beam over the layers and a
//! short heuristic solve look for the line of a solvable position; and last the layered proof
//! ([`crate::layered`]), which holds fewer positions at once and is as fast per position, or (by
//! orbits) faster.
//! [`crate::classify`] and the Python binding (`strategy="prove"`) both decide a cell count through
//! [`prove_bounded`].
//!
//! With `FCANALYZE_TRACE=1` in the environment, every step of the cascade and of a classification
//! ([`trace`]) prints one line to stderr: the step, the cell count, its outcome, positions and time.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::beam::{beam, layer_beam};
use crate::error::Result;
use crate::interrupt::StopHere;
use crate::layered::{has_checkpoint, prove_layered, threads_now, LayeredConfig, LayeredOutcome};
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::checked_line;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::prover::{Prover, Rules};
use crate::solver::{Solver, Strategy};
use crate::store::BYTES_PER_POSITION;

/// Most positions of the lean prover in the cascade, below its memory: past it the giant stage begins.
/// The layered proof cost about the same per position before its groups were searched by orbits (deal
/// 26063 with 1 cell: 31.3 s of CPU against the lean prover's 28.2 s), so a larger lean prover only
/// adds to the cost of the proofs it cannot finish: deals 982 (2 cells), 24966 and 20410 (1 cell) each
/// spent 500-700 s filling 10 GB (340 million positions) before their layered proofs started from
/// nothing. Every line the lean prover found in deals 1-32,000 came within 66 million positions (deal
/// 267 with 2 cells), so they stay with it. By orbits the layered proof is now often the faster one
/// (one thread, deal 8983 with 1 cell: the lean prover's 100 million positions 54.5 s, the whole
/// layered proof of 232 million 33.6 s; 20410 with 1 cell is the exception), but a lower cap would
/// send the proofs between it and 100 million through the searches for a line first (about 40 s of
/// CPU each): not lowered.
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
pub(crate) fn tracing() -> bool {
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
    // Then searches for a line (`Lookouts`), each within as many positions as the memory holds at its
    // bytes per position; the first to decide answers. With two threads or more, and the memory for it,
    // the layer beam runs beside the others.
    let mut spent = r.elapsed_ms;
    let within = |positions: u64, bytes_per_position: usize| Limits {
        max_positions: positions
            .min((memory / bytes_per_position) as u64)
            .min(limits.max_positions),
        max_millis: limits.max_millis,
    };
    let steps = Lookouts {
        giant_beams: GIANT_BEAMS
            .iter()
            .map(|&(w, p)| (w, within(p, BEAM_BYTES_PER_POSITION)))
            .collect(),
        layer_beam: within(GIANT_LAYER_BEAM.2, LAYER_BEAM_BYTES_PER_POSITION),
        solver: within(GIANT_SOLVER_POSITIONS, 2 * BYTES_PER_POSITION),
    };
    let side_by_side = threads_now(threads) > 1 && steps.fit_side_by_side(memory);
    let t = std::time::Instant::now();
    let (first, second) = steps.run(layout, ncells, solver, side_by_side)?;
    // A solver this large gives its tables back now, not at its next search (the layered proof needs the
    // memory).
    *solver = Solver::new();
    // The first step in order that decided answers, as if they had run one after the other (each
    // search is the same alone or beside the others); side by side, their time is the wall time.
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let mut summed = 0.0;
    for (step, b) in first.into_iter().chain(second) {
        trace(step, ncells, &b);
        summed += b.elapsed_ms;
        if b.outcome != Outcome::Undecided {
            let taken = if side_by_side { wall } else { summed };
            return Ok(SearchResult {
                elapsed_ms: spent + taken,
                ..b
            });
        }
    }
    spent += if side_by_side { wall } else { summed };
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

/// Searches' results in order, each with its step's name (for the trace).
type Steps = Vec<(&'static str, SearchResult)>;

/// The searches that look for a line between the lean prover and the layered proof, with their limits:
/// the wide beams, then the layer beam and the heuristic solver.
struct Lookouts {
    giant_beams: Vec<(usize, Limits)>,
    layer_beam: Limits,
    solver: Limits,
}

impl Lookouts {
    /// Whether the layer beam fits in `memory` beside the wide beams or the solver (those two run one
    /// after the other on the other thread), each with the limits it has alone: then two threads run
    /// them side by side, with the same results.
    fn fit_side_by_side(&self, memory: usize) -> bool {
        let bytes = |l: &Limits, per: usize| l.max_positions as usize * per;
        let beams = self
            .giant_beams
            .iter()
            .map(|(_, l)| bytes(l, BEAM_BYTES_PER_POSITION))
            .max()
            .unwrap_or(0);
        let other = beams.max(bytes(&self.solver, 2 * BYTES_PER_POSITION));
        other + bytes(&self.layer_beam, LAYER_BEAM_BYTES_PER_POSITION) <= memory
    }

    /// The wide beams' results and the others' (the layer beam's, then the solver's), side by side on
    /// two threads or one after the other (then the others only when no beam decided, and the solver
    /// only when the layer beam did not either).
    fn run(
        &self,
        layout: &Layout,
        ncells: usize,
        solver: &mut Solver,
        side_by_side: bool,
    ) -> Result<(Steps, Steps)> {
        let decided = |steps: &Steps| steps.iter().any(|(_, r)| r.outcome != Outcome::Undecided);
        if !side_by_side {
            let beams = self.beams(layout, ncells)?;
            if decided(&beams) {
                return Ok((beams, vec![]));
            }
            let mut rest = vec![("layer-beam", self.layer_beam(layout, ncells)?)];
            if !decided(&rest) {
                rest.push(("giant-solver", self.solver(layout, ncells, solver)?));
            }
            return Ok((beams, rest));
        }
        // One thread runs the wide beams and then the solver, the other the layer beam (the wide beams
        // and the solver together take about as long as the layer beam). A search that decides stops
        // the ones after it in order, still running on the other thread: their results would not be
        // used (deal 13599 with 1 cell: a beam wins in 2 s, the others would go on for a minute).
        let beam_won = Arc::new(AtomicBool::new(false));
        let layer_won = Arc::new(AtomicBool::new(false));
        std::thread::scope(|scope| {
            let first = scope.spawn(|| -> Result<(Steps, Option<SearchResult>)> {
                let beams = self.beams(layout, ncells)?;
                if decided(&beams) {
                    beam_won.store(true, Ordering::Relaxed);
                    return Ok((beams, None));
                }
                let _stop = StopHere::on(layer_won.clone());
                Ok((beams, Some(self.solver(layout, ncells, solver)?)))
            });
            let layer = {
                let _stop = StopHere::on(beam_won.clone());
                self.layer_beam(layout, ncells)
            };
            if layer
                .as_ref()
                .is_ok_and(|r| r.outcome != Outcome::Undecided)
            {
                layer_won.store(true, Ordering::Relaxed);
            }
            let (beams, solved) = first.join().expect("the beams' thread panicked")?;
            let mut rest = vec![("layer-beam", layer?)];
            rest.extend(solved.map(|s| ("giant-solver", s)));
            Ok((beams, rest))
        })
    }

    /// The wide beams in order, up to the first that decides. A wide beam finds the line of deal 13599
    /// with one cell within 2.3 million positions, which the prover and the solver missed for hundreds
    /// of millions.
    fn beams(&self, layout: &Layout, ncells: usize) -> Result<Steps> {
        let mut out = vec![];
        for &(width, limits) in &self.giant_beams {
            let b = beam(layout, ncells, width, limits)?;
            let done = b.outcome != Outcome::Undecided;
            out.push(("giant-beam", b));
            if done {
                break;
            }
        }
        Ok(out)
    }

    /// The layer beam, for lines no heuristic points to (deal 17760 with 2 cells).
    fn layer_beam(&self, layout: &Layout, ncells: usize) -> Result<SearchResult> {
        let (width, layer_cap, _) = GIANT_LAYER_BEAM;
        layer_beam(layout, ncells, width, layer_cap, self.layer_beam)
    }

    /// The heuristic solver. Its positions cost [`BYTES_PER_POSITION`] on average, and up to twice that
    /// while its arena and table double (deal 982 at 2 cells reached 13.5 GB under a 10 GiB budget with
    /// a 48-byte estimate).
    fn solver(&self, layout: &Layout, ncells: usize, solver: &mut Solver) -> Result<SearchResult> {
        solver.search(layout, ncells, Strategy::Solve, self.solver)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The searches for a line give the same answer side by side as one after the other: the first in
    /// order that decides, with the same line and positions; over deals where the wide beam decides,
    /// where a later search does, and where none does.
    #[test]
    fn lookouts_side_by_side_answer_as_in_order() {
        let limits = |max_positions| Limits {
            max_positions,
            max_millis: None,
        };
        let steps = Lookouts {
            giant_beams: vec![(50, limits(3_000)), (200, limits(20_000))],
            layer_beam: limits(40_000),
            solver: limits(20_000),
        };
        let answer = |(a, b): (Steps, Steps)| {
            a.into_iter()
                .chain(b)
                .find(|(_, r)| r.outcome != Outcome::Undecided)
                .map(|(step, r)| {
                    let line: Vec<_> = r.solution.iter().map(|m| format!("{m:?}")).collect();
                    (step, r.outcome, r.positions, line)
                })
        };
        let mut seen = std::collections::BTreeMap::new();
        for deal in 1..=40u64 {
            for ncells in [0usize, 1] {
                let layout = Layout::deal(deal).unwrap();
                let apart = steps
                    .run(&layout, ncells, &mut Solver::new(), true)
                    .unwrap();
                let alone = steps
                    .run(&layout, ncells, &mut Solver::new(), false)
                    .unwrap();
                let (apart, alone) = (answer(apart), answer(alone));
                assert_eq!(apart, alone, "deal {deal} with {ncells} cells");
                *seen.entry(alone.map_or("none", |a| a.0)).or_insert(0) += 1;
            }
        }
        // Every kind of answer came up: each search, and none.
        assert_eq!(seen.len(), 4, "{seen:?}");
    }

    /// A stop raised for one thread ends its searches as if their time had run out, until it is
    /// dropped, and leaves the other threads' searches alone.
    #[test]
    fn a_stop_here_ends_that_threads_searches_only() {
        let layout = Layout::deal(11982).unwrap();
        let limits = Limits {
            max_positions: 10_000_000,
            max_millis: None,
        };
        let prove = || {
            let r = Solver::new()
                .search(&layout, 4, Strategy::Prove, limits)
                .unwrap();
            (r.outcome, r.positions, r.exhausted)
        };
        let whole = (Outcome::Unsolvable, 61_643, None);
        let raised = Arc::new(AtomicBool::new(true));
        let (stopped, after, beside) = std::thread::scope(|s| {
            let stopped = s.spawn(|| {
                let stopped = {
                    let _stop = StopHere::on(raised.clone());
                    prove()
                };
                (stopped, prove())
            });
            let beside = prove();
            let (stopped, after) = stopped.join().unwrap();
            (stopped, after, beside)
        });
        assert_eq!(
            (stopped.0, stopped.2),
            (Outcome::Undecided, Some(Budget::Time))
        );
        assert!(stopped.1 < 61_643);
        assert_eq!(after, whole);
        assert_eq!(beside, whole);
    }
}
