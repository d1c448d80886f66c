//! A FreeCell position, its legal moves, the automatic moves and its canonical key (SPEC §2–§3).
//!
//! Columns are kept as links between cards (`below`/`above`) so that moving a run of any length is O(1).
//! The canonical key gives each card 3 bits saying where it lies: home, in a free cell, at the bottom of a
//! column, on the card it was dealt on, or on one of its two possible parents. Column and cell order
//! follow from that, so positions that differ only by permuting columns or cells share one key, with no
//! sorting. The key is kept up to date as moves are applied (only the moved card's 3 bits change).
//!
//! The methods of [`Position`] are grouped by concern: this file builds positions and their keys;
//! `moves` generates and applies moves (and the automatic ones); `stats` keeps the
//! column statistics the heuristics read; `peek` sees a child without building it; `composite` makes
//! the composite moves of the solver's dives (digs, clears, shifts).

mod composite;
mod moves;
mod peek;
mod stats;
#[cfg(test)]
mod tests;

use crate::autoplay::Autoplay;
use crate::card::{self, fits_on, opposite_suits, rank, suit, Card, NONE};
use crate::error::Result;
use crate::key::{
    key_shift, key_word, set_loc, Key, LOC_BOTTOM, LOC_CELL, LOC_DEALT, LOC_HOME, LOC_PARENT_HI,
    LOC_PARENT_LO,
};
use crate::layout::{Layout, MAX_CELLS, NCOLS};

pub use peek::{DepthPlace, Peek, PeekBase};

/// The place code of the foundations; columns are 0..8 and free-cell slots are 8..16.
pub const FOUNDATION: u8 = 16;
/// The place code of free-cell slot `i`.
pub const fn cell_place(i: usize) -> u8 {
    8 + i as u8
}

/// A move: from a column (0..8) or free-cell slot (8..16) to a column, a slot or the foundations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: u8,
    pub to: u8,
    pub count: u8,
}

/// What the key of a position is relative to: the card each card was first placed on; and the rules of
/// automatic moves of the search, which positions rebuilt from keys follow.
#[derive(Clone, Debug)]
pub struct Origin {
    under: [Card; 52],
    max_auto: bool,
}

/// A position: columns, free cells and foundations, with its canonical key.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    below: [Card; 52],
    above: [Card; 52],
    top: [Card; NCOLS],
    cells: [Card; MAX_CELLS],
    found: [u8; 4],
    ncells: u8,
    /// Whether `prefix` is kept (only the heuristic searches need it).
    track: bool,
    /// Whether every card that fits its foundation goes home automatically ([`Autoplay::Max`]) rather
    /// than only the safe ones (kept in the struct's padding: the position is no larger).
    max_auto: bool,
    /// Per column card: the packed [`stats::ColumnStats`] of its column from the buried card up to it, and
    /// its height in the column (bits 40–44).
    prefix: [u64; 52],
    /// Per column card: its column (kept with `prefix`).
    col_of: [u8; 52],
    key: Key,
}

impl PartialEq for Position {
    /// Positions are equal when they are the same canonical position.
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Origin {
    fn loc_on(&self, c: Card, u: Card) -> u64 {
        if fits_on(c, u) {
            if suit(u) == opposite_suits(suit(c)).0 {
                LOC_PARENT_LO
            } else {
                LOC_PARENT_HI
            }
        } else {
            debug_assert_eq!(
                self.under[c as usize], u,
                "card placed on a card that is neither parent nor origin"
            );
            LOC_DEALT
        }
    }
}

impl Position {
    /// Build the position of a validated layout (not yet settled) and the origin its keys refer to,
    /// both under the layout's rules of automatic moves.
    pub fn from_layout(layout: &Layout, ncells: usize) -> Result<(Position, Origin)> {
        layout.validate(ncells)?;
        let mut p = Position {
            below: [NONE; 52],
            above: [NONE; 52],
            top: [NONE; NCOLS],
            cells: [NONE; MAX_CELLS],
            found: layout.foundations,
            ncells: ncells as u8,
            track: false,
            max_auto: layout.autoplay == Autoplay::Max,
            prefix: [0; 52],
            col_of: [0; 52],
            key: [0; 3],
        };
        let mut origin = Origin {
            under: [NONE; 52],
            max_auto: p.max_auto,
        };
        for (i, col) in layout.columns.iter().enumerate() {
            let mut prev = NONE;
            for &c in col {
                p.below[c as usize] = prev;
                origin.under[c as usize] = prev;
                if prev != NONE {
                    p.above[prev as usize] = c;
                }
                prev = c;
            }
            p.top[i] = prev;
        }
        // Keep the board's slot positions when they fit; otherwise pack the cards into the first slots.
        let cards: Vec<Card> = layout
            .cells
            .iter()
            .copied()
            .filter(|&c| c != NONE)
            .collect();
        if layout.cells.len() <= ncells {
            p.cells[..layout.cells.len()].copy_from_slice(&layout.cells);
        } else {
            p.cells[..cards.len()].copy_from_slice(&cards);
        }
        p.key = p.compute_key(&origin);
        Ok((p, origin))
    }

    /// The key computed from scratch (the incremental one must always equal it).
    pub fn compute_key(&self, origin: &Origin) -> Key {
        let mut key = [0u64; 3];
        for c in 0..52u8 {
            let loc = if (rank(c)) < self.found[suit(c) as usize] {
                LOC_HOME
            } else if self.cells[..self.ncells as usize].contains(&c) {
                LOC_CELL
            } else if self.below[c as usize] == NONE {
                LOC_BOTTOM
            } else {
                origin.loc_on(c, self.below[c as usize])
            };
            key[key_word(c)] |= loc << key_shift(c);
        }
        key
    }

    /// Rebuild a position from its key. Columns come out ordered by their bottom card, cells packed.
    pub fn from_key(key: &Key, origin: &Origin, ncells: u8) -> Position {
        Self::decode::<false>(key, origin, ncells)
    }

    /// [`Position::from_key`] with the column statistics kept (see [`Position::track_stats`]).
    pub fn from_key_tracked(key: &Key, origin: &Origin, ncells: u8) -> Position {
        Self::decode::<true>(key, origin, ncells)
    }

    #[inline(always)]
    fn decode<const TRACK: bool>(key: &Key, origin: &Origin, ncells: u8) -> Position {
        let mut p = Position {
            below: [NONE; 52],
            above: [NONE; 52],
            top: [NONE; NCOLS],
            cells: [NONE; MAX_CELLS],
            found: [0; 4],
            ncells,
            track: false,
            max_auto: origin.max_auto,
            prefix: [0; 52],
            col_of: [0; 52],
            key: *key,
        };
        let mut bottoms = [NONE; NCOLS];
        let (mut nb, mut nc) = (0usize, 0usize);
        let mut c = 0u8;
        for (w, &word) in key.iter().enumerate() {
            let mut v = word;
            let n = if w < 2 { 21 } else { 10 };
            for _ in 0..n {
                let loc = v & 7;
                v >>= 3;
                match loc {
                    LOC_HOME => p.found[suit(c) as usize] += 1,
                    LOC_CELL => {
                        p.cells[nc & (MAX_CELLS - 1)] = c;
                        nc += 1;
                    }
                    LOC_BOTTOM => {
                        bottoms[nb & (NCOLS - 1)] = c;
                        nb += 1;
                    }
                    _ => {
                        let u = if loc == LOC_DEALT {
                            origin.under[c as usize]
                        } else {
                            let (lo, hi) = opposite_suits(suit(c));
                            card::make(rank(c) + 1, if loc == LOC_PARENT_LO { lo } else { hi })
                        };
                        p.below[c as usize] = u;
                        p.above[u as usize] = c;
                    }
                }
                c += 1;
            }
        }
        for (i, &b) in bottoms[..nb.min(NCOLS)].iter().enumerate() {
            if TRACK {
                p.top[i] = p.stack_column(b, i as u8);
                continue;
            }
            let mut u = NONE;
            let mut x = b;
            while x != NONE {
                u = x;
                x = p.above[x as usize];
            }
            p.top[i] = u;
        }
        p.track = TRACK;
        p
    }

    #[inline(always)]
    fn set_loc(&mut self, c: Card, loc: u64) {
        set_loc(&mut self.key, c, loc);
    }

    #[inline(always)]
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The rules of automatic moves this position is played under.
    #[inline(always)]
    pub fn autoplay(&self) -> Autoplay {
        if self.max_auto {
            Autoplay::Max
        } else {
            Autoplay::Safe
        }
    }

    #[inline(always)]
    pub fn ncells(&self) -> usize {
        self.ncells as usize
    }

    #[inline(always)]
    pub fn foundations(&self) -> [u8; 4] {
        self.found
    }

    #[inline(always)]
    pub fn top(&self, col: usize) -> Card {
        self.top[col]
    }

    #[inline(always)]
    pub fn below(&self, c: Card) -> Card {
        self.below[c as usize]
    }

    #[inline(always)]
    pub fn cell(&self, slot: usize) -> Card {
        self.cells[slot]
    }

    /// Cards on the foundations.
    #[inline(always)]
    pub fn home(&self) -> u32 {
        self.found.iter().map(|&f| f as u32).sum()
    }

    #[inline(always)]
    pub fn is_won(&self) -> bool {
        self.found == [13; 4]
    }

    /// Cards of column `col`, from the buried card to the exposed card.
    pub fn column(&self, col: usize) -> Vec<Card> {
        let mut v = Vec::new();
        let mut c = self.top[col];
        while c != NONE {
            v.push(c);
            c = self.below[c as usize];
        }
        v.reverse();
        v
    }

    /// The layout of this position (concrete column and slot order).
    pub fn layout(&self) -> Layout {
        Layout {
            columns: (0..NCOLS).map(|i| self.column(i)).collect(),
            cells: self.cells[..self.ncells as usize].to_vec(),
            foundations: self.found,
            autoplay: self.autoplay(),
        }
    }

    /// True when every column is in non-increasing rank order from bottom to top: the lowest card left
    /// can then always go home, so the position is won.
    pub fn is_sorted(&self) -> bool {
        if self.track {
            return self.stats_sum() & 0xFF == 0;
        }
        for col in 0..NCOLS {
            let mut c = self.top[col];
            if c == NONE {
                continue;
            }
            let mut u = self.below[c as usize];
            while u != NONE {
                if rank(c) > rank(u) {
                    return false;
                }
                c = u;
                u = self.below[c as usize];
            }
        }
        true
    }

    /// Debug check: the links are consistent and the incremental key equals the recomputed one.
    pub fn check_invariants(&self, origin: &Origin) -> std::result::Result<(), String> {
        let mut seen = [0u8; 52];
        for s in 0..4 {
            for r in 0..self.found[s] {
                seen[card::make(r, s as u8) as usize] += 1;
            }
        }
        for &c in &self.cells[..self.ncells as usize] {
            if c != NONE {
                seen[c as usize] += 1;
            }
        }
        for col in 0..NCOLS {
            for c in self.column(col) {
                seen[c as usize] += 1;
                let u = self.below[c as usize];
                if u != NONE && self.above[u as usize] != c {
                    return Err(format!("broken link under {}", card::name(c)));
                }
            }
        }
        if let Some(c) = (0..52).find(|&c| seen[c] != 1) {
            return Err(format!(
                "card {} seen {} times",
                card::name(c as u8),
                seen[c]
            ));
        }
        if self.key != self.compute_key(origin) {
            return Err("incremental key differs from the recomputed key".into());
        }
        for col in (0..NCOLS).filter(|_| self.track) {
            if self.column_stats(col) != self.compute_stats(col) {
                return Err(format!(
                    "kept statistics of column {} differ from the recomputed ones",
                    col + 1
                ));
            }
            for (i, &c) in self.column(col).iter().enumerate() {
                if self.prefix[c as usize] != self.prefix_on(c, self.below[c as usize]) {
                    return Err(format!(
                        "kept statistics of {} differ from those stepped from the card below",
                        card::name(c)
                    ));
                }
                if self.col_of[c as usize] as usize != col
                    || (self.prefix[c as usize] >> 40) & 0x1F != i as u64 + 1
                {
                    return Err(format!(
                        "kept column or height of {} is wrong",
                        card::name(c)
                    ));
                }
            }
        }
        Ok(())
    }
}
