//! Move generation and application: the moves that lead to distinct canonical results, a move
//! applied, the automatic moves, and moves told by their cards.

use crate::card::{self, fits_on, opposite_suits, rank, same_colour_other, suit, Card, NONE};
use crate::key::{loc_of, LOC_BOTTOM, LOC_CELL, LOC_HOME};

use super::stats::STATS_COUNTS;
use super::{cell_place, Move, Origin, PeekBase, Position, FOUNDATION};
use crate::layout::NCOLS;

/// `RUN_PARENTS[t][n]`: the cards that some tail of a run of `n` cards with top card `t` may go on
/// (the parents of each of its cards: one rank higher, the other colour).
pub(super) const RUN_PARENTS: [[u64; 16]; 52] = {
    let mut t = [[0u64; 16]; 52];
    let mut c = 0;
    while c < 52 {
        let rt = c / 4;
        let s = c % 4;
        let red = s == 1 || s == 2;
        let mut n = 1;
        while n < 16 {
            let i = n - 1;
            let mut m = t[c][n - 1];
            if rt + i < 12 {
                // The card `i` below the top is red when the top is red and `i` even, or the reverse.
                let card_red = red == (i % 2 == 0);
                let mask: u64 = if card_red { 0b1001 } else { 0b0110 };
                m |= mask << ((rt + i + 1) * 4);
            }
            t[c][n] = m;
            n += 1;
        }
        c += 1;
    }
    t
};

impl Position {
    /// Whether card `c` goes home automatically under the position's rules: it fits its foundation and,
    /// under the safe rules (SPEC §2), no card still in play could need it.
    #[inline(always)]
    pub(super) fn auto_home(&self, c: Card) -> bool {
        let r = rank(c);
        let s = suit(c);
        if self.found[s as usize] != r {
            return false;
        }
        if r <= 1 || self.max_auto {
            return true;
        }
        let (o1, o2) = opposite_suits(s);
        let lo = self.found[o1 as usize].min(self.found[o2 as usize]);
        lo >= r || (lo + 1 >= r && self.found[same_colour_other(s) as usize] + 2 >= r)
    }

    /// Apply the automatic moves until none applies, logging each one when asked.
    #[inline]
    pub fn settle(&mut self, mut log: Option<&mut Vec<Move>>) {
        loop {
            let mut changed = false;
            for s in 0..4u8 {
                loop {
                    let r = self.found[s as usize];
                    if r >= 13 {
                        break;
                    }
                    let c = card::make(r, s);
                    if self.above[c as usize] != NONE || !self.auto_home(c) {
                        break;
                    }
                    // `c` is exposed: the top of a column or in a free cell.
                    let from = match loc_of(&self.key, c) {
                        LOC_CELL => {
                            let slot = self.cells[..self.ncells as usize]
                                .iter()
                                .position(|&x| x == c)
                                .unwrap_or(0);
                            self.cells[slot] = NONE;
                            cell_place(slot)
                        }
                        _ => {
                            let col = self.top.iter().position(|&x| x == c).unwrap_or(0);
                            let u = self.below[c as usize];
                            self.top[col] = u;
                            self.below[c as usize] = NONE;
                            if u != NONE {
                                self.above[u as usize] = NONE;
                            }
                            col as u8
                        }
                    };
                    self.found[s as usize] += 1;
                    self.set_loc(c, LOC_HOME);
                    changed = true;
                    if let Some(l) = log.as_deref_mut() {
                        l.push(Move {
                            from,
                            to: FOUNDATION,
                            count: 1,
                        });
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Whether no automatic move applies (see [`Position::settle`]).
    pub fn is_settled(&self) -> bool {
        let mut q = *self;
        q.settle(None);
        q.key == self.key
    }

    /// [`Position::apply`] then [`Position::settle`], for a settled position: the same result, with the
    /// automatic moves looked for only where the move may have made one possible. A move that sends no
    /// card home leaves the foundations, so what goes home automatically, as they were, and exposes one card
    /// only, the one it uncovers in its source column (a card moved stays exposed or covered as it was,
    /// and the destination's exposed card gets covered): unless that one may go home, nothing does.
    #[inline]
    pub fn apply_settled(&mut self, m: Move, origin: &Origin) {
        debug_assert!(self.is_settled(), "apply_settled on a position not settled");
        self.apply(m, origin);
        let uncovered = if m.from < 8 {
            self.top[m.from as usize]
        } else {
            NONE
        };
        if m.to == FOUNDATION || (uncovered != NONE && self.auto_home(uncovered)) {
            self.settle(None);
        }
    }

    /// Apply a move generated by [`Position::moves`] (no legality check; automatic moves not applied).
    #[inline]
    pub fn apply(&mut self, m: Move, origin: &Origin) {
        let (b, t) = if m.from < 8 {
            let col = m.from as usize;
            let t = self.top[col];
            let mut b = t;
            for _ in 1..m.count {
                b = self.below[b as usize];
            }
            let u = self.below[b as usize];
            self.top[col] = u;
            if u != NONE {
                self.above[u as usize] = NONE;
            }
            (b, t)
        } else {
            let slot = (m.from - 8) as usize;
            let c = self.cells[slot];
            self.cells[slot] = NONE;
            (c, c)
        };
        if m.to == FOUNDATION {
            self.below[b as usize] = NONE;
            self.found[suit(b) as usize] += 1;
            self.set_loc(b, LOC_HOME);
        } else if m.to >= 8 {
            self.below[b as usize] = NONE;
            self.cells[(m.to - 8) as usize] = b;
            self.set_loc(b, LOC_CELL);
        } else {
            let d = m.to as usize;
            let u = self.top[d];
            self.below[b as usize] = u;
            if u != NONE {
                self.above[u as usize] = b;
                self.set_loc(b, origin.loc_on(b, u));
            } else {
                self.set_loc(b, LOC_BOTTOM);
            }
            self.top[d] = t;
            if self.track {
                self.restack(b, t, d as u8);
            }
        }
    }

    /// Move `m` (of [`Position::moves`]) told by its cards, independent of the order of columns and
    /// cells: the moved run's bottom card (bits 0–5), where it goes (bits 6–8: 0 the foundations, 1 a
    /// free cell, 2 an empty column, 3 onto the card in bits 9–14). See [`Position::undescribe`].
    #[inline]
    pub fn describe(&self, m: Move) -> u16 {
        let b = if m.from < 8 {
            let mut b = self.top[m.from as usize];
            for _ in 1..m.count {
                b = self.below[b as usize];
            }
            b
        } else {
            self.cells[(m.from - 8) as usize]
        };
        let (kind, dest) = if m.to == FOUNDATION {
            (0u16, 0u16)
        } else if m.to >= 8 {
            (1, 0)
        } else {
            match self.top[m.to as usize] {
                NONE => (2, 0),
                t => (3, t as u16),
            }
        };
        b as u16 | kind << 6 | dest << 9
    }

    /// The move of this position that a [`Position::describe`] code tells (a card goes to the first
    /// free cell or empty column), if it is one.
    pub fn undescribe(&self, code: u16) -> Option<Move> {
        let b = (code & 63) as Card;
        let kind = (code >> 6) & 7;
        let dest = (code >> 9) as Card & 63;
        let (from, count) = if let Some(i) = self.cells[..self.ncells as usize]
            .iter()
            .position(|&c| c == b)
        {
            (cell_place(i), 1)
        } else {
            (0..NCOLS).find_map(|col| {
                let mut x = self.top[col];
                let mut n = 1u8;
                while x != NONE {
                    if x == b {
                        return Some((col as u8, n));
                    }
                    x = self.below[x as usize];
                    n += 1;
                }
                None
            })?
        };
        let to = match kind {
            0 => FOUNDATION,
            1 => cell_place(
                self.cells[..self.ncells as usize]
                    .iter()
                    .position(|&c| c == NONE)?,
            ),
            2 => self.top.iter().position(|&t| t == NONE)? as u8,
            3 => self.top.iter().position(|&t| t == dest)? as u8,
            _ => return None,
        };
        Some(Move { from, to, count })
    }

    /// The largest run that may move at once (SPEC §2): (empty cells + 1) · 2^(empty columns),
    /// the destination column not counted when it is empty.
    #[inline(always)]
    pub fn move_limit(free_cells: u32, empty_cols: u32) -> u32 {
        (free_cells + 1) << empty_cols
    }

    /// All moves that lead to distinct canonical results: a card goes to the first empty free cell and
    /// the first empty column only, and a whole column never moves to an empty column.
    pub fn moves(&self, out: &mut Vec<Move>) {
        self.moves_counting(out);
    }

    /// [`Position::moves`] and [`Position::peek_base`] at once: the moves are generated from the same
    /// counts of empty cells and columns and the same exposed cards. The position must keep its
    /// statistics.
    #[inline]
    pub fn moves_with_base(&self, out: &mut Vec<Move>) -> PeekBase {
        debug_assert!(self.track);
        self.moves_counting(out)
    }

    /// [`Position::moves`], returning what [`Position::peek_base`] returns (its statistics meaningless
    /// unless the position keeps them).
    #[inline(always)]
    fn moves_counting(&self, out: &mut Vec<Move>) -> PeekBase {
        out.clear();
        let b = self.board();
        self.push_home_moves(&b, out);
        self.push_cell_moves(&b, out);
        // From the columns.
        for s in 0..NCOLS {
            let t = self.top[s];
            if t == NONE {
                continue;
            }
            let (len, whole) = if self.track {
                self.push_run_moves_kept(s as u8, t, &b, out)
            } else {
                self.push_run_moves_walked(s as u8, t, &b, out)
            };
            push_leaving_moves(s as u8, len, whole, &b, out);
        }
        PeekBase {
            stats: b.stats,
            free: b.free,
            empty: b.empty,
            tops: b.tops,
        }
    }

    /// What move generation reads of this position once (see [`Board`]).
    #[inline(always)]
    fn board(&self) -> Board {
        let nc = self.ncells as usize;
        // The slots in play holding a card, as the high bit of their byte: the bytes of `!cells` that
        // are not zero (`NONE` is 0xFF), found without a carry from one byte into the next.
        let inv = !u64::from_le_bytes(self.cells);
        let high = 0x8080_8080_8080_8080u64 & ((1u128 << (8 * nc)) - 1) as u64;
        let held = ((inv & 0x7F7F_7F7F_7F7F_7F7F).wrapping_add(0x7F7F_7F7F_7F7F_7F7F) | inv) & high;
        let empty_slots = !held & high;
        let free = empty_slots.count_ones();
        let first_free = if empty_slots != 0 {
            cell_place(empty_slots.trailing_zeros() as usize / 8)
        } else {
            NONE
        };
        // The next card of each suit (a bit past the deck when the suit is all home).
        let f = self.found;
        let next = 1u64 << card::make(f[0], 0)
            | 1u64 << card::make(f[1], 1)
            | 1u64 << card::make(f[2], 2)
            | 1u64 << card::make(f[3], 3);
        // The exposed cards, as a bit set, and the column of each.
        let mut tops = 0u64;
        let mut col_of = [0u8; 64];
        let mut empty = 0u32;
        let mut first_empty = NONE;
        let mut stats = 0u64;
        for i in (0..NCOLS).rev() {
            let t = self.top[i];
            if t == NONE {
                empty += 1;
                first_empty = i as u8;
            } else {
                tops |= 1u64 << t;
                col_of[t as usize] = i as u8;
                stats += self.prefix[t as usize] & STATS_COUNTS;
            }
        }
        let lim_card = Self::move_limit(free, empty) as usize;
        let lim_empty = if empty > 0 {
            Self::move_limit(free, empty - 1)
        } else {
            0
        };
        Board {
            held,
            free,
            first_free,
            next,
            tops,
            col_of,
            empty,
            first_empty,
            stats,
            lim_card,
            lim_empty,
        }
    }

    /// The moves to the foundations by hand: from the columns in the order of the columns, then from
    /// the free cells.
    #[inline(always)]
    fn push_home_moves(&self, b: &Board, out: &mut Vec<Move>) {
        let mut home_cols = 0u32;
        let mut home = b.tops & b.next;
        while home != 0 {
            home_cols |= 1 << b.col_of[home.trailing_zeros() as usize];
            home &= home - 1;
        }
        while home_cols != 0 {
            let col = home_cols.trailing_zeros() as u8;
            home_cols &= home_cols - 1;
            out.push(Move {
                from: col,
                to: FOUNDATION,
                count: 1,
            });
        }
        let mut rest = b.held;
        while rest != 0 {
            let slot = rest.trailing_zeros() as usize / 8;
            rest &= rest - 1;
            let c = self.cells[slot];
            if (b.next >> c) & 1 != 0 {
                out.push(Move {
                    from: cell_place(slot),
                    to: FOUNDATION,
                    count: 1,
                });
            }
        }
    }

    /// The moves from the free cells to the columns: onto each exposed parent, and to the first empty
    /// column.
    #[inline(always)]
    fn push_cell_moves(&self, b: &Board, out: &mut Vec<Move>) {
        let mut rest = b.held;
        while rest != 0 {
            let slot = rest.trailing_zeros() as usize / 8;
            rest &= rest - 1;
            let c = self.cells[slot];
            let mut ps = b.parents(c);
            while ps != 0 {
                let u = ps.trailing_zeros() as usize;
                ps &= ps - 1;
                out.push(Move {
                    from: cell_place(slot),
                    to: b.col_of[u],
                    count: 1,
                });
            }
            if b.first_empty != NONE {
                out.push(Move {
                    from: cell_place(slot),
                    to: b.first_empty,
                    count: 1,
                });
            }
        }
    }

    /// The moves of column `s` (exposed card `t`) onto exposed parents, the run at the top and its
    /// length read from the kept statistics: its cards' parents follow from the top card's rank and
    /// colour. Returns the length of that run and whether it is the whole column.
    #[inline(always)]
    fn push_run_moves_kept(&self, s: u8, t: Card, b: &Board, out: &mut Vec<Move>) -> (usize, bool) {
        let pt = self.prefix[t as usize];
        let len = ((pt >> 36) & 0xF) as usize;
        let rt = rank(t);
        let mut ps = b.tops & RUN_PARENTS[t as usize][len.min(b.lim_card)];
        while ps != 0 {
            let u = ps.trailing_zeros() as usize;
            ps &= ps - 1;
            out.push(Move {
                from: s,
                to: b.col_of[u],
                count: rank(u as Card) - rt,
            });
        }
        (len, len as u64 == (pt >> 40) & 0x1F)
    }

    /// [`Position::push_run_moves_kept`] for a position that keeps no statistics: the run walked card
    /// by card, down from the exposed card.
    #[inline(always)]
    fn push_run_moves_walked(
        &self,
        s: u8,
        t: Card,
        b: &Board,
        out: &mut Vec<Move>,
    ) -> (usize, bool) {
        let mut len = 0usize;
        let mut x = t;
        loop {
            // `x` is the bottom card of a run of `len + 1` cards.
            if len < b.lim_card {
                let mut ps = b.parents(x);
                while ps != 0 {
                    let u = ps.trailing_zeros() as usize;
                    ps &= ps - 1;
                    out.push(Move {
                        from: s,
                        to: b.col_of[u],
                        count: len as u8 + 1,
                    });
                }
            }
            len += 1;
            let u = self.below[x as usize];
            if u == NONE || !fits_on(x, u) {
                break;
            }
            x = u;
        }
        (len, self.below[x as usize] == NONE)
    }

    /// From a sorted position: the hand move of the lowest card left (None when won).
    pub fn lowest_home_move(&self) -> Option<Move> {
        let mut best: Option<(u8, Move)> = None;
        for slot in 0..self.ncells as usize {
            let c = self.cells[slot];
            if c != NONE
                && self.found[suit(c) as usize] == rank(c)
                && best.map_or(true, |(r, _)| rank(c) < r)
            {
                best = Some((
                    rank(c),
                    Move {
                        from: cell_place(slot),
                        to: FOUNDATION,
                        count: 1,
                    },
                ));
            }
        }
        for col in 0..NCOLS {
            let c = self.top[col];
            if c != NONE
                && self.found[suit(c) as usize] == rank(c)
                && best.map_or(true, |(r, _)| rank(c) < r)
            {
                best = Some((
                    rank(c),
                    Move {
                        from: col as u8,
                        to: FOUNDATION,
                        count: 1,
                    },
                ));
            }
        }
        best.map(|(_, m)| m)
    }
}

/// What move generation reads of a position once: its free cells, its empty columns and its exposed
/// cards.
struct Board {
    /// The slots in play holding a card, as the high bit of their byte.
    held: u64,
    /// Empty free cells, and the first one (`NONE` when none).
    free: u32,
    first_free: u8,
    /// The next card of each suit, as a bit set (a bit past the deck when the suit is all home).
    next: u64,
    /// The exposed cards, as a bit set, and the column of each.
    tops: u64,
    col_of: [u8; 64],
    /// Empty columns, and the first one (`NONE` when none).
    empty: u32,
    first_empty: u8,
    /// The kept statistics of the columns added up (see [`Position::stats_sum`]).
    stats: u64,
    /// The longest run that may move onto a card, and into an empty column.
    lim_card: usize,
    lim_empty: u32,
}

impl Board {
    /// The exposed cards `c` may go on: the two cards one rank higher of the other colour.
    #[inline(always)]
    fn parents(&self, c: Card) -> u64 {
        self.tops & RUN_PARENTS[c as usize][1]
    }
}

/// The moves of column `s` whose top run has `len` cards (`whole`: the whole column) that leave it
/// for the first empty column (`n` cards, not the whole column) and the first free cell.
#[inline(always)]
fn push_leaving_moves(s: u8, len: usize, whole: bool, b: &Board, out: &mut Vec<Move>) {
    if b.first_empty != NONE {
        let maxc = (len as u32).min(b.lim_empty) as usize;
        for n in 1..=maxc {
            if !(whole && n == len) {
                out.push(Move {
                    from: s,
                    to: b.first_empty,
                    count: n as u8,
                });
            }
        }
    }
    if b.first_free != NONE {
        out.push(Move {
            from: s,
            to: b.first_free,
            count: 1,
        });
    }
}
