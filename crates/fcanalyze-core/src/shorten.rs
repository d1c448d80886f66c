//! Short lines in bulk: a winning line found by a fast search (often 60 to thousands of moves) made
//! short, cheaply, within a budget of positions, so that tables store lines a player would want.
//!
//! First a card's two moves are merged into one wherever the line allows it ([`crate::merge`]), at the
//! cost of a few replays. Then the line is searched *around*: narrow beams over layers of equal move
//! count, ranked by the short search's estimate of the moves left (the features of
//! [`crate::short::features`]), where reaching a position of the line is a shortcut to its known
//! remainder. A beam from the start either finds a sorted position (usually, with 4 free cells: its own
//! short line replaces the whole tail) or reaches a later position of the line in fewer moves (the line
//! is spliced there, and the next beam starts from the splice). A beam that finds neither moves the
//! start a few positions on. Every beam drops the positions that cannot beat the best line so far
//! (moves made + runs holding a blocked card, [`crate::short::F_RUNS`]). The beams' line is merged
//! once more.
//!
//! The work is bounded by [`Shortening::max_positions`], the positions stored by all the beams of one
//! line together: no clock decides anything, so a table made twice stores the same lines. The result is
//! never longer than the line given, and it is replayed by [`crate::replay`] before it is returned.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::layout::Layout;
use crate::outcome::{Outcome, SearchResult, SolutionMove};
use crate::position::{Move, Origin, Position};
use crate::short::{child_estimate, fill_layer, finish_cost, pack, Cand, Folded, NF};
use crate::store::Store;

/// How one line is shortened: how much work it may do (tables record it, so that a resumed run
/// shortens alike) and the beams' estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortening {
    /// Positions each layer of a beam keeps.
    pub width: usize,
    /// Positions stored by all the beams of one line together.
    pub max_positions: u64,
    /// Weights of the features of [`crate::short::features`] in the beams' estimate.
    pub weights: [i32; NF],
}

impl Default for Shortening {
    /// The budget of bulk runs (`make results-1m`): about 1.4 ms of CPU a deal on top of the solver's
    /// 0.25 ms. On deals 1-10,000 and 500,001-510,000 with 4 cells, the fast solver's mean of 67.30 and
    /// 67.54 moves became 38.57 and 38.63 (longest 221, 174; 39.58 and 39.55 before lines were merged,
    /// [`crate::merge`]), measured on a loaded machine with `fcanalyze-lab shorten`. Larger budgets buy
    /// shorter lines slowly (deals 1-1,000, merged: 2,000 positions 36.89 moves, 5,000 34.42, 10,000
    /// 33.18; BENCHMARKS.md has the table and its costs).
    fn default() -> Self {
        Shortening {
            width: 10,
            max_positions: 1_000,
            weights: WEIGHTS,
        }
    }
}

/// The weights of the features of [`crate::short::features`] in the bulk beams' estimate, tuned for
/// narrow beams on 4-cell lines (coordinate descent on deals 1-300, width 10, 1,000 positions; the
/// short search's weights are tuned for beams of 1,000 and more). Deals 1,001-3,000: 39.31 moves
/// against 41.07 with the short search's weights; 500,001-502,000: 39.46 against 40.89; the same CPU
/// time. On the longest lines of few cells the short search's weights did better (see
/// [`crate::classify::SHORTEN`]).
pub const WEIGHTS: [i32; NF] = [1, 5, 3, 4, -4, 3, 1, -2, 1, 3, 0, 0];

/// Positions the start moves on after a beam that found no shortcut.
const STRIDE: usize = 8;

/// How much wider each pass over the line is than the one before.
const GROWTH: usize = 4;

/// What a beam found: the keys after its start up to a sorted position (`rejoin` None) or up to a
/// position of the line (`rejoin` its index), in fewer moves than the line takes.
struct Found {
    path: Vec<Key>,
    rejoin: Option<usize>,
}

/// A reusable shortener: keeps its tables from one line to the next.
pub struct Shortener {
    store: Store,
    /// The positions of the line being shortened, and per stored position its last index in the
    /// line ([`Shortener::index`]): where a beam rejoins it.
    line: Store,
    at: Vec<u32>,
    moves: Vec<Move>,
    cand: Vec<Cand>,
    /// A beam's layer: its positions and their folded columns.
    folded: Folded,
    /// The weights of the current line's beams.
    fw: [i32; NF],
}

impl Default for Shortener {
    fn default() -> Self {
        Self::new()
    }
}

impl Shortener {
    pub fn new() -> Shortener {
        Shortener {
            store: Store::new(),
            line: Store::new(),
            at: Vec::new(),
            moves: Vec::new(),
            cand: Vec::new(),
            folded: Folded::default(),
            fw: WEIGHTS,
        }
    }

    /// A line at most as long as `line` (a winning line from `layout` with `ncells` free cells, as a
    /// search returns it: automatic moves included and marked), replayed.
    pub fn shorten(
        &mut self,
        layout: &Layout,
        ncells: usize,
        line: &[SolutionMove],
        budget: Shortening,
    ) -> Result<Vec<SolutionMove>> {
        let (concrete, origin) = Position::from_layout(layout, ncells)?;
        let line = crate::merge::merged(concrete, &origin, line);
        let mut chain = chain_of(concrete, &origin, &line)?;
        let ncells = ncells as u8;
        self.fw = budget.weights;
        let mut spent = 0u64;
        let mut width = budget.width;
        self.index(&chain);
        while chain.len() > 1 && spent < budget.max_positions {
            let before = spent;
            let mut k = 0;
            while k + 1 < chain.len() && spent < budget.max_positions {
                let left = budget.max_positions - spent;
                let found = self.beam(&chain, k, &origin, ncells, width, left);
                spent += self.store.len() as u64;
                match found {
                    Some(Found { path, rejoin }) => {
                        let mut out = chain[..=k].to_vec();
                        out.extend(path);
                        let Some(j) = rejoin else {
                            chain = out;
                            self.index(&chain);
                            break;
                        };
                        k = out.len() - 1;
                        out.extend_from_slice(&chain[j + 1..]);
                        chain = out;
                        self.index(&chain);
                    }
                    None => k += STRIDE,
                }
            }
            width *= GROWTH;
            // A beam cut short by the budget is work lost: a wider pass runs only if a beam from the
            // start fits in what is left (a beam stores at most `width` positions a move).
            let fits = (width * chain.len()) as u64
                <= budget.max_positions - spent.min(budget.max_positions);
            if spent == before || !fits {
                break;
            }
        }
        let line = crate::line::through_keys(concrete, &origin, &chain, "shortened line")?;
        let line = crate::merge::merged(concrete, &origin, &line);
        let chain = chain_of(concrete, &origin, &line)?;
        let line = crate::line::through_keys(concrete, &origin, &chain, "shortened line")?;
        crate::line::replayed(layout, ncells as usize, line, "a shortened line")
    }

    /// `r`'s line shortened when `r` is solved (its other fields stay the search's: the positions are
    /// those of the search that found the line).
    pub fn shorten_result(
        &mut self,
        layout: &Layout,
        ncells: usize,
        r: &mut SearchResult,
        budget: Shortening,
    ) -> Result<()> {
        if r.outcome == Outcome::Solved {
            r.solution = self.shorten(layout, ncells, &r.solution, budget)?;
        }
        Ok(())
    }

    /// Index the positions of `chain` for the beams' rejoins (a position met twice: its last index).
    fn index(&mut self, chain: &[Key]) {
        self.line.clear();
        self.at.clear();
        for (i, key) in chain.iter().enumerate() {
            let (idx, new) = self.line.insert_or_get(key, 0);
            if new {
                self.at.push(i as u32);
            } else {
                self.at[idx as usize] = i as u32;
            }
        }
    }

    /// A beam of `width` from `chain[k]` storing at most `budget` positions: the best way it found to a
    /// sorted position or to a later position of the line in fewer moves than the line, if any.
    fn beam(
        &mut self,
        chain: &[Key],
        k: usize,
        origin: &Origin,
        ncells: u8,
        width: usize,
        budget: u64,
    ) -> Option<Found> {
        let n = chain.len() - 1;
        let last = Position::from_key(&chain[n], origin, ncells);
        let finish = n as u32 + finish_cost(&last, origin);
        // A later position of the line: its index (the line takes `finish` minus that from there).
        let (line, at) = (&self.line, &self.at);
        let later = |key: &Key| {
            line.find(key)
                .map(|i| at[i as usize])
                .filter(|&j| j as usize > k)
        };
        // Best so far: moves from chain[k], the stored parent and the key reached, the rejoin index.
        let mut best: (u32, u32, Key, Option<usize>) = (finish - k as u32, 0, chain[k], None);
        let found = |best: &(u32, u32, Key, Option<usize>)| best.2 != chain[k];
        self.store.clear();
        self.store.insert(&chain[k], u32::MAX);
        let mut layer = vec![0u32];
        let mut moves = std::mem::take(&mut self.moves);
        let mut cand = std::mem::take(&mut self.cand);
        let mut folded = std::mem::take(&mut self.folded);
        folded.start(&chain[k], origin, ncells);
        let mut g = 0u32;
        while !layer.is_empty() && g + 2 <= best.0 {
            cand.clear();
            for (i, &idx) in layer.iter().enumerate() {
                let (p, cols) = folded.at(i);
                p.moves(&mut moves);
                for &m in &moves {
                    let mut q = *p;
                    q.apply(m, origin);
                    q.settle(None);
                    if q.is_sorted() {
                        let cost = g + 1 + finish_cost(&q, origin);
                        if cost < best.0 {
                            best = (cost, idx, *q.key(), None);
                        }
                        continue;
                    }
                    if let Some(j) = later(q.key()) {
                        let cost = g + 1 + finish - j;
                        if cost < best.0 {
                            best = (cost, idx, *q.key(), Some(j as usize));
                        }
                        continue;
                    }
                    let Some(h) = child_estimate(p, cols, &q, &self.fw, g + 1, best.0) else {
                        continue;
                    };
                    cand.push((h, idx, *q.key(), pack(m)));
                }
            }
            g += 1;
            // The next layer: the best new positions, within the beam's budget. The layer's store
            // indices follow each other from its first.
            let first = layer[0];
            let joined = &mut folded.joined;
            joined.clear();
            if fill_layer(
                &mut cand,
                width,
                &mut self.store,
                budget,
                &mut layer,
                |par, mv| joined.push((par, mv)),
            ) {
                break;
            }
            folded.advance(first, origin);
        }
        self.moves = moves;
        self.cand = cand;
        self.folded = folded;
        if !found(&best) {
            return None;
        }
        let (_, parent, key, rejoin) = best;
        let mut path = vec![key];
        let mut i = parent;
        while i != 0 {
            path.push(self.store.get(i).key());
            i = self.store.get(i).parent;
        }
        path.reverse();
        Some(Found { path, rejoin })
    }
}

/// The canonical keys along `line` from the settled start of `concrete`, ending at its first sorted
/// position, with any loop cut out (a position reached again continues from its first visit).
fn chain_of(mut p: Position, origin: &Origin, line: &[SolutionMove]) -> Result<Vec<Key>> {
    p.settle(None);
    let mut chain = vec![*p.key()];
    let mut seen: HashMap<Key, usize> = HashMap::from([(*p.key(), 0)]);
    for m in line.iter().filter(|m| !m.auto) {
        if p.is_sorted() {
            break;
        }
        p.apply(m.mv, origin);
        p.settle(None);
        match seen.get(p.key()) {
            Some(&i) => {
                for key in chain.drain(i + 1..) {
                    seen.remove(&key);
                }
            }
            None => {
                seen.insert(*p.key(), chain.len());
                chain.push(*p.key());
            }
        }
    }
    if !p.is_sorted() {
        return Err(Error::Internal(
            "the line to shorten does not win the game".into(),
        ));
    }
    Ok(chain)
}

/// Shorten `line` from `layout` with `ncells` cells (a fresh [`Shortener`]; reuse one for many lines).
pub fn shorten(
    layout: &Layout,
    ncells: usize,
    line: &[SolutionMove],
    budget: Shortening,
) -> Result<Vec<SolutionMove>> {
    Shortener::new().shorten(layout, ncells, line, budget)
}
