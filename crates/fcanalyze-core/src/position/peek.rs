//! A child seen without building it ([`Position::peek`]): its key and the inputs of the heuristics,
//! from what was read of the parent once for all its moves.

use crate::card::{fits_on, rank, suit, Card, NONE};
use crate::key::{loc_of, with_loc, Key, LOC_BOTTOM, LOC_CELL, LOC_HOME};

use super::stats::STATS_COUNTS;
use super::{Move, Origin, Position, FOUNDATION};

/// What [`Position::peek`] needs of a position, once for all of its moves.
#[derive(Clone, Copy, Debug)]
pub struct PeekBase {
    /// [`Position::stats_sum`].
    pub stats: u64,
    /// Empty free cells.
    pub free: u32,
    /// Empty columns.
    pub empty: u32,
    /// The exposed cards, as a bit set.
    pub tops: u64,
}

/// A child seen without building it (see [`Position::peek`]): its key and the inputs of the heuristics.
#[derive(Clone, Copy, Debug)]
pub struct Peek {
    /// The child's canonical key.
    pub key: Key,
    /// The child's [`Position::stats_sum`].
    pub stats: u64,
    /// Empty free cells in the child.
    pub free: u32,
    /// Empty columns in the child.
    pub empty: u32,
    /// Source column (`NONE` for a free cell), destination column (`NONE` for a free cell), cards moved,
    /// height of the moved run's bottom card in its column, and that card.
    src: u8,
    dst: u8,
    n: u8,
    hb: u8,
    moved: Card,
}

impl Peek {
    /// Whether the [`Position::cover`] of a card of the bit set `cards` may differ in this child from
    /// the parent's, `cols` being the parent's [`Position::columns_holding`] those cards: only when
    /// the move takes cards from or puts cards on one of those columns, or moves one of those cards
    /// from a free cell.
    #[inline(always)]
    pub fn may_cover(&self, cards: u64, cols: u32) -> bool {
        // A free cell (`NONE`) is bit 31, never a column.
        let touched = 1u32 << (self.src & 31) | 1u32 << (self.dst & 31);
        cols & touched != 0 || (self.src == NONE && cards >> self.moved & 1 != 0)
    }

    /// The cards lying in this child on a card whose [`Position::depth_place`] in the parent is
    /// `place` (0 for a card in a free cell): [`Position::peek_cover`] less one, from what was read
    /// of the card once for all the parent's moves.
    #[inline(always)]
    pub fn depth(&self, place: DepthPlace) -> i32 {
        let DepthPlace { col, height, depth } = place;
        if col == self.src {
            if height < self.hb {
                // Below the moved run.
                depth - self.n as i32
            } else if self.dst == NONE {
                // The moved card, now in a free cell.
                0
            } else {
                // In the moved run, with the cards above it.
                depth
            }
        } else if col == self.dst {
            depth + self.n as i32
        } else {
            depth
        }
    }
}

/// Where a card that is not home lies, for [`Peek::depth`] (see [`Position::depth_place`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct DepthPlace {
    /// Its column, or [`DepthPlace::CELL`] for a free cell.
    pub col: u8,
    /// Its height in the column (1 for the buried card).
    pub height: u8,
    /// The cards lying on it (0 in a free cell).
    pub depth: i32,
}

impl DepthPlace {
    /// The `col` of a card in a free cell: neither a column nor `NONE` (the free cells' code in a
    /// [`Peek`]), so no move's source or destination.
    pub const CELL: u8 = 0xFE;
}

impl Position {
    /// What [`Position::peek`] needs of this position, computed once for all its moves.
    #[inline]
    pub fn peek_base(&self) -> PeekBase {
        debug_assert!(self.track);
        let mut free = 0;
        for &c in &self.cells[..self.ncells as usize] {
            free += (c == NONE) as u32;
        }
        let mut empty = 0;
        let mut tops = 0u64;
        let mut stats = 0u64;
        for &t in &self.top {
            if t == NONE {
                empty += 1;
            } else {
                tops |= 1 << t;
                stats += self.prefix[t as usize] & STATS_COUNTS;
            }
        }
        PeekBase {
            stats,
            free,
            empty,
            tops,
        }
    }

    /// The key and the heuristic inputs of the child reached by `m` (a move of [`Position::moves`]),
    /// without building it; `None` when the child needs automatic moves (a move to the foundations, or
    /// one that exposes a card that goes home at once): build it then. `self` must be settled and keep
    /// its statistics, `base` must be its [`Position::peek_base`].
    #[inline(always)]
    pub fn peek(&self, m: Move, base: &PeekBase, origin: &Origin) -> Option<Peek> {
        debug_assert!(self.track);
        if m.to == FOUNDATION {
            return None;
        }
        let mut stats = base.stats;
        let mut free = base.free;
        let mut empty = base.empty;
        let (b, t, src, hb) = if m.from < 8 {
            let col = m.from as usize;
            let t = self.top[col];
            let mut b = t;
            for _ in 1..m.count {
                b = self.below[b as usize];
            }
            let u = self.below[b as usize];
            stats -= self.prefix[t as usize] & STATS_COUNTS;
            if u == NONE {
                empty += 1;
            } else {
                if self.auto_home(u) {
                    return None;
                }
                stats += self.prefix[u as usize] & STATS_COUNTS;
            }
            (b, t, m.from, ((self.prefix[b as usize] >> 40) & 0x1F) as u8)
        } else {
            let c = self.cells[(m.from - 8) as usize];
            free += 1;
            (c, c, NONE, 0)
        };
        let dst;
        let loc = if m.to >= 8 {
            free -= 1;
            dst = NONE;
            LOC_CELL
        } else {
            let d = m.to as usize;
            dst = m.to;
            let td = self.top[d];
            debug_assert!(
                td == NONE || fits_on(b, td),
                "a move onto a card it does not fit"
            );
            // What the moved run adds to the destination's statistics, without stepping
            // `prefix_step` through it: the run is in sequence and goes onto a parent or into an
            // empty column (as every move of `moves` to a column), so it adds no breaks and no kings
            // lying on a card. The ranks of the run fall by one from `b` up, so card `i` of it lies
            // above a lower card exactly when its rank is above the destination's lowest rank, and
            // above a lower card of its suit exactly when its rank is above the destination's lowest
            // of that suit; every card of it is misplaced when the destination has a break. An empty
            // column counts as holding no card lower than a king (suit minima 15).
            let pu = if td == NONE {
                0xFFFF << 48
            } else {
                self.prefix[td as usize]
            };
            let mins = pu >> 48;
            let lowest = (mins & 0xF)
                .min((mins >> 4) & 0xF)
                .min((mins >> 8) & 0xF)
                .min(mins >> 12);
            let n = m.count as u64;
            let blockers = (rank(b) as u64).saturating_sub(lowest).min(n);
            let mut same = 0u64;
            let mut x = b;
            loop {
                same += (rank(x) as u64 > (mins >> (4 * suit(x) as u32)) & 0xF) as u64;
                if x == t {
                    break;
                }
                x = self.above[x as usize];
            }
            let misplaced = if (pu >> 16) & 0xFF != 0 { n } else { 0 };
            stats += blockers + (same << 8) + (misplaced << 24);
            if td == NONE {
                empty -= 1;
                LOC_BOTTOM
            } else {
                origin.loc_on(b, td)
            }
        };
        Some(Peek {
            key: with_loc(&self.key, b, loc),
            stats,
            free,
            empty,
            src,
            dst,
            n: m.count,
            hb,
            moved: b,
        })
    }

    /// The columns holding cards of the bit set `cards`, as a bit set. The position must keep its
    /// statistics.
    #[inline]
    pub fn columns_holding(&self, cards: u64) -> u32 {
        debug_assert!(self.track);
        let mut cols = 0u32;
        let mut rest = cards;
        while rest != 0 {
            let c = rest.trailing_zeros() as Card;
            rest &= rest - 1;
            let loc = loc_of(&self.key, c);
            if loc != LOC_HOME && loc != LOC_CELL {
                cols |= 1 << self.col_of[c as usize];
            }
        }
        cols
    }

    /// Where card `c`, which must not be home, lies (see [`DepthPlace`]). The position must keep its
    /// statistics.
    #[inline(always)]
    pub fn depth_place(&self, c: Card) -> DepthPlace {
        debug_assert!(self.track);
        let loc = loc_of(&self.key, c);
        debug_assert!(loc != LOC_HOME);
        if loc == LOC_CELL {
            return DepthPlace {
                col: DepthPlace::CELL,
                height: 0,
                depth: 0,
            };
        }
        let col = self.col_of[c as usize];
        let h = ((self.prefix[c as usize] >> 40) & 0x1F) as u8;
        let ht = ((self.prefix[self.top[col as usize] as usize] >> 40) & 0x1F) as u8;
        DepthPlace {
            col,
            height: h,
            depth: (ht - h) as i32,
        }
    }

    /// [`Position::cover`] of card `c` in the child described by `pk` (a peek of this position).
    #[inline]
    pub fn peek_cover(&self, pk: &Peek, c: Card) -> Option<u32> {
        match loc_of(&self.key, c) {
            LOC_HOME => None,
            LOC_CELL => Some((c == pk.moved && pk.src == NONE) as u32),
            _ => {
                let col = self.col_of[c as usize];
                let h = ((self.prefix[c as usize] >> 40) & 0x1F) as u32;
                let ht = ((self.prefix[self.top[col as usize] as usize] >> 40) & 0x1F) as u32;
                let cover = 1 + ht - h;
                if col == pk.src {
                    if h >= pk.hb as u32 {
                        if pk.dst == NONE {
                            Some(0)
                        } else {
                            Some(cover)
                        }
                    } else {
                        Some(cover - pk.n as u32)
                    }
                } else if col == pk.dst {
                    Some(cover + pk.n as u32)
                } else {
                    Some(cover)
                }
            }
        }
    }
}
