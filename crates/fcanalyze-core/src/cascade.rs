//! The cascade that decides one cell count within a memory budget: the lean prover first, up to
//! [`LEAN_POSITIONS`] or its memory; when it stops there, a wide beam, a beam over the layers and a
//! short heuristic solve look for the line of a solvable position; and last the layered proof
//! ([`crate::layered`]), which holds fewer positions at once and is as fast per position, or (by
//! orbits) faster. On two threads and a memory budget that holds them all, the layered proof starts at
//! once on one thread beside the others on the other ([`race`]), and the first answer stops the rest.
//! [`crate::classify`] and the Python binding (`strategy="prove"`) both decide a cell count through
//! [`prove_bounded`].
//!
//! With `FCANALYZE_TRACE=1` in the environment, every step of the cascade and of a classification
//! ([`trace`]) prints one line to stderr: the step, the cell count, its outcome, positions and time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::beam::{beam, layer_beam};
use crate::error::{Error, Result};
use crate::interrupt::StopHere;
use crate::layered::{
    has_checkpoint, prove_layered, threads_now, LayeredConfig, LayeredOutcome, LayeredResult, Share,
};
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
/// CPU each): not lowered. Nor does a first turn of the layered proof before the searches pay on one
/// thread (after the lean prover's first 5 million): the proofs of 10-100 million it speeds up are
/// about matched by the lines past 5 million that wait for it (BENCHMARKS.md, "one thread taking
/// turns").
pub const LEAN_POSITIONS: u64 = 100_000_000;
/// The wide beams [`prove_bounded`] may try when the prover stops, in order: width and most positions.
/// It tries those that fit within [`Prover::wide_beam_positions`] in all ([`beams_within`]); by
/// default the first two. The beam of 1,000,000 wins 8 of the 16 cell counts pass 4 of 1-1,000,000 left
/// undecided after 2.96-5.05 billion positions, all of which the beam of 100,000 had missed: 204545,
/// 266829, 353380, 425171 and 543724 with 1 cell, 433246, 649257 and 654786 with 2, within 10.9 to 29.0
/// million positions (20-53 s of one core). When it finds nothing it costs 45-52 s of a quiet core
/// (62088 and 20410 with 1 cell, 982 with 2) before each giant proof: in 1-32,000, eight proofs of 112
/// million to 3.1 billion positions. The beam of 3,000,000 wins two of the eight others (569017 with 1
/// cell, 295997 with 2, within 36.0 and 29.0 million positions) and costs 66.5-74.6 s where it finds
/// nothing, so only budgets for cell counts known to be large include it (pass 5 of 1-1,000,000). No
/// beam wins deal 17760 with 2 cells (1,000,000 wide: not within 150 million positions, 600 s): the
/// layer beam does.
const GIANT_BEAMS: &[(usize, u64)] = &[
    (100_000, 20_000_000),
    (1_000_000, 32_000_000),
    (3_000_000, 40_000_000),
];
/// The default of [`Prover::wide_beam_positions`]: the first two of [`GIANT_BEAMS`].
pub const WIDE_BEAM_POSITIONS: u64 = 52_000_000;
/// On one thread, with a directory to resume the layered proof from, the wide beams past the first and
/// the heuristic solver wait for its first this many positions ([`layered_turns`]): the beams cost
/// 30-75 s of a core where they find nothing, the solver about 20 s, and every count the beams won in
/// 1-1,000,000 had gone past 2.9 billion positions of layered proof, while in 1-32,000 six of the eight
/// proofs past the lean prover end below a billion (112 to 653 million: the layered proof on one thread
/// takes 10-250 s) and the solver decided none of the eight (181 s of CPU in `make results-32k` at
/// f1ed65c).
const LATE_BEAMS_AFTER: u64 = 1_000_000_000;

/// The beams of `beams` that fit, in order, within `budget` positions in all (each counted at its
/// most positions).
fn beams_within(beams: &[(usize, u64)], budget: u64) -> &[(usize, u64)] {
    let mut spent = 0u64;
    let n = beams
        .iter()
        .take_while(|&&(_, p)| {
            spent = spent.saturating_add(p);
            spent <= budget
        })
        .count();
    &beams[..n]
}
/// Most bytes a beam holds per position kept (its set of keys, the kept depths, the candidates): 96
/// when the set took at most 31 bytes a key, 16 more since its shards double (up to 48).
const BEAM_BYTES_PER_POSITION: usize = 112;
/// The layer beam [`prove_bounded`] tries after them ([`layer_beam`]): seeds per layer,
/// positions kept per layer, most positions. It wins deal 17760 with 2 cells within 13.5 million
/// positions; 10,000 seeds, or 500,000 positions a layer, do not.
const GIANT_LAYER_BEAM: (usize, usize, u64) = (20_000, 1_000_000, 30_000_000);
/// Most bytes a layer beam holds per position kept (its map of parents while it doubles, the seeds).
const LAYER_BEAM_BYTES_PER_POSITION: usize = 160;
/// Bytes a position of the heuristic solver may hold: [`BYTES_PER_POSITION`] on average, up to twice that
/// while its arena and table double (deal 982 at 2 cells reached 13.5 GB under a 10 GiB budget with a
/// 48-byte estimate).
const SOLVER_BYTES_PER_POSITION: usize = 2 * BYTES_PER_POSITION;
/// Most positions of the heuristic solver after the beams. It used to search with as many positions as
/// the memory holds (100 million and more, minutes), and in deals 1-32,000 it never decided a cell
/// count the layered proof then did not: the layered proof finds lines too. A depth-first solver that
/// wanders far before its line is what remains worth a try, within the budget of a beam.
const GIANT_SOLVER_POSITIONS: u64 = 20_000_000;
/// How long the layered proof waits before it starts beside the others ([`race`]): most cell counts
/// they decide within it (the lean prover stores its first million positions in about half a second,
/// and it searches them on one thread whatever its threads), and these need no layered proof, its
/// thread or its files.
const RACE_AFTER: Duration = Duration::from_secs(1);
/// Most bytes the lean prover holds per position (its set, 24-48 bytes a position, and its stack): it
/// held 4.2 GB at 100 million positions in pass 4 of 1-1,000,000.
const LEAN_BYTES_PER_POSITION: usize = 56;

/// The position caps of the searches before the layered proof (the lean prover's and those of the
/// searches for a line), and how long the layered proof waits before it starts beside them.
#[derive(Clone, Copy)]
struct Caps {
    lean: u64,
    beams: &'static [(usize, u64)],
    layer_beam: u64,
    solver: u64,
    race_after: Duration,
    /// [`LATE_BEAMS_AFTER`].
    late_after: u64,
}

/// The caps of [`prove_bounded`].
const CAPS: Caps = Caps {
    lean: LEAN_POSITIONS,
    beams: GIANT_BEAMS,
    layer_beam: GIANT_LAYER_BEAM.2,
    solver: GIANT_SOLVER_POSITIONS,
    race_after: RACE_AFTER,
    late_after: LATE_BEAMS_AFTER,
};

impl Caps {
    /// Most bytes the searches before the layered proof hold at once, one after the other, within
    /// `memory`: as much as the largest of them.
    fn bytes(&self, memory: usize) -> usize {
        let most = |positions: u64, per: usize| (positions as usize).saturating_mul(per);
        let beams = self
            .beams
            .iter()
            .map(|&(_, p)| most(p, BEAM_BYTES_PER_POSITION));
        [
            most(self.lean, LEAN_BYTES_PER_POSITION),
            most(self.layer_beam, LAYER_BEAM_BYTES_PER_POSITION),
            most(self.solver, SOLVER_BYTES_PER_POSITION),
        ]
        .into_iter()
        .chain(beams)
        .max()
        .unwrap_or(0)
        .min(memory)
    }

    /// The heuristic solver's limits within `memory` and `limits`.
    fn solver_limits(&self, memory: usize, limits: Limits) -> Limits {
        within(self.solver, SOLVER_BYTES_PER_POSITION, memory, limits)
    }
}

#[cfg(test)]
thread_local! {
    /// Tests: the times [`race`] ran the searches beside the layered proof on this thread.
    static LOOKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

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
/// On two threads or more ([`Prover::layered_threads`], or those lent), the layered proof starts at
/// once beside the others ([`race`]): on one thread and a part of the memory while they run on the
/// other, on all of them once they have found nothing. The answer is the same as in order: a line
/// is the prover's or the searches' whenever they find one, a proof's count is exact either way.
///
/// With a `checkpoint` directory, the layered proof is resumable there
/// ([`LayeredConfig::checkpoint_dir`]). When the directory holds a checkpoint, the layered proof goes
/// on from it: beside the others again on two threads, straight away on one (one thread saves its
/// checkpoints only once the others have found nothing). On one thread it also lets the wide beams past
/// the first and the heuristic solver wait for the layered proof's first [`LATE_BEAMS_AFTER`] positions
/// ([`layered_turns`]).
pub fn prove_bounded(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    checkpoint: Option<&Path>,
) -> Result<SearchResult> {
    prove_within(prover, solver, layout, ncells, limits, checkpoint, &CAPS)
}

/// [`prove_bounded`] with the searches before the layered proof capped by `caps`.
fn prove_within(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    checkpoint: Option<&Path>,
    caps: &Caps,
) -> Result<SearchResult> {
    let threads = prover.layered_threads;
    let Some(memory) = prover.max_memory else {
        let r = prover.prove(layout, ncells, limits)?;
        trace("prover", ncells, &r);
        return Ok(r);
    };
    let config = LayeredConfig {
        max_memory: Some(memory),
        threads,
        checkpoint_dir: checkpoint.map(Path::to_path_buf),
        ..LayeredConfig::default()
    };
    let n = threads_now(threads);
    // Beside the others, the layered proof holds what they leave of the memory: at least a quarter.
    let theirs = caps.bytes(memory);
    let beside = n > 1 && memory - theirs >= memory / 4;
    let wide = beams_within(caps.beams, prover.wide_beam_positions);
    // On one thread, resumable, the wide beams past the first and the heuristic solver wait for the
    // layered proof's first positions, unless the cell count is known to be a giant.
    let first = wide.len().min(1);
    let late = match checkpoint {
        Some(dir) if !beside && waits(caps, wide, limits) => Some(Late {
            beams: &wide[first..],
            solver: caps.solver_limits(memory, limits),
            after: caps.late_after,
            tried: tried_file(dir),
        }),
        _ => None,
    };
    let early = if late.is_some() { &wide[..first] } else { wide };
    let r = if beside {
        race(
            prover, solver, layout, ncells, limits, config, n, theirs, caps, wide,
        )
    } else {
        let looked = if checkpoint.is_some_and(has_checkpoint) {
            // Its checkpoint was saved after the others found nothing, or beside them: one thread
            // cannot tell, and goes straight to it. Beside them, the layered proof goes on from it
            // there, and the others search again (a line they would find is never left to it).
            Looked::Open(0.0)
        } else {
            let with_solver = late.is_none();
            look(
                prover,
                solver,
                layout,
                ncells,
                limits,
                memory,
                n,
                caps,
                early,
                with_solver,
            )?
        };
        match looked {
            Looked::Ended(r) => Ok(r),
            Looked::Open(spent) => layered_turns(
                layout,
                ncells,
                limits,
                &config,
                late.as_ref(),
                solver,
                memory,
                spent,
            ),
        }
    }?;
    if r.outcome != Outcome::Undecided {
        if let Some(dir) = checkpoint {
            let _ = std::fs::remove_file(tried_file(dir));
            let _ = std::fs::remove_file(looked_file(dir));
        }
    }
    Ok(r)
}

/// The file beside the directory `dir` of a layered proof resumable in [`race`] that says the searches
/// beside it ([`look`]) found nothing: it holds their [`looked_identity`]. A proof resumed from its
/// checkpoint with the same identity goes on without them, on every thread at once (they are the same
/// searches, and would find nothing again: some 3-7 minutes of a core at each restart of a giant proof
/// of 1-1,000,000).
fn looked_file(dir: &Path) -> PathBuf {
    dir.with_extension("looked")
}

/// What the searches of [`race`] beside the layered proof depend on: the deal's rules and cells, their
/// memory `theirs`, and each one's cap within `limits`.
fn looked_identity(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    theirs: usize,
    caps: &Caps,
    beams: &[(usize, u64)],
) -> String {
    let cap = |p: u64| p.min(limits.max_positions);
    let beams: Vec<(usize, u64)> = beams.iter().map(|&(w, p)| (w, cap(p))).collect();
    format!(
        "fcanalyze-looked/1 cells={ncells} autoplay={:?} memory={theirs} lean={} beams={beams:?} \
         layer_beam={} solver={} ms={:?}\n",
        layout.autoplay,
        cap(caps.lean),
        cap(caps.layer_beam),
        cap(caps.solver),
        limits.max_millis,
    )
}

/// Whether, on one thread, the wide beams past the first and the heuristic solver wait for the layered
/// proof's first [`Caps::late_after`] positions: when the budget goes past them, and unless every wide
/// beam is asked for, the budget of cell counts known to be giants (`fcanalyze analyze --help`). They
/// wait because most proofs past the lean prover end within those positions (in 1-32,000, six of eight
/// below a billion) and these need no beam; a known giant's proof goes past billions (every cell count
/// the beams won in 1-1,000,000 had gone past 2.9 billion), so its beams go first and a line they find
/// costs no layered proof (about 8 minutes of a core a count: pass 6 of 1-1,000,000 begins with ten).
fn waits(caps: &Caps, wide: &[(usize, u64)], limits: Limits) -> bool {
    caps.late_after < limits.max_positions && wide.len() < caps.beams.len()
}

/// The searches for a line that wait for the layered proof's first `after` positions on one thread
/// ([`LATE_BEAMS_AFTER`]): the wide beams past the first, then the heuristic solver; and the file
/// beside the proof's directory that lists those tried (a proof resumed after them does not try them
/// again; the directory's own files are the checkpoint's to keep or remove).
struct Late<'a> {
    beams: &'a [(usize, u64)],
    solver: Limits,
    after: u64,
    tried: PathBuf,
}

/// A search of [`Late`]: a wide beam of that width, or the heuristic solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LateSearch {
    Beam(usize, u64),
    Solver,
}

impl LateSearch {
    /// Its line in the file of those tried.
    fn name(self) -> String {
        match self {
            LateSearch::Beam(width, _) => width.to_string(),
            LateSearch::Solver => "solver".into(),
        }
    }
}

/// The file of the late searches tried for the layered proof resumable in `dir`.
fn tried_file(dir: &Path) -> PathBuf {
    dir.with_extension("beams")
}

impl Late<'_> {
    /// The searches not tried yet, in order.
    fn untried(&self) -> Vec<LateSearch> {
        let text = std::fs::read_to_string(&self.tried).unwrap_or_default();
        let tried: Vec<&str> = text.lines().collect();
        self.beams
            .iter()
            .map(|&(w, p)| LateSearch::Beam(w, p))
            .chain([LateSearch::Solver])
            .filter(|s| !tried.contains(&s.name().as_str()))
            .collect()
    }

    /// `search` tried, and found nothing.
    fn tried(&self, search: LateSearch) -> Result<()> {
        use std::io::Write;
        let io =
            |e: std::io::Error| Error::Io(format!("late searches, {}: {e}", self.tried.display()));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.tried)
            .map_err(io)?;
        writeln!(f, "{}", search.name()).map_err(io)
    }
}

/// The layered proof on one thread, after `spent` ms of searches that found no line. With `late`
/// searches not tried yet: first within their `after` positions, then those searches (the first that
/// decides answers, and the proof's files go), then on from its checkpoint. Without, at once to the
/// end.
#[allow(clippy::too_many_arguments)]
fn layered_turns(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    config: &LayeredConfig,
    late: Option<&Late>,
    solver: &mut Solver,
    memory: usize,
    mut spent: f64,
) -> Result<SearchResult> {
    let untried = late.map(Late::untried).unwrap_or_default();
    if let (Some(late), false) = (late, untried.is_empty()) {
        let first = Limits {
            max_positions: late.after,
            ..limits
        };
        let l = prove_layered(layout, ncells, first, config)?;
        if l.outcome != LayeredOutcome::Undecided(Budget::Positions) || l.positions < late.after {
            return layered_result(layout, ncells, l, spent);
        }
        // Its time is counted again by the proof that goes on from its checkpoint.
        trace("layered", ncells, &summary(&l));
        for search in untried {
            let r = match search {
                LateSearch::Beam(width, positions) => {
                    let limits = within(positions, BEAM_BYTES_PER_POSITION, memory, limits);
                    let b = beam(layout, ncells, width, limits)?;
                    trace("giant-beam", ncells, &b);
                    b
                }
                LateSearch::Solver => {
                    let r = giant_solver(layout, ncells, solver, late.solver)?;
                    *solver = Solver::new();
                    trace("giant-solver", ncells, &r);
                    r
                }
            };
            spent += r.elapsed_ms;
            if r.outcome != Outcome::Undecided {
                if let Some(dir) = &config.checkpoint_dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                return Ok(SearchResult {
                    elapsed_ms: spent,
                    ..r
                });
            }
            late.tried(search)?;
        }
    }
    let l = prove_layered(layout, ncells, limits, config)?;
    layered_result(layout, ncells, l, spent)
}

/// The limits of a search for a line: within `positions`, as many as `memory` holds at
/// `bytes_per_position`, and the cell count's `limits`.
fn within(positions: u64, bytes_per_position: usize, memory: usize, limits: Limits) -> Limits {
    Limits {
        max_positions: positions
            .min((memory / bytes_per_position) as u64)
            .min(limits.max_positions),
        max_millis: limits.max_millis,
    }
}

/// What the searches before the layered proof gave ([`look`]).
enum Looked {
    /// An answer, or a budget spent (the layered proof would spend it too).
    Ended(SearchResult),
    /// None decided, in so many milliseconds: the layered proof's turn.
    Open(f64),
}

/// The lean prover, then the searches for a line ([`Lookouts`], the wide beams `beams`) when it stops
/// at its memory or at its cap ([`LEAN_POSITIONS`]), as `caps` says: their answer, or how long they
/// took to find none. The memory budget is `memory`, and the searches for a line run side by side when
/// `threads` are two or more and the memory holds them.
#[allow(clippy::too_many_arguments)]
fn look(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    memory: usize,
    threads: usize,
    caps: &Caps,
    beams: &[(usize, u64)],
    with_solver: bool,
) -> Result<Looked> {
    let lean = Limits {
        max_positions: limits.max_positions.min(caps.lean),
        ..limits
    };
    let r = prover.prove(layout, ncells, lean)?;
    trace("prover", ncells, &r);
    if r.outcome != Outcome::Undecided
        || r.exhausted != Some(Budget::Positions)
        || r.positions >= limits.max_positions
    {
        return Ok(Looked::Ended(r));
    }
    // Then searches for a line (`Lookouts`), each within as many positions as the memory holds at its
    // bytes per position; the first to decide answers. With two threads or more, and the memory for it,
    // the layer beam runs beside the others.
    let spent = r.elapsed_ms;
    let steps = Lookouts {
        giant_beams: beams
            .iter()
            .map(|&(w, p)| (w, within(p, BEAM_BYTES_PER_POSITION, memory, limits)))
            .collect(),
        layer_beam: within(
            caps.layer_beam,
            LAYER_BEAM_BYTES_PER_POSITION,
            memory,
            limits,
        ),
        solver: with_solver.then(|| caps.solver_limits(memory, limits)),
    };
    let side_by_side = threads > 1 && steps.fit_side_by_side(memory);
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
            return Ok(Looked::Ended(SearchResult {
                elapsed_ms: spent + taken,
                ..b
            }));
        }
    }
    Ok(Looked::Open(
        spent + if side_by_side { wall } else { summed },
    ))
}

/// [`prove_bounded`] on `threads` threads (two or more): the layered proof (as `config` says) on one
/// thread fewer, beside the lean prover and the searches for a line ([`look`], capped by `caps`) on
/// one thread; those hold `theirs` bytes of the memory, as many as they would alone (so they answer
/// as they would alone), the layered proof the rest. The first to decide stops the other, except a
/// win of the layered proof, which waits for the others' answer: their line if they find one (so
/// that a line is the same whatever the timing), else its own. When the others end without an answer,
/// the layered proof goes on with every thread and the whole memory from its next layer (its threads
/// from the next level of a group searched by levels, `layered::context::Idle`). Pass 4 of
/// 1-1,000,000 (docs/classes-1m.md) spent about 90 s of prover and searches before each proof they
/// could not decide, and the layered proof decides most of the prover's proofs in less time on one
/// thread than the prover on two.
#[allow(clippy::too_many_arguments)]
fn race(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    config: LayeredConfig,
    threads: usize,
    theirs: usize,
    caps: &Caps,
    beams: &[(usize, u64)],
) -> Result<SearchResult> {
    let memory = config.max_memory.unwrap_or(usize::MAX);
    let share = Arc::new(Share::new(threads - 1, memory - theirs));
    let config = LayeredConfig {
        share: Some(share.clone()),
        ..config
    };
    let stop_layered = Arc::new(AtomicBool::new(false));
    let stop_look = Arc::new(AtomicBool::new(false));
    // Whether the others have ended, and with an answer (or a budget spent), for the layered proof's
    // thread while it waits to start.
    let ended: (Mutex<Option<bool>>, Condvar) = (Mutex::new(None), Condvar::new());
    let resumed = config.checkpoint_dir.as_deref().is_some_and(has_checkpoint);
    // A proof resumed after the others found nothing with the same caps goes on without them.
    let looked_at = config.checkpoint_dir.as_deref().map(looked_file);
    let ident = looked_identity(layout, ncells, limits, theirs, caps, beams);
    let skip = resumed
        && looked_at
            .as_deref()
            .is_some_and(|f| std::fs::read_to_string(f).is_ok_and(|t| t == ident));
    let interrupts = crate::interrupt::count();
    let t = std::time::Instant::now();
    let (layered, looked) = std::thread::scope(|scope| {
        let layered = scope.spawn(|| {
            let (lock, wake) = &ended;
            let waited = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (answered, _) = wake
                .wait_timeout_while(waited, caps.race_after, |e| e.is_none())
                .unwrap_or_else(|e| e.into_inner());
            if *answered == Some(true) {
                return None;
            }
            drop(answered);
            let _stop = StopHere::on(stop_layered.clone());
            let started = std::time::Instant::now();
            let l = prove_layered(layout, ncells, limits, &config);
            if matches!(&l, Ok(l) if l.outcome == LayeredOutcome::Unsolvable) {
                stop_look.store(true, Ordering::Relaxed);
            }
            // Its time in earlier runs (a proof resumed from its checkpoint counts them in its own).
            let ms = started.elapsed().as_secs_f64() * 1e3;
            let before = l.as_ref().map_or(0.0, |l| (l.elapsed_ms - ms).max(0.0));
            Some((l, before))
        });
        let looked = if skip {
            if tracing() {
                eprintln!(
                    "fcanalyze trace: cells={ncells} the searches before the layered proof found \
                     nothing before it was resumed: not searched again"
                );
            }
            Ok(Looked::Open(0.0))
        } else {
            #[cfg(test)]
            LOOKS.set(LOOKS.get() + 1);
            let _stop = StopHere::on(stop_look.clone());
            let kept = (prover.max_memory, prover.layered_threads);
            prover.max_memory = Some(theirs);
            prover.layered_threads = 1;
            let looked = look(
                prover, solver, layout, ncells, limits, theirs, 1, caps, beams, true,
            );
            (prover.max_memory, prover.layered_threads) = kept;
            looked
        };
        let open = matches!(looked, Ok(Looked::Open(_)));
        // Found nothing, and not stopped (a stop may have cut a search short): a resume need not
        // search again.
        if let (true, false, Some(f)) = (open, skip, &looked_at) {
            if crate::interrupt::count() == interrupts && !stop_look.load(Ordering::Relaxed) {
                let _ = std::fs::write(f, &ident);
            }
        }
        if open {
            share.whole();
        } else {
            stop_layered.store(true, Ordering::Relaxed);
        }
        *ended.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(!open);
        ended.1.notify_all();
        let layered = layered.join().expect("the layered proof's thread panicked");
        (layered, looked)
    });
    // This run's wall time, and the layered proof's in the runs before (a row of a proof resumed
    // across invocations counts them all).
    let (layered, before) = layered.map_or((None, 0.0), |(l, before)| (Some(l), before));
    let wall = t.elapsed().as_secs_f64() * 1e3 + before;
    let timed = |r: SearchResult| SearchResult {
        elapsed_ms: wall,
        ..r
    };
    match (layered, looked?) {
        // The layered proof decided first (or with them): its count is exact, and a line of the others
        // would be a broken rule.
        (Some(Ok(l)), Looked::Ended(r)) if l.outcome == LayeredOutcome::Unsolvable => {
            if r.outcome == Outcome::Solved {
                return Err(Error::Internal(format!(
                    "{ncells} cells: the prover's cascade found a line where the layered proof \
                     proved none ({} positions)",
                    l.positions
                )));
            }
            Ok(timed(layered_result(layout, ncells, l, 0.0)?))
        }
        (layered, Looked::Ended(r)) => {
            // The layered proof was stopped, or never started, or ran out of its budget as they did:
            // its files go when they answered (the cell count is decided), and when it began beside
            // them (one after the other, it would not have started, and the next search of these
            // cells would go straight to them; it lost at most their time). A proof that went on from
            // a checkpoint of before keeps its files when they ended without an answer (a budget, an
            // interrupt): a resume goes on from them.
            if let Some(Ok(l)) = &layered {
                trace("layered", ncells, &summary(l));
            }
            let decided = matches!(&layered, Some(Ok(l)) if !matches!(l.outcome, LayeredOutcome::Undecided(_)));
            let answered = r.outcome != Outcome::Undecided;
            if !decided && (answered || !resumed) {
                if let Some(dir) = &config.checkpoint_dir {
                    let _ = std::fs::remove_dir_all(dir);
                    let _ = std::fs::remove_file(looked_file(dir));
                }
            }
            Ok(timed(r))
        }
        (layered, Looked::Open(_)) => {
            // It started when they ended without an answer, if not before.
            let l = layered
                .ok_or_else(|| Error::Internal("the layered proof never started".into()))??;
            if l.outcome != LayeredOutcome::Undecided(Budget::Positions)
                || l.positions >= limits.max_positions
            {
                return Ok(timed(layered_result(layout, ncells, l, 0.0)?));
            }
            // It ran out of memory, perhaps in the part it had beside the others: again with the
            // whole (from its last checkpoint if it is resumable).
            trace("layered", ncells, &summary(&l));
            let whole = LayeredConfig {
                share: None,
                ..config
            };
            let l = prove_layered(layout, ncells, limits, &whole)?;
            let spent = t.elapsed().as_secs_f64() * 1e3 + before;
            let r = layered_result(layout, ncells, l, 0.0)?;
            Ok(SearchResult {
                elapsed_ms: spent,
                ..r
            })
        }
    }
}
/// Searches' results in order, each with its step's name (for the trace).
type Steps = Vec<(&'static str, SearchResult)>;

/// The searches that look for a line between the lean prover and the layered proof, with their limits:
/// the wide beams, then the layer beam and the heuristic solver.
struct Lookouts {
    giant_beams: Vec<(usize, Limits)>,
    layer_beam: Limits,
    /// `None`: the solver waits for the layered proof ([`Late`]).
    solver: Option<Limits>,
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
        let solver = self
            .solver
            .map_or(0, |l| bytes(&l, SOLVER_BYTES_PER_POSITION));
        let other = beams.max(solver);
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
            if let (false, Some(limits)) = (decided(&rest), self.solver) {
                rest.push((
                    "giant-solver",
                    giant_solver(layout, ncells, solver, limits)?,
                ));
            }
            return Ok((beams, rest));
        }
        // One thread runs the wide beams and then the solver, the other the layer beam. A search that
        // decides stops the ones after it in order, still running on the other thread: their results
        // would not be used (deal 13599 with 1 cell: a beam wins in 2 s, the others would go on for a
        // minute).
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
                let solved = match self.solver {
                    Some(limits) => Some(giant_solver(layout, ncells, solver, limits)?),
                    None => None,
                };
                Ok((beams, solved))
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
}

/// The heuristic solver within `limits` (its positions' memory: [`SOLVER_BYTES_PER_POSITION`]).
fn giant_solver(
    layout: &Layout,
    ncells: usize,
    solver: &mut Solver,
    limits: Limits,
) -> Result<SearchResult> {
    solver.search(layout, ncells, Strategy::Solve, limits)
}

/// The layered proof's answer `l` as a search result (a line replayed when won), after `spent` ms of
/// searches that ran out of memory.
fn layered_result(
    layout: &Layout,
    ncells: usize,
    l: LayeredResult,
    spent: f64,
) -> Result<SearchResult> {
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
    let r = summary(&l);
    trace("layered", ncells, &r);
    Ok(SearchResult {
        elapsed_ms: spent + r.elapsed_ms,
        ..r
    })
}

/// The layered proof's answer `l` as a search result without a line: unsolvable, or undecided (a win
/// without its line is undecided).
fn summary(l: &LayeredResult) -> SearchResult {
    SearchResult {
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
    }
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
            solver: Some(limits(20_000)),
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

    /// The wide beams of the cascade's default budget: deal 204545 with 1 cell, left undecided by pass
    /// 4 of 1-1,000,000 at 5 billion positions of layered proof, is missed by the beam of 100,000 within
    /// its 20 million positions and won by the beam of 1,000,000 within its 32 million, with a line
    /// replayed from the deal.
    #[test]
    fn the_widest_beam_wins_what_the_narrower_one_misses() {
        let layout = Layout::deal(204545).unwrap();
        let giant_beams = beams_within(CAPS.beams, WIDE_BEAM_POSITIONS)
            .iter()
            .map(|&(w, max_positions)| {
                let limits = Limits {
                    max_positions,
                    max_millis: None,
                };
                (w, limits)
            })
            .collect();
        let steps = Lookouts {
            giant_beams,
            layer_beam: Limits::default(),
            solver: None,
        };
        let beams = steps.beams(&layout, 1).unwrap();
        let outcomes: Vec<_> = beams.iter().map(|(_, r)| r.outcome).collect();
        assert_eq!(outcomes, [Outcome::Undecided, Outcome::Solved]);
        let won = &beams[1].1;
        assert!(won.positions <= CAPS.beams[1].1, "{}", won.positions);
        let check = crate::replay::replay(&layout, 1, &won.solution);
        assert!(check.is_ok(), "{check:?}");
    }

    /// A budget of wide beams takes them in order while their most positions fit in it: the default
    /// the first two, a budget of 92 million all three.
    #[test]
    fn a_budget_of_wide_beams_takes_them_in_order() {
        let widths = |budget| -> Vec<usize> {
            beams_within(GIANT_BEAMS, budget)
                .iter()
                .map(|&(w, _)| w)
                .collect()
        };
        assert_eq!(widths(0), Vec::<usize>::new());
        assert_eq!(widths(19_999_999), Vec::<usize>::new());
        assert_eq!(widths(20_000_000), [100_000]);
        assert_eq!(widths(WIDE_BEAM_POSITIONS), [100_000, 1_000_000]);
        assert_eq!(widths(91_999_999), [100_000, 1_000_000]);
        assert_eq!(widths(92_000_000), [100_000, 1_000_000, 3_000_000]);
        assert_eq!(widths(u64::MAX), [100_000, 1_000_000, 3_000_000]);
        assert_eq!(Prover::new().wide_beam_positions, WIDE_BEAM_POSITIONS);
    }

    /// On two threads the layered proof runs beside the prover and the searches for a line, in what
    /// they leave of the memory: the same answers as one after the other on one thread, the same lines
    /// where those searches find them, the same counts; over deals where the prover decides, where a
    /// search for a line does, and where the layered proof does (caps small enough for its turn to
    /// come in deals this small, and no wait before it starts, so that it is stopped by the others'
    /// answers too).
    #[test]
    fn the_layered_proof_beside_the_others_answers_as_in_order() {
        let caps = Caps {
            lean: 20_000,
            beams: &[(200, 5_000)],
            layer_beam: 10_000,
            solver: 10_000,
            race_after: Duration::ZERO,
            late_after: u64::MAX,
        };
        let limits = Limits {
            max_positions: 1_000_000,
            max_millis: None,
        };
        let answer = |deal: u64, ncells: usize, threads: usize| {
            let mut prover = Prover::new();
            prover.max_memory = Some(64 << 20);
            prover.layered_threads = threads;
            let layout = Layout::deal(deal).unwrap();
            let mut solver = Solver::new();
            let r = prove_within(
                &mut prover,
                &mut solver,
                &layout,
                ncells,
                limits,
                None,
                &caps,
            );
            let r = r.unwrap();
            let won = r.outcome == Outcome::Solved;
            // A line the layered proof found (after more positions than the others' caps) may be
            // another on other threads.
            let line: Vec<_> = r.solution.iter().map(|m| format!("{m:?}")).collect();
            let line = (won && r.positions <= caps.lean).then_some(line);
            let count = (r.outcome == Outcome::Unsolvable).then_some(r.positions);
            (r.outcome, count, line, won && r.positions > caps.lean)
        };
        let mut seen = std::collections::BTreeMap::new();
        for deal in 1..=30 {
            for ncells in [0, 1] {
                let alone = answer(deal, ncells, 1);
                assert_eq!(
                    answer(deal, ncells, 2),
                    alone,
                    "deal {deal}, {ncells} cells"
                );
                let kind = match alone {
                    (Outcome::Unsolvable, Some(n), ..) if n > caps.lean => "layered proof",
                    (Outcome::Unsolvable, ..) => "prover's proof",
                    (_, _, _, true) => "layered line",
                    (Outcome::Solved, ..) => "line",
                    _ => "undecided",
                };
                *seen.entry(kind).or_insert(0) += 1;
            }
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
        // Stopped by the others' line, or by the budget that ended them, the layered proof leaves
        // no checkpoint behind (the next search of these cells would go straight to it); one that
        // decides leaves none either.
        let cases = [
            (2, 1_000_000, Outcome::Solved),
            (12, 1_000_000, Outcome::Unsolvable),
            (5, 3_000, Outcome::Undecided),
        ];
        // Deal `deal` with 1 cell on two threads in 64 MB, resumable in `dir`: its outcome.
        let race_in = |deal: u64, max_positions: u64, dir: &std::path::Path| {
            let mut prover = Prover::new();
            prover.max_memory = Some(64 << 20);
            prover.layered_threads = 2;
            let layout = Layout::deal(deal).unwrap();
            let limits = Limits {
                max_positions,
                ..limits
            };
            let mut solver = Solver::new();
            prove_within(
                &mut prover,
                &mut solver,
                &layout,
                1,
                limits,
                Some(dir),
                &caps,
            )
            .unwrap()
        };
        for (deal, max_positions, outcome) in cases {
            let dir =
                std::env::temp_dir().join(format!("fcanalyze-race-{}-{deal}", std::process::id()));
            assert_eq!(
                race_in(deal, max_positions, &dir).outcome,
                outcome,
                "deal {deal}"
            );
            assert!(!dir.exists(), "deal {deal}: {dir:?} left behind");
        }
        // Deal `deal` with 1 cell stopped at 2,000 positions of its layered proof: the directory of
        // its checkpoint.
        let stopped = |deal: u64, name: &str| {
            let dir =
                std::env::temp_dir().join(format!("fcanalyze-race-{}-{name}", std::process::id()));
            let config = LayeredConfig {
                max_memory: Some(64 << 20),
                checkpoint_dir: Some(dir.clone()),
                ..LayeredConfig::default()
            };
            let first = Limits {
                max_positions: 2_000,
                ..limits
            };
            let l = prove_layered(&Layout::deal(deal).unwrap(), 1, first, &config).unwrap();
            assert_eq!(l.outcome, LayeredOutcome::Undecided(Budget::Positions));
            assert!(has_checkpoint(&dir), "deal {deal}: no checkpoint");
            dir
        };
        // A layered proof that goes on from a checkpoint of before keeps it when the others end
        // without an answer (their budget), and drops it when they answer (deal 2's line).
        for (deal, max_positions, kept) in [(5, 3_000, true), (2, 1_000_000, false)] {
            let dir = stopped(deal, &deal.to_string());
            let answered = race_in(deal, max_positions, &dir).outcome != Outcome::Undecided;
            assert_eq!((answered, dir.exists()), (!kept, kept), "deal {deal}");
            let _ = std::fs::remove_dir_all(&dir);
        }
        // A proof resumed after the others found nothing goes on without them, when their caps are
        // the same (not when the file says others), to the count made at once; a decision removes the
        // file with the proof's.
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-race-{}-looked", std::process::id()));
        let looked = looked_file(&dir);
        let at_once = race_in(12, 1_000_000, &dir);
        assert_eq!(at_once.outcome, Outcome::Unsolvable);
        for (other, runs) in [(false, 0), (true, 1)] {
            let looks = LOOKS.get();
            let r = race_in(12, 25_000, &dir);
            assert_eq!(r.outcome, Outcome::Undecided);
            assert!(has_checkpoint(&dir) && looked.exists());
            assert_eq!(LOOKS.get(), looks + 1);
            if other {
                std::fs::write(&looked, "fcanalyze-looked/1 other caps\n").unwrap();
            }
            let r = race_in(12, 1_000_000, &dir);
            assert_eq!(
                (r.outcome, r.positions),
                (Outcome::Unsolvable, at_once.positions)
            );
            assert_eq!(LOOKS.get(), looks + 1 + runs, "other caps: {other}");
            assert!(!dir.exists() && !looked.exists());
        }
        // A proof decided after going on from a checkpoint counts its time before (here a day, written
        // into the checkpoint) in the result's, as one after the other on one thread does.
        let dir = stopped(12, "time");
        let path = dir.join(crate::layered::CHECKPOINT_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let day = 86_400_000.0;
        let text: String = text
            .lines()
            .map(|line| match line.strip_prefix("elapsed_ms ") {
                Some(_) => format!("elapsed_ms {day}\n"),
                None => format!("{line}\n"),
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        let r = race_in(12, 1_000_000, &dir);
        assert_eq!(r.outcome, Outcome::Unsolvable);
        assert!(
            r.elapsed_ms >= day && r.elapsed_ms < day + 600_000.0,
            "{}",
            r.elapsed_ms
        );
        assert!(!dir.exists());
    }

    /// On one thread, resumable, the wide beams past the first and the heuristic solver wait for the
    /// layered proof's first positions: the same outcomes and counts as with them first; over deals the searches before
    /// it decide, that the layered proof decides within its first turn (no late beam), that a late beam
    /// wins after it (the proof's files gone), and that the layered proof decides after the late beams;
    /// a cell count decided leaves neither the proof's directory nor the list of beams tried.
    #[test]
    fn the_late_beams_wait_for_the_layered_proofs_first_turn() {
        let caps = |late_after| Caps {
            lean: 20_000,
            // The third is not asked for (`wide_beam_positions` below): all three would not wait.
            beams: &[(100, 3_000), (3_000, 150_000), (10_000, 1_000_000)],
            layer_beam: 5_000,
            solver: 5_000,
            race_after: Duration::ZERO,
            late_after,
        };
        let limits = Limits {
            max_positions: 5_000_000,
            max_millis: None,
        };
        let dir = |deal: u64, ncells: usize, late: bool| {
            std::env::temp_dir().join(format!(
                "fcanalyze-late-{}-{deal}-{ncells}-{late}",
                std::process::id()
            ))
        };
        let run = |deal: u64, ncells: usize, late_after: u64, dir: &Path| {
            let mut prover = Prover::new();
            prover.max_memory = Some(64 << 20);
            prover.wide_beam_positions = 153_000;
            let layout = Layout::deal(deal).unwrap();
            let r = prove_within(
                &mut prover,
                &mut Solver::new(),
                &layout,
                ncells,
                limits,
                Some(dir),
                &caps(late_after),
            )
            .unwrap();
            // A budget spent keeps them for a resume.
            let decided = r.outcome != Outcome::Undecided;
            assert!(
                !decided || !dir.exists(),
                "deal {deal}: {dir:?} left behind"
            );
            assert!(
                !decided || !tried_file(dir).exists(),
                "deal {deal}: the beams tried left behind"
            );
            let _ = std::fs::remove_dir_all(dir);
            let _ = std::fs::remove_file(tried_file(dir));
            if r.outcome == Outcome::Solved {
                let check = crate::replay::replay(&layout, ncells, &r.solution);
                assert!(check.is_ok(), "deal {deal}: {check:?}");
            }
            r
        };
        let after = 60_000;
        let mut seen = std::collections::BTreeMap::new();
        // Deals 1 and 2 decided before it; 12 in its first turn; 5 and 37 by the late beam; 27 after.
        for deal in [1, 2, 5, 12, 27, 37] {
            for ncells in [0, 1] {
                let first = run(deal, ncells, u64::MAX, &dir(deal, ncells, false));
                let late = run(deal, ncells, after, &dir(deal, ncells, true));
                assert_eq!(late.outcome, first.outcome, "deal {deal}, {ncells} cells");
                if first.outcome == Outcome::Unsolvable {
                    assert_eq!(late.positions, first.positions, "deal {deal}");
                }
                let kind = if late.outcome == Outcome::Undecided {
                    "undecided"
                } else if late.positions <= 20_000 {
                    "before"
                } else if late.outcome == Outcome::Unsolvable && late.positions <= after {
                    "in the first turn"
                } else if late.outcome == Outcome::Solved && late.positions <= 150_000 {
                    "a late beam"
                } else {
                    "after the late beams"
                };
                *seen.entry(kind).or_insert(0) += 1;
            }
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
        // Resumed from a checkpoint past the first turn (a run stopped there): the late searches not
        // listed as tried are tried first (deal 5's beam wins), those listed are not (deal 27 goes on
        // to its proof either way).
        for (deal, tried, won_by_beam) in [(5, false, true), (27, false, false), (27, true, false)]
        {
            let d = dir(deal, 1, true);
            let config = LayeredConfig {
                max_memory: Some(64 << 20),
                checkpoint_dir: Some(d.clone()),
                ..LayeredConfig::default()
            };
            let first = Limits {
                max_positions: after,
                ..limits
            };
            let layout = Layout::deal(deal).unwrap();
            let l = prove_layered(&layout, 1, first, &config).unwrap();
            assert_eq!(l.outcome, LayeredOutcome::Undecided(Budget::Positions));
            if tried {
                std::fs::write(tried_file(&d), "3000\n").unwrap();
            }
            let r = run(deal, 1, after, &d);
            let whole = run(deal, 1, u64::MAX, &dir(deal, 1, false));
            assert_eq!(r.outcome, whole.outcome, "deal {deal}");
            let by_beam = r.outcome == Outcome::Solved && r.positions <= 150_000;
            assert_eq!(by_beam, won_by_beam, "deal {deal}: {}", r.positions);
            if r.outcome == Outcome::Unsolvable {
                assert_eq!(r.positions, whole.positions, "deal {deal}");
            }
        }
    }

    /// The late searches wait only within a budget past their turn, and not for a cell count known to
    /// be a giant (every wide beam asked for).
    #[test]
    fn the_beams_of_a_known_giant_do_not_wait() {
        let limits = |max_positions| Limits {
            max_positions,
            max_millis: None,
        };
        let all = beams_within(CAPS.beams, 92_000_000);
        let default = beams_within(CAPS.beams, WIDE_BEAM_POSITIONS);
        assert_eq!(all.len(), CAPS.beams.len());
        assert!(waits(&CAPS, default, limits(LATE_BEAMS_AFTER + 1)));
        assert!(!waits(&CAPS, default, limits(LATE_BEAMS_AFTER)));
        assert!(!waits(&CAPS, all, limits(1_000_000_000_000)));
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
