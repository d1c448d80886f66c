//! The column statistics a position keeps for the heuristics: per column card, the packed statistics
//! of its column from the buried card up to it ([`ColumnStats`]), updated as moves are applied.

use crate::card::{fits_on, rank, suit, Card, NONE};
use crate::key::{loc_of, LOC_CELL, LOC_HOME};

use super::Position;
use crate::layout::NCOLS;

/// What the heuristics need to know about one column, from its buried card to its exposed card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColumnStats {
    /// Cards lying above a lower card.
    pub blockers: u8,
    /// Cards lying above a lower card of their own suit.
    pub same_suit: u8,
    /// Adjacent pairs where the upper card does not fit on the lower.
    pub breaks: u8,
    /// Cards above the ordered run at the bottom of the column.
    pub misplaced: u8,
    /// Kings lying on another card.
    pub kings: u8,
    /// Cards in the column.
    pub len: u8,
}

/// The packed statistics of card `c` lying on `u` (`NONE` for the bottom of a column), given the
/// statistics `pu` of `u`: bytes 0–4 count blockers, same-suit blockers, breaks, misplaced cards and
/// kings lying on a card (bits 32–34); bits 36–39 hold the length of the run (cards in sequence) that
/// ends with `c`, bits 40–44 the height in the column, bits 48–63 the lowest rank of each suit.
#[inline(always)]
fn prefix_step(c: Card, u: Card, pu: u64) -> u64 {
    const SUIT_MINS: u64 = 0xFFFF << 48;
    let r = rank(c) as u64;
    let sh = 48 + 4 * suit(c) as u32;
    if u == NONE {
        return (1 << 40) | (1 << 36) | (SUIT_MINS & !(0xF << sh)) | (r << sh);
    }
    let m = pu >> 48;
    let minr = (m & 0xF)
        .min((m >> 4) & 0xF)
        .min((m >> 8) & 0xF)
        .min(m >> 12);
    let mins = (pu >> sh) & 0xF;
    let brk = !fits_on(c, u) as u64;
    let broken = brk | ((pu >> 16) & 0xFF != 0) as u64;
    let run = if brk == 0 { ((pu >> 36) & 0xF) + 1 } else { 1 };
    let counts = (pu & 0x1F07_FFFF_FFFF)
        + (run << 36)
        + (r > minr) as u64
        + (((r > mins) as u64) << 8)
        + (brk << 16)
        + (broken << 24)
        + (((r == 12) as u64) << 32)
        + (1 << 40);
    counts | (pu & SUIT_MINS & !(0xF << sh)) | (mins.min(r) << sh)
}

/// The counters of packed column statistics (bytes 0–4), without height and suit minima.
pub(super) const STATS_COUNTS: u64 = 0x07_FFFF_FFFF;

impl Position {
    /// The packed statistics of card `c` lying on `u` (`NONE` for the bottom of a column), from the
    /// statistics of `u` (see [`prefix_step`]).
    #[inline(always)]
    pub(super) fn prefix_on(&self, c: Card, u: Card) -> u64 {
        let pu = if u == NONE {
            0
        } else {
            self.prefix[u as usize]
        };
        prefix_step(c, u, pu)
    }

    /// Compute the statistics of every card of column `col`, whose buried card is `b`, and return its
    /// exposed card. The same values as [`prefix_step`] card after card, but with the running counts
    /// and minima kept in registers rather than unpacked again from the card below at every card:
    /// decoding a position with its statistics spends most of its time here.
    #[inline(always)]
    pub(super) fn stack_column(&mut self, b: Card, col: u8) -> Card {
        // The packed counters (bytes 0-4), run length and height, the lowest rank of each suit (15 for
        // none), the lowest rank, and whether a break lies below; the buried card `b` first.
        let r = rank(b) as u64;
        let sh = 4 * suit(b) as u32;
        let mut packed = (1u64 << 36) | (1u64 << 40);
        let mut mins = (0xFFFFu64 & !(0xF << sh)) | (r << sh);
        let (mut lowest, mut broken) = (r, 0u64);
        self.prefix[b as usize] = packed | (mins << 48);
        self.col_of[b as usize] = col;
        let mut u = b;
        let mut x = self.above[b as usize];
        while x != NONE {
            let r = rank(x) as u64;
            let sh = 4 * suit(x) as u32;
            let ms = (mins >> sh) & 0xF;
            let brk = !fits_on(x, u) as u64;
            broken |= brk;
            // A break starts the run again at one card; the height grows by one.
            packed = (packed & !((0xF << 36) * brk))
                + (1 << 36)
                + (1 << 40)
                + (r > lowest) as u64
                + (((r > ms) as u64) << 8)
                + (brk << 16)
                + (broken << 24)
                + (((r == 12) as u64) << 32);
            lowest = lowest.min(r);
            mins = (mins & !(0xF << sh)) | (ms.min(r) << sh);
            self.prefix[x as usize] = packed | (mins << 48);
            self.col_of[x as usize] = col;
            u = x;
            x = self.above[x as usize];
        }
        u
    }

    /// Recompute the statistics of the run from `b` (just placed in column `col`) up to `t`.
    #[inline(always)]
    pub(super) fn restack(&mut self, b: Card, t: Card, col: u8) {
        let mut x = b;
        let mut u = self.below[b as usize];
        loop {
            self.prefix[x as usize] = self.prefix_on(x, u);
            self.col_of[x as usize] = col;
            if x == t {
                break;
            }
            u = x;
            x = self.above[x as usize];
        }
    }

    /// Keep the column statistics from now on (they cost a little on every move).
    pub fn track_stats(&mut self) {
        self.track = true;
        self.restack_all();
    }

    /// Whether the column statistics are kept.
    #[inline(always)]
    pub fn tracks_stats(&self) -> bool {
        self.track
    }

    fn restack_all(&mut self) {
        for col in 0..NCOLS {
            let t = self.top[col];
            if t == NONE {
                continue;
            }
            let mut b = t;
            while self.below[b as usize] != NONE {
                b = self.below[b as usize];
            }
            self.restack(b, t, col as u8);
        }
    }

    /// The statistics of every column added up, packed as in [`Position::column_stats`] (bytes 0–4).
    #[inline(always)]
    pub fn stats_sum(&self) -> u64 {
        debug_assert!(self.track);
        let mut sum = 0u64;
        for &t in &self.top {
            if t != NONE {
                sum += self.prefix[t as usize] & STATS_COUNTS;
            }
        }
        sum
    }

    /// The statistics of column `col`, kept up to date as moves are applied.
    pub fn column_stats(&self, col: usize) -> ColumnStats {
        debug_assert!(self.track);
        let t = self.top[col];
        let mut n = 0;
        let mut c = t;
        while c != NONE {
            n += 1;
            c = self.below[c as usize];
        }
        if t == NONE {
            return ColumnStats::default();
        }
        let p = self.prefix[t as usize];
        ColumnStats {
            blockers: p as u8,
            same_suit: (p >> 8) as u8,
            breaks: (p >> 16) as u8,
            misplaced: (p >> 24) as u8,
            kings: ((p >> 32) & 7) as u8,
            len: n,
        }
    }

    /// The statistics of column `col` computed from scratch (the kept ones must always equal them).
    pub fn compute_stats(&self, col: usize) -> ColumnStats {
        let mut buf = [NONE; 52];
        let mut n = 0;
        let mut c = self.top[col];
        while c != NONE {
            buf[n] = c;
            n += 1;
            c = self.below[c as usize];
        }
        let mut st = ColumnStats {
            len: n as u8,
            ..ColumnStats::default()
        };
        let mut min = 255u8;
        let mut min_suit = [255u8; 4];
        let mut prev = NONE;
        let mut broken = false;
        for &c in buf[..n].iter().rev() {
            let r = rank(c);
            if r > min {
                st.blockers += 1;
            } else {
                min = r;
            }
            let s = suit(c) as usize;
            if r > min_suit[s] {
                st.same_suit += 1;
            } else {
                min_suit[s] = r;
            }
            if prev != NONE {
                if !fits_on(c, prev) {
                    st.breaks += 1;
                    broken = true;
                }
                if r == 12 {
                    st.kings += 1;
                }
            }
            if broken {
                st.misplaced += 1;
            }
            prev = c;
        }
        st
    }

    /// Where card `c` lies, as far as the heuristics care: `None` when home, `Some(0)` in a free cell,
    /// otherwise `Some(1 + cards lying above it)`.
    #[inline]
    pub fn cover(&self, c: Card) -> Option<u32> {
        match loc_of(&self.key, c) {
            LOC_HOME => None,
            LOC_CELL => Some(0),
            _ if self.track => {
                let t = self.top[self.col_of[c as usize] as usize];
                let h = |x: Card| ((self.prefix[x as usize] >> 40) & 0x1F) as u32;
                Some(1 + h(t) - h(c))
            }
            _ => {
                let mut n = 1;
                let mut x = self.above[c as usize];
                while x != NONE {
                    n += 1;
                    x = self.above[x as usize];
                }
                Some(n)
            }
        }
    }
}
