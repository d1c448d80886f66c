//! Concrete lines of play rebuilt from a search's canonical keys: the moves with real columns and slots,
//! the automatic moves after each, and the finish of a sorted position. Every search that returns a line
//! builds it here and has it replayed by [`crate::replay`] before returning it.

use crate::error::{Error, Result};
use crate::outcome::SolutionMove;
use crate::position::{Key, Layout, Move, Origin, Position};

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
    /// card home each time, and return the whole line.
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
