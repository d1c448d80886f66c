//! `fcanalyze._core`: the thin binding of the Rust core. Only plain values cross: ints, strings, lists
//! and dicts ([`convert`]). Every search runs with the GIL released, on a thread of its own while the
//! caller's thread watches for signals ([`interrupt::interruptible`]), so that Ctrl-C stops a proof of
//! hours. Core errors are converted in one place ([`errors::to_py`]): bad input becomes `ValueError`, a
//! broken invariant becomes `InternalError`. The searches themselves, in plain Rust, are in
//! [`engines`].

mod convert;
mod engines;
mod errors;
mod interrupt;

use fccore::ClassifyLimits;
use fccore::Error;
use fccore::SearchResult;
use fccore::{Layout, MAX_CELLS};
use fccore::{Outcome, ShortConfig, ShortSolver};
use fccore::{Shortener, Shortening};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use convert::{
    check_cells, layout_from_dict, layout_under, limits, parse_autoplay, parse_strategy,
    result_dict,
};
use engines::{ClassifyRun, Engines};
use errors::{to_py, InternalError};
use interrupt::interruptible;

/// The layout of Microsoft deal `n`: 8 columns of card names, each from the buried card to the exposed one.
#[pyfunction]
fn deal(n: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
    let cols = fccore::deal(convert::deal_number(n)?).map_err(to_py)?;
    Ok(convert::column_names(&cols))
}

/// Check that a layout dict is a legal position for `cells` free cells; raise ValueError if not.
#[pyfunction]
fn validate(layout: &Bound<'_, PyDict>, cells: i64) -> PyResult<()> {
    let cells = check_cells(cells)?;
    layout_from_dict(layout)?.validate(cells).map_err(to_py)
}

/// Search a deal (int) or a position (layout dict) under the automatic moves `autoplay` (`"safe"`,
/// SPEC §2, or `"max"`). With `strategy="prove"`, `max_memory_mb` bounds the prover's memory: past it
/// the layered proof takes over (undecided if that runs out too); the proof runs on `threads` threads
/// (a proof's count is the same whatever they are).
#[pyfunction]
#[pyo3(signature = (source, cells=4, max_positions=10_000_000, time_limit_ms=None, strategy="solve", max_memory_mb=None, threads=1, autoplay="safe"))]
#[allow(clippy::too_many_arguments)]
fn solve<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    cells: i64,
    max_positions: u64,
    time_limit_ms: Option<u64>,
    strategy: &str,
    max_memory_mb: Option<u64>,
    threads: usize,
    autoplay: &str,
) -> PyResult<Bound<'py, PyDict>> {
    // strategy="short": a short winning line as players count moves (fccore::short); "shortest":
    // the same search going on until no shorter line can exist, or the budget, with the least number
    // of moves it proved every line takes (`lower_bound`, equal to the line's when it is a shortest).
    if strategy == "short" || strategy == "shortest" {
        let cells = check_cells(cells)?;
        let layout = layout_under(source, autoplay)?;
        let limits = limits(max_positions, time_limit_ms)?;
        let mut solver = ShortSolver::new();
        if strategy == "shortest" {
            solver.config = ShortConfig::shortest();
        }
        let r = interruptible(py, || solver.solve(&layout, cells, limits))?.map_err(to_py)?;
        let d = result_dict(py, &r)?;
        if strategy == "shortest" {
            let bound = match r.outcome {
                Outcome::Solved => Some(solver.lower_bound),
                _ => None,
            };
            if let Some(b) = bound.filter(|&b| b as usize > r.player_moves()) {
                return Err(InternalError::new_err(format!(
                    "the shortest-line search proved {b} moves at least, and its line has {}",
                    r.player_moves()
                )));
            }
            d.set_item("lower_bound", bound)?;
        }
        return Ok(d);
    }
    let cells = check_cells(cells)?;
    let layout = layout_under(source, autoplay)?;
    let strategy = parse_strategy(strategy, "\"solve\", \"prove\", \"short\" or \"shortest\"")?;
    let limits = limits(max_positions, time_limit_ms)?;
    let r = interruptible(py, || {
        let mut engines = Engines::with_memory(max_memory_mb.map(|m| (m as usize) << 20), threads);
        engines.search(&layout, cells, strategy, limits)
    })?
    .map_err(to_py)?;
    result_dict(py, &r)
}

/// Search many deals in one call (GIL released): returns columns `deal`, `outcome`, `positions`,
/// `moves` (player moves of the solution, 0 when not solved), `elapsed_ms`, `exhausted` (the budget
/// that ran out, or None) and, unless `solutions` is false, `solution` (notation). Every solution is
/// replayed by the core's independent replay before it is counted, whether or not it is returned.
/// With `shorten_width` or `shorten_positions`, each line is shortened (`fccore::Shortener`, the
/// other default taken from `SHORTEN_WIDTH` / `SHORTEN_POSITIONS`) before it is counted; `positions`
/// and `elapsed_ms` stay the search's. `autoplay`: the automatic moves (`"safe"` or `"max"`).
#[pyfunction]
#[pyo3(signature = (deals, cells=4, max_positions=10_000_000, time_limit_ms=None, strategy="solve", solutions=true, autoplay="safe", shorten_width=None, shorten_positions=None))]
#[allow(clippy::too_many_arguments)]
fn solve_deals<'py>(
    py: Python<'py>,
    deals: Vec<u64>,
    cells: i64,
    max_positions: u64,
    time_limit_ms: Option<u64>,
    strategy: &str,
    solutions: bool,
    autoplay: &str,
    shorten_width: Option<usize>,
    shorten_positions: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let cells = check_cells(cells)?;
    let rules = parse_autoplay(autoplay)?;
    let strategy = parse_strategy(strategy, "\"solve\" or \"prove\"")?;
    let limits = limits(max_positions, time_limit_ms)?;
    let shorten = (shorten_width.is_some() || shorten_positions.is_some())
        .then(|| shortening(shorten_width, shorten_positions, Shortening::default()))
        .transpose()?;
    let results = interruptible(py, || -> Result<Vec<SearchResult>, Error> {
        let mut engines = Engines::default();
        let mut shortener = shorten.map(|budget| (Shortener::new(), budget));
        deals
            .iter()
            .map(|&n| {
                let layout = Layout::deal(n)?.with_autoplay(rules);
                let mut r = engines.search(&layout, cells, strategy, limits)?;
                if let Some((s, budget)) = shortener.as_mut() {
                    s.shorten_result(&layout, cells, &mut r, *budget)?;
                }
                Ok(r)
            })
            .collect()
    })?;
    let results = results.map_err(to_py)?;
    convert::result_columns(py, &deals, &results, solutions)
}

/// A shortening budget: `width` and `max_positions`, each `default`'s when None.
fn shortening(
    width: Option<usize>,
    max_positions: Option<u64>,
    default: Shortening,
) -> PyResult<Shortening> {
    let s = Shortening {
        width: width.unwrap_or(default.width),
        max_positions: max_positions.unwrap_or(default.max_positions),
        ..default
    };
    if s.width == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the shortening's width must be at least 1",
        ));
    }
    Ok(s)
}

/// A winning line (move dicts, automatic moves optional) from a deal or layout, shortened
/// (`fccore::Shortener`: beams of `width` around the line, storing at most `max_positions` positions
/// in all) and replayed by the core: never longer than the line given. Raises ValueError when the line
/// does not win. `autoplay`: the automatic moves (`"safe"` or `"max"`). `like`: whose shortening
/// (`"bulk"`, `solve_deals`'; `"classify"`, a classification's: its defaults, its beams' weights, and
/// a line it leaves long searched for again by beams, then shortened wider,
/// `fccore::classify_short_line`).
#[pyfunction]
#[pyo3(signature = (source, cells, moves, width=None, max_positions=None, autoplay="safe", like="bulk"))]
#[allow(clippy::too_many_arguments)]
fn shorten<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    cells: i64,
    moves: &Bound<'py, PyAny>,
    width: Option<usize>,
    max_positions: Option<u64>,
    autoplay: &str,
    like: &str,
) -> PyResult<Bound<'py, PyList>> {
    let cells = check_cells(cells)?;
    let layout = layout_under(source, autoplay)?;
    let moves = convert::moves_from_list(moves)?;
    let default = match like {
        "bulk" => Shortening::default(),
        "classify" => fccore::CLASSIFY_SHORTEN,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "like={like:?} names no shortening (bulk or classify)"
            )))
        }
    };
    let budget = shortening(width, max_positions, default)?;
    if let Err(e) = fccore::replay(&layout, cells, &moves) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "the line to shorten fails at move {}: {}",
            e.index, e.reason
        )));
    }
    // A classification's line that stays long is searched for again, as `classify` does.
    let classify = like == "classify";
    let line = interruptible(py, || {
        if classify {
            let mut shortener = fccore::Shortener::new();
            fccore::classify_short_line(
                &mut shortener,
                &layout,
                cells,
                &moves,
                budget,
                fccore::CLASSIFY_BEAMS,
            )
            .map(|(line, _)| line)
        } else {
            fccore::shorten(&layout, cells, &moves, budget)
        }
    })?
    .map_err(to_py)?;
    let out = PyList::empty(py);
    for m in &line {
        out.append(convert::move_dict(py, m)?)?;
    }
    Ok(out)
}

/// Replay moves (dicts with from/to/count/auto) from a deal or layout with the core's independent
/// replay, under the automatic moves `autoplay`; returns (ok, index of the first bad move or None,
/// reason or None).
#[pyfunction]
#[pyo3(signature = (source, cells, moves, autoplay="safe"))]
fn replay(
    source: &Bound<'_, PyAny>,
    cells: i64,
    moves: &Bound<'_, PyAny>,
    autoplay: &str,
) -> PyResult<(bool, Option<usize>, Option<String>)> {
    let cells = check_cells(cells)?;
    let layout = layout_under(source, autoplay)?;
    let moves = convert::moves_from_list(moves)?;
    Ok(match fccore::replay(&layout, cells, &moves) {
        Ok(()) => (true, None, None),
        Err(e) => (false, Some(e.index), Some(e.reason)),
    })
}

/// The search's view of a position, for cross-checks: the automatic moves that settle it, the settled
/// layout, and every move the search generates from there with its automatic moves and the layout it
/// leads to: `(autos, layout, [(move, autos, layout), ...])`, under the automatic moves `autoplay`.
#[pyfunction]
#[pyo3(signature = (source, cells, autoplay="safe"))]
fn successors<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    cells: i64,
    autoplay: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let cells = check_cells(cells)?;
    let layout = layout_under(source, autoplay)?;
    let (autos, settled, next) = engines::successors(&layout, cells).map_err(to_py)?;
    convert::successors_value(py, &autos, &settled, &next)
}

/// Standard notation of the player moves among `moves` (dicts).
#[pyfunction]
fn format_notation(moves: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(fccore::format_line(&convert::moves_from_list(moves)?))
}

/// Player moves (dicts, `auto` False) from standard notation.
#[pyfunction]
fn parse_notation<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
    let moves = fccore::parse_line(text).map_err(to_py)?;
    convert::player_move_list(py, &moves)
}

/// Classify a deal (int) or a position (layout dict): the least number of free cells in 0..`max_cells`
/// that solves it, proven (SPEC §4). Returns one dict per cell count searched, by cell count, shaped
/// like `solve`'s result plus `cells`: the solved ones carry their line, the unsolvable ones are proofs
/// (`positions` is the reachable set's size), an undecided one hit a budget. Cell counts settled by
/// monotonicity are not searched. `max_positions` and `time_limit_ms` bound each search;
/// `max_memory_mb` bounds the prover's memory (running out is undecided, never unsolvable).
/// `checkpoint_dir`: where a layered proof keeps resumable files (a classification killed in the middle
/// of one goes on from its last checkpoint when called again with the same directory). `threads`: the
/// threads of a layered proof (they share its memory; the count is the same whatever they are).
/// `autoplay`: the automatic moves (`"safe"` or `"max"`). The line with the least cells is shortened
/// (beams of `shorten_width` storing at most `shorten_positions` positions; None:
/// `CLASSIFY_SHORTEN_WIDTH` / `CLASSIFY_SHORTEN_POSITIONS`; `shorten_positions=0`: the line as found).
/// `wide_beam_positions`: most positions, in all, of the wide beams that look for a line before a giant
/// proof (None: `WIDE_BEAM_POSITIONS`).
#[pyfunction]
#[pyo3(signature = (source, max_cells=4, max_positions=400_000_000, time_limit_ms=None, solve_positions=None, max_memory_mb=None, checkpoint_dir=None, threads=1, autoplay="safe", shorten_width=None, shorten_positions=None, wide_beam_positions=None))]
#[allow(clippy::too_many_arguments)]
fn classify<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    max_cells: i64,
    max_positions: u64,
    time_limit_ms: Option<u64>,
    solve_positions: Option<u64>,
    max_memory_mb: Option<u64>,
    checkpoint_dir: Option<std::path::PathBuf>,
    threads: usize,
    autoplay: &str,
    shorten_width: Option<usize>,
    shorten_positions: Option<u64>,
    wide_beam_positions: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let max_cells = check_cells(max_cells)?;
    let layout = layout_under(source, autoplay)?;
    let base = limits(max_positions, time_limit_ms)?;
    let defaults = ClassifyLimits::default();
    let climits = ClassifyLimits {
        solve_positions: solve_positions.unwrap_or(defaults.solve_positions).max(1),
        max_positions: base.max_positions,
        max_millis: base.max_millis,
        shorten: match shorten_positions {
            Some(0) => None,
            _ => Some(shortening(
                shorten_width,
                shorten_positions,
                fccore::CLASSIFY_SHORTEN,
            )?),
        },
        ..defaults
    };
    let run = ClassifyRun {
        max_memory: max_memory_mb.map(|m| (m as usize) << 20),
        checkpoint_dir,
        threads,
        wide_beam_positions: wide_beam_positions.unwrap_or(fccore::WIDE_BEAM_POSITIONS),
    };
    let c = interruptible(py, || run.classify(&layout, max_cells, climits))?.map_err(to_py)?;
    convert::classification_list(py, &c)
}

/// Lend this process's layered proofs `threads` threads: every one running or to come searches its
/// next layers on that many instead of the threads it was given (0: back to those). The counts do not
/// depend on the threads; the memory budget stays each proof's.
#[pyfunction]
fn lend_threads(threads: usize) {
    fccore::lend_threads(threads.min(MAX_LENT_THREADS));
}

/// The threads lent to this process's layered proofs (0: none).
#[pyfunction]
fn lent_threads() -> usize {
    fccore::lent_threads()
}

/// More threads than any machine this runs on has cores: a bound on a lent count read from outside.
const MAX_LENT_THREADS: usize = 1024;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_DEAL", fccore::MAX_DEAL)?;
    m.add("MAX_CELLS", MAX_CELLS)?;
    m.add("BYTES_PER_POSITION", fccore::BYTES_PER_POSITION)?;
    m.add("SHORTEN_WIDTH", Shortening::default().width)?;
    m.add("SHORTEN_POSITIONS", Shortening::default().max_positions)?;
    m.add("CLASSIFY_SHORTEN_WIDTH", fccore::CLASSIFY_SHORTEN.width)?;
    m.add(
        "CLASSIFY_SHORTEN_POSITIONS",
        fccore::CLASSIFY_SHORTEN.max_positions,
    )?;
    m.add("WIDE_BEAM_POSITIONS", fccore::WIDE_BEAM_POSITIONS)?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_function(wrap_pyfunction!(deal, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_deals, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(format_notation, m)?)?;
    m.add_function(wrap_pyfunction!(successors, m)?)?;
    m.add_function(wrap_pyfunction!(parse_notation, m)?)?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(shorten, m)?)?;
    m.add_function(wrap_pyfunction!(lend_threads, m)?)?;
    m.add_function(wrap_pyfunction!(lent_threads, m)?)?;
    Ok(())
}
