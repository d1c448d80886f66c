//! Concrete lines of play rebuilt from a search's canonical keys: the moves with real columns and slots,
//! the automatic moves after each, and the finish of a sorted position. Every search that returns a line
//! builds it here and has it replayed by [`crate::replay`] before returning it: the solver from its
//! stored steps told by cards ([`through_steps`]), the prover, beams and layered proof from a chain of
//! keys shortened first ([`checked_line`]), the short search from its chain of keys ([`through_keys`]).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::layout::Layout;
use crate::outcome::SolutionMove;
use crate::position::{Move, Origin, Position};

/// A step of a stored line, told by cards: a [`Position::describe`] code, or one of these codes of a
/// composite move (its argument in bits 0–5), or [`VIA_ROOT`] for a step whose move is not known.
pub(crate) const VIA_DIG: u16 = 4 << 6;
pub(crate) const VIA_CLEAR: u16 = 5 << 6;
pub(crate) const VIA_SHIFT: u16 = 6 << 6;
pub(crate) const VIA_ROOT: u16 = u16::MAX;

/// What shortening a chain of keys asks of the rules of play on keys (the prover's
/// [`crate::prover::Rules`]): the children of a key, and whether a key is sorted.
pub trait Successors {
    /// The keys of the positions one move away from `key`'s (automatic moves applied), into `out`.
    fn children_of(&self, key: &Key, out: &mut Vec<Key>);
    /// Whether the position of `key` is sorted (provably won).
    fn is_sorted(&self, key: &Key) -> bool;
}

/// A line being written: each move played is recorded with the automatic moves that follow it.
pub(crate) struct Recorder {
    out: Vec<SolutionMove>,
    log: Vec<Move>,
}

impl Recorder {
    /// Settle the start `cur` (its automatic moves are the line's first moves).
    pub(crate) fn start(cur: &mut Position) -> Recorder {
        let mut r = Recorder {
            out: Vec::new(),
            log: Vec::new(),
        };
        r.settle(cur);
        r
    }

    fn settle(&mut self, cur: &mut Position) {
        cur.settle(Some(&mut self.log));
        self.out
            .extend(self.log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
    }

    /// Play `m` on `cur`, then its automatic moves.
    pub(crate) fn play(&mut self, cur: &mut Position, m: Move, origin: &Origin) {
        cur.apply(m, origin);
        self.out.push(SolutionMove { mv: m, auto: false });
        self.settle(cur);
    }

    /// Finish the sorted position `cur` (every column in non-increasing rank order) by sending the lowest
    /// card home each time, and return the whole line. Under max autoplay a settled sorted position is
    /// won already (its lowest card fits and is exposed, so it went home, and so on), so no card goes
    /// home by hand.
    pub(crate) fn finish(
        mut self,
        cur: &mut Position,
        origin: &Origin,
    ) -> Result<Vec<SolutionMove>> {
        while !cur.is_won() {
            let Some(m) = cur.lowest_home_move() else {
                return Err(Error::Internal(
                    "a sorted position has no card to send home".into(),
                ));
            };
            self.play(cur, m, origin);
        }
        Ok(self.out)
    }
}

/// The move of `cur` whose settled result has key `target`, if any (`moves` is scratch space).
pub(crate) fn move_to(
    cur: &Position,
    target: &Key,
    origin: &Origin,
    moves: &mut Vec<Move>,
) -> Option<Move> {
    cur.moves(moves);
    moves.iter().copied().find(|&m| {
        let mut q = *cur;
        q.apply(m, origin);
        q.settle(None);
        q.key() == target
    })
}

/// The concrete line from `start` through a chain of canonical keys, each one move from the one before
/// (the first the settled start, the last sorted), to the won game. `what` names the search in errors.
pub(crate) fn through_keys(
    start: Position,
    origin: &Origin,
    chain: &[Key],
    what: &str,
) -> Result<Vec<SolutionMove>> {
    let mut cur = start;
    let mut line = Recorder::start(&mut cur);
    if cur.key() != &chain[0] {
        return Err(Error::Internal(format!(
            "the settled start is not the root of the {what}"
        )));
    }
    let mut moves = Vec::new();
    for target in &chain[1..] {
        let Some(m) = move_to(&cur, target, origin, &mut moves) else {
            return Err(Error::Internal(format!(
                "no move reproduces a step of the {what}"
            )));
        };
        line.play(&mut cur, m, origin);
    }
    line.finish(&mut cur, origin)
}

/// The concrete line from `start` through `chain`, the stored steps of a solution (each a key and how
/// it is reached from the one before, told by cards: see [`VIA_ROOT`]; the first the settled start, the
/// last sorted), to the won game. The recorded step is tried first; a step not recorded is found again
/// among the moves, then among the composite moves (digs, clears and shifts).
pub(crate) fn through_steps(
    start: Position,
    origin: &Origin,
    chain: &[(Key, u16)],
) -> Result<Vec<SolutionMove>> {
    let mut cur = start;
    let mut out = Recorder::start(&mut cur);
    if cur.key() != &chain[0].0 {
        return Err(Error::Internal(
            "the settled start is not the stored root".into(),
        ));
    }
    let mut moves = Vec::new();
    // The recorded step's moves, one buffer for every step.
    let mut line = Vec::new();
    for (target, via) in &chain[1..] {
        // The recorded move first (told by cards), then a search of the moves and composite moves.
        let recorded = {
            let mut q = cur;
            line.clear();
            let ok = match via & (7 << 6) {
                _ if *via == VIA_ROOT => false,
                VIA_DIG => q.dig((via & 63) as u8, origin, Some(&mut line)),
                VIA_CLEAR => q.clear((via & 63) as u8, origin, Some(&mut line)),
                VIA_SHIFT => q.shift((via & 63) as u8, origin, Some(&mut line)),
                _ => match cur.undescribe(*via) {
                    Some(m) => {
                        q.apply(m, origin);
                        q.settle(None);
                        line.push(m);
                        true
                    }
                    None => false,
                },
            };
            ok && q.key() == target
        };
        if recorded {
            for &m in &line {
                out.play(&mut cur, m, origin);
            }
            continue;
        }
        let line = match move_to(&cur, target, origin, &mut moves) {
            Some(m) => vec![m],
            None => {
                // A composite step of a dive: find the dig that reproduces it.
                let dig = (0..4u8)
                    .find_map(|suit| {
                        let mut q = cur;
                        let mut line = Vec::new();
                        (q.dig(suit, origin, Some(&mut line)) && q.key() == target).then_some(line)
                    })
                    .or_else(|| {
                        (0..52u8).find_map(|b| {
                            let mut q = cur;
                            let mut line = Vec::new();
                            (q.clear(b, origin, Some(&mut line)) && q.key() == target)
                                .then_some(line)
                        })
                    })
                    .or_else(|| {
                        (0..52u8).find_map(|x| {
                            let mut q = cur;
                            let mut line = Vec::new();
                            (q.shift(x, origin, Some(&mut line)) && q.key() == target)
                                .then_some(line)
                        })
                    });
                let Some(line) = dig else {
                    return Err(Error::Internal(
                        "no move reproduces a stored step of the solution".into(),
                    ));
                };
                line
            }
        };
        for m in line {
            out.play(&mut cur, m, origin);
        }
    }
    out.finish(&mut cur, origin)
}

/// `line` after the independent replay ([`crate::replay`]) has played it to a won game from `layout`;
/// a line that fails is a bug of the search (`what`), reported as an internal error.
pub(crate) fn replayed(
    layout: &Layout,
    ncells: usize,
    line: Vec<SolutionMove>,
    what: &str,
) -> Result<Vec<SolutionMove>> {
    match crate::replay::replay(layout, ncells, &line) {
        Ok(()) => Ok(line),
        Err(e) => Err(Error::Internal(format!(
            "{what} failed its replay at move {}: {}",
            e.index, e.reason
        ))),
    }
}

/// Shorten a line of keys (each a child of the one before, the last sorted): from each position, jump
/// to the furthest later position of the line one move away, or end at once on a sorted child.
fn shorten(rules: &impl Successors, chain: Vec<Key>) -> Vec<Key> {
    if chain.len() <= 2 {
        return chain;
    }
    let index: HashMap<Key, usize> = chain.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut out = vec![chain[0]];
    let mut kids = Vec::new();
    let mut i = 0;
    while i + 1 < chain.len() {
        rules.children_of(&chain[i], &mut kids);
        if let Some(k) = kids.iter().find(|k| **k == [0; 3] || rules.is_sorted(k)) {
            out.push(*k);
            break;
        }
        let j = kids
            .iter()
            .filter_map(|k| index.get(k).copied())
            .max()
            .unwrap_or(i + 1)
            .max(i + 1);
        out.push(chain[j]);
        i = j;
    }
    out
}

/// The line through `chain` (keys from the settled start to a sorted or won position, each one move from
/// the one before), shortened ([`shorten`]), made concrete ([`line_of`]) and replayed; `what` names the
/// search in errors.
pub fn checked_line(
    layout: &Layout,
    ncells: usize,
    rules: &impl Successors,
    chain: Vec<Key>,
    what: &str,
) -> Result<Vec<SolutionMove>> {
    let line = line_of(layout, ncells, &shorten(rules, chain))?;
    replayed(layout, ncells, line, what)
}

/// The concrete line of play through a chain of canonical keys (from the settled start to a sorted
/// position), then on to the won game by sending the lowest card home, as [`crate::solver`] does.
pub fn line_of(layout: &Layout, ncells: usize, chain: &[Key]) -> Result<Vec<SolutionMove>> {
    let (start, origin) = Position::from_layout(layout, ncells)?;
    through_keys(start, &origin, chain, "prover's line")
}
