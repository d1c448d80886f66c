//! The composite moves of the solver's dives: dig out the next card of a suit and send it home
//! ([`Position::dig`]), empty a column ([`Position::clear`]), bring a buried run onto a parent
//! ([`Position::shift`]), and the cheap tests that spare most of the attempts that would fail.

use crate::card::{self, fits_on, is_red, rank, Card, NONE};
use crate::key::{loc_of, LOC_BOTTOM, LOC_CELL, LOC_HOME};

use super::moves::RUN_PARENTS;
use super::{cell_place, Move, Origin, PeekBase, Position, FOUNDATION};
use crate::layout::NCOLS;

impl Position {
    /// A cheap test before [`Position::dig`]: false when the next card of suit `s` is home, exposed or in
    /// a free cell, or when the runs lying on it need more free cells than `free` even though every run
    /// that fits on an exposed card of another column goes there. (It may pass digs that fail.)
    #[inline]
    pub fn may_dig(&self, s: u8, base: &PeekBase) -> bool {
        let r = self.found[s as usize];
        if r >= 13 {
            return false;
        }
        let c = card::make(r, s);
        if loc_of(&self.key, c) == LOC_CELL || self.above[c as usize] == NONE {
            return false;
        }
        self.track && self.may_unstack(self.col_of[c as usize], c, base)
    }

    /// A cheap test before [`Position::clear`] of column `col`: false when it is empty, when its runs
    /// need more than `free` free cells (see [`Position::may_dig`]), or when [`Position::clear_fails`]
    /// sees the clear fail. The position must be settled and keep its statistics.
    #[inline]
    pub fn may_clear(&self, col: usize, base: &PeekBase) -> bool {
        debug_assert!(self.track);
        self.top[col] != NONE
            && self.may_unstack_column(col as u8, base)
            && !self.clear_fails(col, base)
    }

    /// True only when [`Position::clear`] of column `col` (not empty) certainly fails; `base` is the
    /// [`Position::peek_base`] of this position, which must be settled. Most clears fail, and finding
    /// that out on a copy of the position costs far more than this sketch of it: the cards of the column
    /// (read in place, since only its top changes), the exposed cards of the other columns as a bit set,
    /// and the numbers of empty free cells and columns. The sketch makes the clear's moves (see
    /// [`Position::unstack`]) as long as no card can go home: until then the automatic moves do nothing
    /// (the position was settled and the foundations do not change, so the only cards that might go
    /// home are those the clear exposes in the column), so the sketch chooses what the clear chooses
    /// and fails where it fails. Once it exposes a card that may go home it answers false: maybe.
    #[inline]
    pub fn clear_fails(&self, col: usize, base: &PeekBase) -> bool {
        let mut t = self.top[col];
        let mut tops = base.tops & !(1u64 << t);
        let (mut free, mut empty) = (base.free, base.empty);
        // As many moves as `unstack` makes at most.
        for _ in 0..24 {
            if t == NONE {
                return false;
            }
            // The run at the top of the column: `x` its bottom card.
            let mut x = t;
            let mut len = 1u32;
            loop {
                let u = self.below[x as usize];
                if u == NONE || !fits_on(x, u) {
                    break;
                }
                x = u;
                len += 1;
            }
            let under = self.below[x as usize];
            let rk = rank(x);
            let mask = if is_red(x) { 0b1001u64 } else { 0b0110u64 };
            let parents = if rk < 12 {
                tops & (mask << ((rk as u32 + 1) * 4))
            } else {
                0
            };
            let exposed = if parents != 0 && len <= Self::move_limit(free, empty) {
                // Onto the lowest parent, which the run's top card covers.
                tops = (tops & !(parents & parents.wrapping_neg())) | 1u64 << t;
                under
            } else if free > 0 {
                free -= 1;
                self.below[t as usize]
            } else if empty > 0 && under != NONE && len <= Self::move_limit(free, empty - 1) {
                empty -= 1;
                tops |= 1u64 << t;
                under
            } else {
                return true;
            };
            if exposed != NONE && self.auto_home(exposed) {
                return false;
            }
            t = exposed;
        }
        true
    }

    /// [`Position::may_unstack`] of a whole column (`stop` `NONE`) of a position that keeps its
    /// statistics: the same answer, each run taken at once from its top card's kept run length (see
    /// [`prefix_step`]; a run is the cards in sequence, as there) rather than card by card. Most
    /// columns fail on their top run, answered so without reading the cards below it.
    #[inline]
    pub(super) fn may_unstack_column(&self, col: u8, base: &PeekBase) -> bool {
        debug_assert!(self.track);
        if base.empty > 0 {
            return true;
        }
        let free = base.free;
        let mut tops = base.tops;
        let mut need = 0u32;
        let mut y = self.top[col as usize];
        while y != NONE {
            let len = ((self.prefix[y as usize] >> 36) & 0xF) as usize;
            // The parents of the run's bottom card, `len - 1` cards below `y` (each card of a run
            // adds the parents of its own rank to `RUN_PARENTS`).
            let parents = RUN_PARENTS[y as usize][len] ^ RUN_PARENTS[y as usize][len - 1];
            if tops & parents != 0 {
                tops |= 1 << y;
            } else {
                need += len as u32;
                if need > free {
                    return false;
                }
            }
            for _ in 0..len {
                y = self.below[y as usize];
            }
        }
        need <= free
    }

    #[inline]
    pub(super) fn may_unstack(&self, col: u8, stop: Card, base: &PeekBase) -> bool {
        if base.empty > 0 {
            return true;
        }
        let free = base.free;
        let mut tops = base.tops;
        // Walk down from the top of the column: a run ends where a card does not fit on the next.
        let mut need = 0u32;
        let mut len = 0u32;
        let mut y = self.top[col as usize];
        let mut x = y;
        while x != stop {
            len += 1;
            let u = self.below[x as usize];
            if u == stop || u == NONE || !fits_on(x, u) {
                let rk = rank(x);
                let mask = if is_red(x) { 0b1001u64 } else { 0b0110u64 };
                if rk < 12 && tops & (mask << ((rk as u32 + 1) * 4)) != 0 {
                    tops |= 1 << y;
                } else {
                    need += len;
                    if need > free {
                        return false;
                    }
                }
                len = 0;
                y = u;
            }
            x = u;
        }
        need <= free
    }

    /// The composite move "dig out the next card of suit `s` and send it home": the runs lying on that
    /// card go, top first, onto an exposed parent in another column (the lowest such card), else their
    /// top card to a free cell, else the run to an empty column; then the card goes home. Automatic moves
    /// are applied after every move, as in play. Returns false (and leaves `self` in an unspecified
    /// state) when the card is exposed or in a free cell already, or when the dig runs out of room.
    /// The choices depend only on the cards, not on the order of columns or cells, so positions with
    /// the same key dig to the same key. The player's moves are logged when asked. The position must be
    /// settled, as for [`Position::clear`] and [`Position::shift`] (see [`Position::apply_settled`]).
    pub fn dig(&mut self, s: u8, origin: &Origin, mut log: Option<&mut Vec<Move>>) -> bool {
        let r = self.found[s as usize];
        if r >= 13 {
            return false;
        }
        let c = card::make(r, s);
        let loc = loc_of(&self.key, c);
        if loc == LOC_CELL || self.above[c as usize] == NONE {
            return false;
        }
        let mut col = NONE;
        if self.track {
            col = self.col_of[c as usize];
        } else {
            for i in 0..NCOLS {
                let mut x = self.top[i];
                while x != NONE && x != c {
                    x = self.below[x as usize];
                }
                if x == c {
                    col = i as u8;
                    break;
                }
            }
        }
        debug_assert!(col != NONE);
        if !self.unstack(col, c, origin, &mut log) {
            return false;
        }
        if self.found[s as usize] == r {
            let m = Move {
                from: col,
                to: FOUNDATION,
                count: 1,
            };
            self.apply(m, origin);
            if let Some(l) = log {
                l.push(m);
            }
            self.settle(None);
        }
        true
    }

    /// The composite move "empty the column whose bottom card is `bottom`": its runs go away as in
    /// [`Position::dig`] (a run that is the whole column only onto a parent). Returns false (and leaves
    /// `self` in an unspecified state) when `bottom` is not the bottom card of a column or the column
    /// cannot be emptied that way. Like digs, the choices depend only on the cards.
    pub fn clear(
        &mut self,
        bottom: Card,
        origin: &Origin,
        mut log: Option<&mut Vec<Move>>,
    ) -> bool {
        let loc = loc_of(&self.key, bottom);
        if loc != LOC_BOTTOM {
            return false;
        }
        let col = if self.track {
            self.col_of[bottom as usize]
        } else {
            let mut col = NONE;
            for i in 0..NCOLS {
                let mut x = self.top[i];
                while x != NONE && x != bottom {
                    x = self.below[x as usize];
                }
                if x == bottom {
                    col = i as u8;
                    break;
                }
            }
            col
        };
        debug_assert!(col != NONE);
        self.unstack(col, NONE, origin, &mut log)
    }

    /// The exposed card in another column than `col` that `x` may go on (the lowest), or `NONE`.
    #[inline]
    fn parent_top(&self, x: Card, col: u8) -> (Card, u8) {
        let mut parent = (NONE, NONE);
        for i in 0..NCOLS {
            let p = self.top[i];
            if p != NONE && i as u8 != col && fits_on(x, p) && (parent.0 == NONE || p < parent.0) {
                parent = (p, i as u8);
            }
        }
        parent
    }

    /// The top card of the run that starts with `x` (the cards above `x` in sequence).
    #[inline]
    fn run_top(&self, x: Card) -> Card {
        let mut y = x;
        loop {
            let a = self.above[y as usize];
            if a == NONE || !fits_on(a, y) {
                return y;
            }
            y = a;
        }
    }

    /// A cheap test before [`Position::shift`] of card `x` (see [`Position::may_dig`]). The position must
    /// keep its statistics.
    #[inline]
    pub fn may_shift(&self, x: Card, base: &PeekBase) -> bool {
        let loc = loc_of(&self.key, x);
        if loc == LOC_HOME || loc == LOC_CELL {
            return false;
        }
        let y = self.run_top(x);
        self.above[y as usize] != NONE && self.may_unstack(self.col_of[x as usize], y, base)
    }

    /// The composite move "bring the run that starts with card `x` onto an exposed parent": the cards
    /// lying on that run go away as in [`Position::dig`], then the run goes onto the lowest exposed card
    /// of another column it fits on. Returns false (and leaves `self` in an unspecified state) when `x`
    /// is not in a column, when its run is exposed already (a plain move), or when there is no room.
    /// Like digs, the choices depend only on the cards.
    pub fn shift(&mut self, x: Card, origin: &Origin, mut log: Option<&mut Vec<Move>>) -> bool {
        let loc = loc_of(&self.key, x);
        if loc == LOC_HOME || loc == LOC_CELL {
            return false;
        }
        let y = self.run_top(x);
        if self.above[y as usize] == NONE {
            return false;
        }
        let col = if self.track {
            self.col_of[x as usize]
        } else {
            (0..NCOLS)
                .find(|&i| {
                    let mut c = self.top[i];
                    while c != NONE && c != x {
                        c = self.below[c as usize];
                    }
                    c == x
                })
                .unwrap_or(0) as u8
        };
        if self.parent_top(x, col).0 == NONE || !self.unstack(col, y, origin, &mut log) {
            return false;
        }
        if self.top[col as usize] != y {
            return false;
        }
        let (p, to) = self.parent_top(x, col);
        let mut len = 1u32;
        let mut c = x;
        while c != y {
            c = self.above[c as usize];
            len += 1;
        }
        let mut free = 0u32;
        for &c in &self.cells[..self.ncells as usize] {
            free += (c == NONE) as u32;
        }
        let mut empty = 0u32;
        for &t in &self.top {
            empty += (t == NONE) as u32;
        }
        if p == NONE || len > Self::move_limit(free, empty) {
            return false;
        }
        let m = Move {
            from: col,
            to,
            count: len as u8,
        };
        self.apply_settled(m, origin);
        if let Some(l) = log {
            l.push(m);
        }
        true
    }

    /// Move the runs lying on card `stop` of column `col` (every card of the column for `NONE`) away, top
    /// first: onto the lowest exposed parent in another column, else the top card to a free cell, else
    /// the run to an empty column (not a run that is the whole column). Automatic moves follow every
    /// move. True when `stop` is exposed, or has gone home, or the column is empty. The position must be
    /// settled.
    fn unstack(
        &mut self,
        col: u8,
        stop: Card,
        origin: &Origin,
        log: &mut Option<&mut Vec<Move>>,
    ) -> bool {
        for _ in 0..24 {
            let t = self.top[col as usize];
            if t == stop || (stop != NONE && loc_of(&self.key, stop) == LOC_HOME) {
                return true;
            }
            // The run at the top of the column, not counting `stop`.
            let mut x = t;
            let mut len = 1u32;
            loop {
                let u = self.below[x as usize];
                if u == stop || u == NONE || !fits_on(x, u) {
                    break;
                }
                x = u;
                len += 1;
            }
            let whole = self.below[x as usize] == NONE;
            let mut free = 0u32;
            let mut first_free = NONE;
            for i in (0..self.ncells as usize).rev() {
                if self.cells[i] == NONE {
                    free += 1;
                    first_free = cell_place(i);
                }
            }
            let mut empty = 0u32;
            let mut first_empty = NONE;
            let mut parent = (NONE, NONE);
            for i in (0..NCOLS).rev() {
                let p = self.top[i];
                if p == NONE {
                    empty += 1;
                    first_empty = i as u8;
                } else if i as u8 != col && fits_on(x, p) && (parent.0 == NONE || p < parent.0) {
                    parent = (p, i as u8);
                }
            }
            let m = if parent.0 != NONE && len <= Self::move_limit(free, empty) {
                Move {
                    from: col,
                    to: parent.1,
                    count: len as u8,
                }
            } else if first_free != NONE {
                Move {
                    from: col,
                    to: first_free,
                    count: 1,
                }
            } else if first_empty != NONE && !whole && len <= Self::move_limit(free, empty - 1) {
                Move {
                    from: col,
                    to: first_empty,
                    count: len as u8,
                }
            } else {
                return false;
            };
            self.apply_settled(m, origin);
            if let Some(l) = log.as_deref_mut() {
                l.push(m);
            }
        }
        false
    }
}
