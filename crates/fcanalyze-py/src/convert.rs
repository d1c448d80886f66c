//! Values between Python and the core: layouts, moves and cards from Python (dicts, lists, strings),
//! the checks of plain arguments (deal numbers, cell counts, budgets, strategies), and results back as
//! dicts, lists and columns. Only plain values cross.

use fccore::Autoplay;
use fccore::Classification;
use fccore::{card_name, NONE};
use fccore::{Budget, SearchResult, SolutionMove};
use fccore::{Layout, Move, FOUNDATION, MAX_CELLS};
use fccore::{Limits, Strategy};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::engines::Successor;
use crate::errors::to_py;

pub fn place_name(p: u8) -> String {
    match p {
        0..=7 => format!("col{}", p + 1),
        8..=15 => format!("cell{}", p - 7),
        _ => "foundation".to_string(),
    }
}

pub fn parse_place(s: &str) -> PyResult<u8> {
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

pub fn parse_card(s: &str) -> PyResult<u8> {
    fccore::parse_card(s).map_err(to_py)
}

/// A layout from a Python dict `{"columns": [[card, ...], ...], "cells": [card | None, ...],
/// "foundations": {"C": n, ...}}` (cells and foundations optional).
pub fn layout_from_dict(d: &Bound<'_, PyDict>) -> PyResult<Layout> {
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

pub fn layout_from_source(source: &Bound<'_, PyAny>) -> PyResult<Layout> {
    if let Ok(d) = source.downcast::<PyDict>() {
        layout_from_dict(d)
    } else {
        Layout::deal(deal_number(source)?).map_err(to_py)
    }
}

/// [`layout_from_source`] played under the automatic moves named `autoplay` (`"safe"` or `"max"`).
pub fn layout_under(source: &Bound<'_, PyAny>, autoplay: &str) -> PyResult<Layout> {
    let rules = parse_autoplay(autoplay)?;
    Ok(layout_from_source(source)?.with_autoplay(rules))
}

/// The rules of automatic moves named `name` (`"safe"` or `"max"`); ValueError for any other name.
pub fn parse_autoplay(name: &str) -> PyResult<Autoplay> {
    Autoplay::parse(name).map_err(to_py)
}

pub fn deal_number(n: &Bound<'_, PyAny>) -> PyResult<u64> {
    let n: i128 = n
        .extract()
        .map_err(|_| PyValueError::new_err(format!("deal number must be an integer, not {n}")))?;
    if n < 1 || n > fccore::MAX_DEAL as i128 {
        return Err(PyValueError::new_err(format!(
            "deal number {n} is out of range (deals are numbered 1 to {})",
            fccore::MAX_DEAL
        )));
    }
    Ok(n as u64)
}

pub fn check_cells(cells: i64) -> PyResult<usize> {
    if !(0..=MAX_CELLS as i64).contains(&cells) {
        return Err(PyValueError::new_err(format!(
            "{cells} free cells requested; fcanalyze supports 0 to {MAX_CELLS}"
        )));
    }
    Ok(cells as usize)
}

/// `expected` lists the strategies the caller accepts, for the error message.
pub fn parse_strategy(s: &str, expected: &str) -> PyResult<Strategy> {
    match s {
        "solve" => Ok(Strategy::Solve),
        "prove" => Ok(Strategy::Prove),
        _ => Err(PyValueError::new_err(format!(
            "unknown strategy {s:?} (expected {expected})"
        ))),
    }
}

pub fn limits(max_positions: u64, time_limit_ms: Option<u64>) -> PyResult<Limits> {
    if max_positions == 0 {
        return Err(PyValueError::new_err("max_positions must be at least 1"));
    }
    Ok(Limits {
        max_positions,
        max_millis: time_limit_ms,
    })
}

pub fn budget_name(b: Option<Budget>) -> Option<&'static str> {
    b.map(|b| match b {
        Budget::Positions => "positions",
        Budget::Time => "time",
        Budget::Disk => "disk",
    })
}

pub fn move_dict<'py>(py: Python<'py>, m: &SolutionMove) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("from", place_name(m.mv.from))?;
    d.set_item("to", place_name(m.mv.to))?;
    d.set_item("count", m.mv.count)?;
    d.set_item("auto", m.auto)?;
    Ok(d)
}

pub fn moves_from_list(moves: &Bound<'_, PyAny>) -> PyResult<Vec<SolutionMove>> {
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

pub fn result_dict<'py>(py: Python<'py>, r: &SearchResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("outcome", r.outcome.as_str())?;
    d.set_item("positions", r.positions)?;
    let moves = PyList::empty(py);
    for m in &r.solution {
        moves.append(move_dict(py, m)?)?;
    }
    d.set_item("moves", moves)?;
    d.set_item("move_count", r.player_moves())?;
    d.set_item("notation", fccore::format_line(&r.solution))?;
    d.set_item("elapsed_ms", r.elapsed_ms)?;
    d.set_item("exhausted", budget_name(r.exhausted))?;
    Ok(d)
}

pub fn layout_dict<'py>(py: Python<'py>, layout: &Layout) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let cols: Vec<Vec<String>> = layout
        .columns
        .iter()
        .map(|c| c.iter().map(|&x| card_name(x)).collect())
        .collect();
    d.set_item("columns", cols)?;
    let cells: Vec<Option<String>> = layout
        .cells
        .iter()
        .map(|&c| if c == NONE { None } else { Some(card_name(c)) })
        .collect();
    d.set_item("cells", cells)?;
    let f = PyDict::new(py);
    for (i, s) in ["C", "D", "H", "S"].iter().enumerate() {
        f.set_item(*s, layout.foundations[i])?;
    }
    d.set_item("foundations", f)?;
    Ok(d)
}

pub fn auto_list<'py>(py: Python<'py>, autos: &[Move]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for &mv in autos {
        list.append(move_dict(py, &SolutionMove { mv, auto: true })?)?;
    }
    Ok(list)
}

/// A deal's columns as card names, each from the buried card to the exposed one.
pub fn column_names(cols: &[Vec<u8>]) -> Vec<Vec<String>> {
    cols.iter()
        .map(|c| c.iter().map(|&x| card_name(x)).collect())
        .collect()
}

/// Results of many deals as columns: `deal`, `outcome`, `positions`, `moves` (player moves of the
/// solution, 0 when not solved), `elapsed_ms`, `exhausted` (the budget that ran out) and, if
/// `solutions`, `solution` (notation).
pub fn result_columns<'py>(
    py: Python<'py>,
    deals: &[u64],
    results: &[SearchResult],
    solutions: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("deal", deals)?;
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
        "exhausted",
        results
            .iter()
            .map(|r| budget_name(r.exhausted))
            .collect::<Vec<_>>(),
    )?;
    if solutions {
        d.set_item(
            "solution",
            results
                .iter()
                .map(|r| fccore::format_line(&r.solution))
                .collect::<Vec<_>>(),
        )?;
    }
    Ok(d)
}

/// A classification as one dict per cell count searched, by cell count: [`result_dict`] plus `cells`.
pub fn classification_list<'py>(
    py: Python<'py>,
    c: &Classification,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in &c.searches {
        let d = result_dict(py, &s.result)?;
        d.set_item("cells", s.cells)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Player moves (dicts, `auto` False).
pub fn player_move_list<'py>(py: Python<'py>, moves: &[Move]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for &mv in moves {
        list.append(move_dict(py, &SolutionMove { mv, auto: false })?)?;
    }
    Ok(list)
}

/// A position's successors as `(autos, layout, [(move, autos, layout), ...])`: the automatic moves that
/// settle it, the settled layout, and each move with its automatic moves and the layout it leads to.
pub fn successors_value<'py>(
    py: Python<'py>,
    autos: &[Move],
    settled: &Layout,
    next: &[Successor],
) -> PyResult<Bound<'py, PyAny>> {
    let out = PyList::empty(py);
    for (m, log, layout) in next {
        let item = (
            move_dict(
                py,
                &SolutionMove {
                    mv: *m,
                    auto: false,
                },
            )?,
            auto_list(py, log)?,
            layout_dict(py, layout)?,
        );
        out.append(item)?;
    }
    Ok((auto_list(py, autos)?, layout_dict(py, settled)?, out)
        .into_pyobject(py)?
        .into_any())
}
