//! `fcanalyze._core`: the thin binding of the Rust core. Only plain values cross: ints, strings, lists
//! and dicts. Every search runs with the GIL released, on a thread of its own while the caller's
//! thread watches for signals ([`interruptible`]), so that Ctrl-C stops a proof of hours. Core errors
//! are converted in one place ([`to_py`]): bad input becomes `ValueError`, a broken invariant becomes
//! `InternalError`.

use fccore::card::{self, NONE};
use fccore::outcome::{Budget, SearchResult, SolutionMove};
use fccore::position::{Layout, Move, FOUNDATION, MAX_CELLS};
use fccore::{Error, Limits, Solver, Strategy};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A broken invariant in the core: a bug, never bad input."
);

/// Stack of the thread a search runs on (as the main thread's).
const SEARCH_STACK: usize = 8 << 20;

/// Run `search` with the GIL released, on a thread of its own, while this thread runs Python's signal
/// handlers every 50 ms (Python runs them only between bytecodes, and a proof may take hours). When a
/// handler raises (Ctrl-C's `KeyboardInterrupt`, say), every search of the process is asked to stop
/// ([`fccore::interrupt`]) and the exception is raised once this one has ended: its result is thrown
/// away. A search that overlapped an interrupt raised elsewhere in the process raises
/// `KeyboardInterrupt` too, so that no interrupted search is ever reported, not even as undecided.
fn interruptible<T: Send>(py: Python<'_>, search: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let before = fccore::interrupt::count();
    let (out, raised) = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = channel();
            let worker = std::thread::Builder::new()
                .name("fcanalyze search".into())
                .stack_size(SEARCH_STACK)
                .spawn_scoped(s, move || {
                    let _ = tx.send(search());
                })
                .map_err(|e| PyOSError::new_err(format!("cannot start a search thread: {e}")))?;
            let mut raised = None;
            let out = loop {
                match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                    Ok(v) => break Some(v),
                    // The search panicked (its thread's end tells no more).
                    Err(RecvTimeoutError::Disconnected) => break None,
                    Err(RecvTimeoutError::Timeout) => {
                        if raised.is_none() {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                fccore::interrupt::raise();
                                raised = Some(e);
                            }
                        }
                    }
                }
            };
            let _ = worker.join();
            Ok::<_, PyErr>((out, raised))
        })
    })?;
    if let Some(e) = raised {
        fccore::interrupt::clear();
        return Err(e);
    }
    if fccore::interrupt::count() != before {
        return Err(PyKeyboardInterrupt::new_err("interrupted"));
    }
    out.ok_or_else(|| InternalError::new_err("a search panicked (a bug in the core)"))
}

fn to_py(e: Error) -> PyErr {
    if let Error::Io(m) = &e {
        PyOSError::new_err(m.clone())
    } else if e.is_user_error() {
        PyValueError::new_err(e.to_string())
    } else {
        InternalError::new_err(e.to_string())
    }
}

fn place_name(p: u8) -> String {
    match p {
        0..=7 => format!("col{}", p + 1),
        8..=15 => format!("cell{}", p - 7),
        _ => "foundation".to_string(),
    }
}

fn parse_place(s: &str) -> PyResult<u8> {
    let bad = || {
        PyValueError::new_err(format!(
            "bad place {s:?} (expected col1..col8, cell1..cell8 or foundation)"
        ))
    };
    if s == "foundation" {
        return Ok(FOUNDATION);
    }
    let (base, n) = if let Some(n) = s.strip_prefix("col") {
        (0u8, n)
    } else if let Some(n) = s.strip_prefix("cell") {
        (8u8, n)
    } else {
        return Err(bad());
    };
    match n.parse::<u8>() {
        Ok(i @ 1..=8) => Ok(base + i - 1),
        _ => Err(bad()),
    }
}

fn parse_card(s: &str) -> PyResult<u8> {
    card::parse(s).map_err(to_py)
}

/// A layout from a Python dict `{"columns": [[card, ...], ...], "cells": [card | None, ...],
/// "foundations": {"C": n, ...}}` (cells and foundations optional).
fn layout_from_dict(d: &Bound<'_, PyDict>) -> PyResult<Layout> {
    let mut layout = Layout::default();
    let columns = d
        .get_item("columns")?
        .ok_or_else(|| PyValueError::new_err("a position needs \"columns\""))?;
    for col in columns.try_iter()? {
        let mut v = Vec::new();
        for c in col?.try_iter()? {
            v.push(parse_card(&c?.extract::<String>()?)?);
        }
        layout.columns.push(v);
    }
    if let Some(cells) = d.get_item("cells")? {
        for c in cells.try_iter()? {
            let c = c?;
            layout.cells.push(if c.is_none() {
                NONE
            } else {
                parse_card(&c.extract::<String>()?)?
            });
        }
    }
    if let Some(f) = d.get_item("foundations")? {
        let f = f.downcast::<PyDict>()?;
        for (k, v) in f.iter() {
            let k: String = k.extract()?;
            let s = match k.to_ascii_uppercase().as_str() {
                "C" => 0,
                "D" => 1,
                "H" => 2,
                "S" => 3,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "bad foundation suit {k:?} (expected C, D, H or S)"
                    )))
                }
            };
            let n: i64 = v.extract()?;
            if !(0..=13).contains(&n) {
                return Err(PyValueError::new_err(format!(
                    "foundation {k} holds {n} cards; it holds 0 to 13"
                )));
            }
            layout.foundations[s] = n as u8;
        }
    }
    Ok(layout)
}

fn layout_from_source(source: &Bound<'_, PyAny>) -> PyResult<Layout> {
    if let Ok(d) = source.downcast::<PyDict>() {
        layout_from_dict(d)
    } else {
        Layout::deal(deal_number(source)?).map_err(to_py)
    }
}

fn deal_number(n: &Bound<'_, PyAny>) -> PyResult<u64> {
    let n: i128 = n
        .extract()
        .map_err(|_| PyValueError::new_err(format!("deal number must be an integer, not {n}")))?;
    if n < 1 || n > fccore::deal::MAX_DEAL as i128 {
        return Err(PyValueError::new_err(format!(
            "deal number {n} is out of range (deals are numbered 1 to {})",
            fccore::deal::MAX_DEAL
        )));
    }
    Ok(n as u64)
}

fn check_cells(cells: i64) -> PyResult<usize> {
    if !(0..=MAX_CELLS as i64).contains(&cells) {
        return Err(PyValueError::new_err(format!(
            "{cells} free cells requested; fcanalyze supports 0 to {MAX_CELLS}"
        )));
    }
    Ok(cells as usize)
}

/// `expected` lists the strategies the caller accepts, for the error message.
fn parse_strategy(s: &str, expected: &str) -> PyResult<Strategy> {
    match s {
        "solve" => Ok(Strategy::Solve),
        "prove" => Ok(Strategy::Prove),
        _ => Err(PyValueError::new_err(format!(
            "unknown strategy {s:?} (expected {expected})"
        ))),
    }
}

fn limits(max_positions: u64, time_limit_ms: Option<u64>) -> PyResult<Limits> {
    if max_positions == 0 {
        return Err(PyValueError::new_err("max_positions must be at least 1"));
    }
    Ok(Limits {
        max_positions,
        max_millis: time_limit_ms,
    })
}

fn budget_name(b: Option<Budget>) -> Option<&'static str> {
    b.map(|b| match b {
        Budget::Positions => "positions",
        Budget::Time => "time",
        Budget::Disk => "disk",
    })
}

fn move_dict<'py>(py: Python<'py>, m: &SolutionMove) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("from", place_name(m.mv.from))?;
    d.set_item("to", place_name(m.mv.to))?;
    d.set_item("count", m.mv.count)?;
    d.set_item("auto", m.auto)?;
    Ok(d)
}

fn moves_from_list(moves: &Bound<'_, PyAny>) -> PyResult<Vec<SolutionMove>> {
    let mut out = Vec::new();
    for m in moves.try_iter()? {
        let m = m?;
        let d = m.downcast::<PyDict>()?;
        let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            d.get_item(k)?
                .ok_or_else(|| PyValueError::new_err(format!("a move needs {k:?}")))
        };
        let count: i64 = match d.get_item("count")? {
            Some(c) => c.extract()?,
            None => 1,
        };
        if !(1..=52).contains(&count) {
            return Err(PyValueError::new_err(format!(
                "bad card count {count} in a move"
            )));
        }
        let auto = match d.get_item("auto")? {
            Some(a) => a.extract()?,
            None => false,
        };
        out.push(SolutionMove {
            mv: Move {
                from: parse_place(&get("from")?.extract::<String>()?)?,
                to: parse_place(&get("to")?.extract::<String>()?)?,
                count: count as u8,
            },
            auto,
        });
    }
    Ok(out)
}

fn result_dict<'py>(py: Python<'py>, r: &SearchResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("outcome", r.outcome.as_str())?;
    d.set_item("positions", r.positions)?;
    let moves = PyList::empty(py);
    for m in &r.solution {
        moves.append(move_dict(py, m)?)?;
    }
    d.set_item("moves", moves)?;
    d.set_item("move_count", r.player_moves())?;
    d.set_item("notation", fccore::notation::format(&r.solution))?;
    d.set_item("elapsed_ms", r.elapsed_ms)?;
    d.set_item("exhausted", budget_name(r.exhausted))?;
    Ok(d)
}

/// The layout of Microsoft deal `n`: 8 columns of card names, each from the buried card to the exposed one.
#[pyfunction]
fn deal(n: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
    let cols = fccore::deal::deal(deal_number(n)?).map_err(to_py)?;
    Ok(cols
        .iter()
        .map(|c| c.iter().map(|&x| card::name(x)).collect())
        .collect())
}

/// Check that a layout dict is a legal position for `cells` free cells; raise ValueError if not.
#[pyfunction]
fn validate(layout: &Bound<'_, PyDict>, cells: i64) -> PyResult<()> {
    let cells = check_cells(cells)?;
    layout_from_dict(layout)?.validate(cells).map_err(to_py)
}

/// Search a deal (int) or a position (layout dict). With `strategy="prove"`, `max_memory_mb` bounds the
/// prover's memory: past it the layered proof takes over (undecided if that runs out too).
#[pyfunction]
#[pyo3(signature = (source, cells=4, max_positions=10_000_000, time_limit_ms=None, strategy="solve", max_memory_mb=None))]
fn solve<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    cells: i64,
    max_positions: u64,
    time_limit_ms: Option<u64>,
    strategy: &str,
    max_memory_mb: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    // strategy="short": a short winning line as players count moves (fccore::short).
    if strategy == "short" {
        let cells = check_cells(cells)?;
        let layout = layout_from_source(source)?;
        let limits = limits(max_positions, time_limit_ms)?;
        let r = interruptible(py, || fccore::short::solve_short(&layout, cells, limits))?
            .map_err(to_py)?;
        return result_dict(py, &r);
    }
    let cells = check_cells(cells)?;
    let layout = layout_from_source(source)?;
    let strategy = parse_strategy(strategy, "\"solve\", \"prove\" or \"short\"")?;
    let limits = limits(max_positions, time_limit_ms)?;
    let r = interruptible(py, || {
        let mut engines = Engines {
            max_memory: max_memory_mb.map(|m| (m as usize) << 20),
            ..Engines::default()
        };
        engines.search(&layout, cells, strategy, limits)
    })?
    .map_err(to_py)?;
    result_dict(py, &r)
}

/// Search many deals in one call (GIL released): returns columns `deal`, `outcome`, `positions`,
/// `moves` (player moves of the solution, 0 when not solved), `elapsed_ms`, `solution` (notation).
#[pyfunction]
#[pyo3(signature = (deals, cells=4, max_positions=10_000_000, time_limit_ms=None, strategy="solve"))]
fn solve_deals<'py>(
    py: Python<'py>,
    deals: Vec<u64>,
    cells: i64,
    max_positions: u64,
    time_limit_ms: Option<u64>,
    strategy: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let cells = check_cells(cells)?;
    let strategy = parse_strategy(strategy, "\"solve\" or \"prove\"")?;
    let limits = limits(max_positions, time_limit_ms)?;
    let results = interruptible(py, || -> Result<Vec<SearchResult>, Error> {
        let mut engines = Engines::default();
        deals
            .iter()
            .map(|&n| engines.search(&Layout::deal(n)?, cells, strategy, limits))
            .collect()
    })?;
    let results = results.map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("deal", &deals)?;
    d.set_item(
        "outcome",
        results
            .iter()
            .map(|r| r.outcome.as_str())
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "positions",
        results.iter().map(|r| r.positions).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "moves",
        results
            .iter()
            .map(|r| r.player_moves() as u32)
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "elapsed_ms",
        results.iter().map(|r| r.elapsed_ms).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "solution",
        results
            .iter()
            .map(|r| fccore::notation::format(&r.solution))
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// Replay moves (dicts with from/to/count/auto) from a deal or layout with the core's independent
/// replay; returns (ok, index of the first bad move or None, reason or None).
#[pyfunction]
fn replay(
    source: &Bound<'_, PyAny>,
    cells: i64,
    moves: &Bound<'_, PyAny>,
) -> PyResult<(bool, Option<usize>, Option<String>)> {
    let cells = check_cells(cells)?;
    let layout = layout_from_source(source)?;
    let moves = moves_from_list(moves)?;
    Ok(match fccore::replay::replay(&layout, cells, &moves) {
        Ok(()) => (true, None, None),
        Err(e) => (false, Some(e.index), Some(e.reason)),
    })
}

fn layout_dict<'py>(py: Python<'py>, layout: &Layout) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let cols: Vec<Vec<String>> = layout
        .columns
        .iter()
        .map(|c| c.iter().map(|&x| card::name(x)).collect())
        .collect();
    d.set_item("columns", cols)?;
    let cells: Vec<Option<String>> = layout
        .cells
        .iter()
        .map(|&c| if c == NONE { None } else { Some(card::name(c)) })
        .collect();
    d.set_item("cells", cells)?;
    let f = PyDict::new(py);
    for (i, s) in ["C", "D", "H", "S"].iter().enumerate() {
        f.set_item(*s, layout.foundations[i])?;
    }
    d.set_item("foundations", f)?;
    Ok(d)
}

fn auto_list<'py>(py: Python<'py>, autos: &[Move]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for &mv in autos {
        list.append(move_dict(py, &SolutionMove { mv, auto: true })?)?;
    }
    Ok(list)
}

/// The search's view of a position, for cross-checks: the automatic moves that settle it, the settled
/// layout, and every move the search generates from there with its automatic moves and the layout it
/// leads to: `(autos, layout, [(move, autos, layout), ...])`.
#[pyfunction]
fn successors<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    cells: i64,
) -> PyResult<Bound<'py, PyAny>> {
    let cells = check_cells(cells)?;
    let layout = layout_from_source(source)?;
    let (mut p, origin) = fccore::Position::from_layout(&layout, cells).map_err(to_py)?;
    let mut autos = Vec::new();
    p.settle(Some(&mut autos));
    let mut moves = Vec::new();
    p.moves(&mut moves);
    let out = PyList::empty(py);
    for &m in &moves {
        let mut q = p;
        q.apply(m, &origin);
        let mut log = Vec::new();
        q.settle(Some(&mut log));
        let item = (
            move_dict(py, &SolutionMove { mv: m, auto: false })?,
            auto_list(py, &log)?,
            layout_dict(py, &q.layout())?,
        );
        out.append(item)?;
    }
    Ok((auto_list(py, &autos)?, layout_dict(py, &p.layout())?, out)
        .into_pyobject(py)?
        .into_any())
}

/// Standard notation of the player moves among `moves` (dicts).
#[pyfunction]
fn format_notation(moves: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(fccore::notation::format(&moves_from_list(moves)?))
}

/// Player moves (dicts, `auto` False) from standard notation.
#[pyfunction]
fn parse_notation<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for mv in fccore::notation::parse(text).map_err(to_py)? {
        list.append(move_dict(py, &SolutionMove { mv, auto: false })?)?;
    }
    Ok(list)
}

// ---- Exact classification and the lean prover ---------------------------------------------------------
// `strategy="prove"` in `solve` and `solve_deals` runs the lean prover (`fccore::prove`); `classify`
// decides a deal's minimum number of free cells (`fccore::classify`).

/// The engines of `solve` and `solve_deals`, kept from one deal to the next: the heuristic solver for
/// `strategy="solve"`, the lean prover for `strategy="prove"`.
#[derive(Default)]
struct Engines {
    solver: Option<Solver>,
    prover: Option<fccore::prove::Prover>,
    /// The prover's memory; past it the layered proof takes over.
    max_memory: Option<usize>,
}

impl Engines {
    fn search(
        &mut self,
        layout: &Layout,
        cells: usize,
        strategy: Strategy,
        limits: Limits,
    ) -> Result<SearchResult, Error> {
        match strategy {
            Strategy::Prove => {
                let prover = self.prover.get_or_insert_with(fccore::prove::Prover::new);
                prover.max_memory = self.max_memory;
                let solver = self.solver.get_or_insert_with(Solver::new);
                fccore::cascade::prove_bounded(prover, solver, layout, cells, limits, None)
            }
            _ => self
                .solver
                .get_or_insert_with(Solver::new)
                .search(layout, cells, strategy, limits),
        }
    }
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
#[pyfunction]
#[pyo3(signature = (source, max_cells=4, max_positions=400_000_000, time_limit_ms=None, solve_positions=None, max_memory_mb=None, checkpoint_dir=None, threads=1))]
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
) -> PyResult<Bound<'py, PyList>> {
    let max_cells = check_cells(max_cells)?;
    let layout = layout_from_source(source)?;
    let base = limits(max_positions, time_limit_ms)?;
    let defaults = fccore::classify::ClassifyLimits::default();
    let climits = fccore::classify::ClassifyLimits {
        solve_positions: solve_positions.unwrap_or(defaults.solve_positions).max(1),
        max_positions: base.max_positions,
        max_millis: base.max_millis,
        ..defaults
    };
    let c = interruptible(py, || {
        let mut classifier = fccore::classify::Classifier::new();
        classifier.prover.max_memory = max_memory_mb.map(|m| (m as usize) << 20);
        classifier.checkpoint_dir = checkpoint_dir;
        classifier.prover.layered_threads = threads.max(1);
        classifier.classify(&layout, max_cells, climits)
    })?
    .map_err(to_py)?;
    let out = PyList::empty(py);
    for s in &c.searches {
        let d = result_dict(py, &s.result)?;
        d.set_item("cells", s.cells)?;
        out.append(d)?;
    }
    Ok(out)
}

fn add_prove_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(classify, m)?)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_DEAL", fccore::deal::MAX_DEAL)?;
    m.add("MAX_CELLS", MAX_CELLS)?;
    m.add("BYTES_PER_POSITION", fccore::store::BYTES_PER_POSITION)?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_function(wrap_pyfunction!(deal, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_deals, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(format_notation, m)?)?;
    m.add_function(wrap_pyfunction!(successors, m)?)?;
    m.add_function(wrap_pyfunction!(parse_notation, m)?)?;
    add_prove_functions(m)?;
    Ok(())
}
