//! Moves merged out of a winning line, before any search around it: a card the line moves twice (to a
//! free cell, then on; to a column, then on) is moved once, straight to its second place, when the line
//! stays legal without its first move. The fast solver's lines hold many such detours, and finding them
//! costs a replay of a few moves each, far less than a beam.
//!
//! The line is told by cards ([`Position::describe`]: the moved run's bottom card and where it goes), so
//! that a move keeps its meaning when the columns around it change. Dropping move `i` of card `b` keeps
//! the next move of `b` as it was (from wherever `b` now is); the moves in between, and after, are played
//! again from the position before `i`, each checked against the moves the position allows, until the
//! line is back on a position it reached before (the rest is the same) or has won. A move of a card that
//! has gone home meanwhile is dropped too. Nothing here needs a budget of positions: each move is tried
//! once a pass, over a bounded stretch of the line ([`REACH`]), and a pass that merges nothing ends it.

use crate::card::{rank, suit, Card};
use crate::outcome::SolutionMove;
use crate::position::{Move, Origin, Position};

/// How far apart a card's two moves may be, and how far past the second the line may go before it is
/// back on a position of the old line, to be merged: the cost of a line is then linear in its length.
const REACH: usize = 64;

/// Passes over the line (most merges come in the first: after one, the same place is tried again).
const PASSES: usize = 3;

/// The moves of `line` (automatic ones left out) played from `start` (a layout's position, not yet
/// settled), with its detours merged: a winning line never longer than `line`, its moves by hand only.
/// `line` must win from `start`.
pub(crate) fn merged(start: Position, origin: &Origin, line: &[SolutionMove]) -> Vec<SolutionMove> {
    let mut p = start;
    p.settle(None);
    let mut codes = Vec::new();
    let mut at = vec![p];
    for m in line.iter().filter(|m| !m.auto) {
        if p.is_won() {
            break;
        }
        codes.push(p.describe(m.mv));
        p.apply(m.mv, origin);
        p.settle(None);
        at.push(p);
    }
    let mut moves = Vec::new();
    let mut tail = Vec::new();
    for _ in 0..PASSES {
        let before = codes.len();
        let mut i = 0;
        while i < codes.len() {
            let card = codes[i] & 63;
            let next = (i + 1..codes.len().min(i + 1 + REACH)).find(|&j| codes[j] & 63 == card);
            if replay_without(&mut codes, &mut at, i, next, origin, &mut moves, &mut tail) {
                continue;
            }
            i += 1;
        }
        if codes.len() == before {
            break;
        }
    }
    // The line again, as concrete moves from the start (a position reached again may have had its
    // columns in another order).
    let mut p = start;
    p.settle(None);
    let mut out = Vec::with_capacity(codes.len());
    for code in codes {
        if is_home(&p, (code & 63) as Card) {
            continue;
        }
        let mv = p
            .undescribe(code)
            .expect("a merged line's moves were checked");
        out.push(SolutionMove { mv, auto: false });
        p.apply(mv, origin);
        p.settle(None);
    }
    out
}

/// Whether `codes` without its move `i` still wins (the move of the same card `next`, if any, kept as
/// told): if so, `codes` and the positions before each of them, `at`, become that line's.
fn replay_without(
    codes: &mut Vec<u16>,
    at: &mut Vec<Position>,
    i: usize,
    next: Option<usize>,
    origin: &Origin,
    moves: &mut Vec<Move>,
    tail: &mut Vec<(u16, Position)>,
) -> bool {
    tail.clear();
    let mut p = at[i];
    let resume = next.unwrap_or(i);
    for k in i + 1..codes.len() {
        let code = codes[k];
        if is_home(&p, (code & 63) as Card) {
            continue;
        }
        let Some(m) = p.undescribe(code) else {
            return false;
        };
        p.moves(moves);
        if !moves.contains(&m) {
            return false;
        }
        if k > resume + REACH {
            // Too far off the old line to come back cheaply: lines of thousands of moves stay linear.
            return false;
        }
        tail.push((code, p));
        p.apply(m, origin);
        p.settle(None);
        if k >= resume && p.key() == at[k + 1].key() {
            // Back on the old line: its rest follows unchanged.
            let rest = k + 1;
            splice(codes, at, i, rest, tail);
            return true;
        }
    }
    if !p.is_won() {
        return false;
    }
    let end = codes.len();
    splice(codes, at, i, end, tail);
    // The won position after the last move.
    *at.last_mut().expect("a line ends on a position") = p;
    true
}

/// Replace moves `i..rest` of the line, and the positions before them, by `tail`.
fn splice(
    codes: &mut Vec<u16>,
    at: &mut Vec<Position>,
    i: usize,
    rest: usize,
    tail: &[(u16, Position)],
) {
    codes.splice(i..rest, tail.iter().map(|t| t.0));
    at.splice(i..rest, tail.iter().map(|t| t.1));
}

/// Whether card `c` is on its foundation.
fn is_home(p: &Position, c: Card) -> bool {
    p.foundations()[suit(c) as usize] > rank(c)
}
