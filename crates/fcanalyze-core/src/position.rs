//! A FreeCell position, its legal moves, the safe automatic moves and its canonical key (SPEC §2–§3).
//!
//! Columns are kept as links between cards (`below`/`above`) so that moving a run of any length is O(1).
//! The canonical key gives each card 3 bits saying where it lies: home, in a free cell, at the bottom of a
//! column, on the card it was dealt on, or on one of its two possible parents. Column and cell order
//! follow from that, so positions that differ only by permuting columns or cells share one key, with no
//! sorting. The key is kept up to date as moves are applied (only the moved card's 3 bits change).

use crate::card::{
    self, fits_on, is_red, opposite_suits, rank, same_colour_other, suit, Card, NONE,
};
use crate::error::{Error, Result};
use crate::key::{
    key_shift, key_word, loc_of, set_loc, with_loc, LOC_BOTTOM, LOC_CELL, LOC_DEALT, LOC_HOME,
    LOC_PARENT_HI, LOC_PARENT_LO,
};
// compat: removed at integration
pub use crate::key::Key;

/// Number of columns.
pub const NCOLS: usize = 8;
/// Largest number of free cells supported.
pub const MAX_CELLS: usize = 8;
/// The place code of the foundations; columns are 0..8 and free-cell slots are 8..16.
pub const FOUNDATION: u8 = 16;
/// The place code of free-cell slot `i`.
pub const fn cell_place(i: usize) -> u8 {
    8 + i as u8
}

/// `RUN_PARENTS[t][n]`: the cards that some tail of a run of `n` cards with top card `t` may go on
/// (the parents of each of its cards: one rank higher, the other colour).
const RUN_PARENTS: [[u64; 16]; 52] = {
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

/// A move: from a column (0..8) or free-cell slot (8..16) to a column, a slot or the foundations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: u8,
    pub to: u8,
    pub count: u8,
}

/// What the key of a position is relative to: the card each card was first placed on.
#[derive(Clone, Debug)]
pub struct Origin {
    under: [Card; 52],
}

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
    /// Per column card: the packed [`ColumnStats`] of its column from the buried card up to it, and
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

/// The parts of a position as read from a board or a deal: columns from the buried card to the exposed
/// card, free-cell slots (`NONE` for an empty slot) and the number of cards home per suit (C, D, H, S).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub columns: Vec<Vec<Card>>,
    pub cells: Vec<Card>,
    pub foundations: [u8; 4],
}

impl Layout {
    /// The layout of Microsoft deal `n`.
    pub fn deal(n: u64) -> Result<Layout> {
        Ok(Layout {
            columns: crate::deal::deal(n)?.to_vec(),
            cells: vec![],
            foundations: [0; 4],
        })
    }

    /// Check that the layout is a position of the full deck playable with `ncells` free cells.
    pub fn validate(&self, ncells: usize) -> Result<()> {
        if ncells > MAX_CELLS {
            return Err(Error::BadCells(format!(
                "{ncells} free cells requested; fcanalyze supports 0 to {MAX_CELLS}"
            )));
        }
        if self.columns.len() > NCOLS {
            return Err(Error::BadBoard(format!(
                "the board has {} columns; FreeCell has {NCOLS}",
                self.columns.len()
            )));
        }
        let in_cells = self.cells.iter().filter(|&&c| c != NONE).count();
        if in_cells > ncells {
            return Err(Error::BadCells(format!(
                "the board has {in_cells} cards in free cells but only {ncells} free cells are in play"
            )));
        }
        let mut seen = [0u8; 52];
        for (s, &n) in self.foundations.iter().enumerate() {
            if n > 13 {
                return Err(Error::BadBoard(format!(
                    "foundation {} holds {n} cards; at most 13",
                    card::SUIT_CHARS[s] as char
                )));
            }
            for r in 0..n {
                seen[card::make(r, s as u8) as usize] += 1;
            }
        }
        for &c in self
            .columns
            .iter()
            .flatten()
            .chain(self.cells.iter().filter(|&&c| c != NONE))
        {
            if c as usize >= 52 {
                return Err(Error::BadBoard(format!("bad card code {c}")));
            }
            seen[c as usize] += 1;
        }
        let dups: Vec<String> = (0..52u8)
            .filter(|&c| seen[c as usize] > 1)
            .map(card::name)
            .collect();
        if !dups.is_empty() {
            return Err(Error::BadBoard(format!(
                "duplicate card{} {} (a card is on the foundations or in play twice)",
                if dups.len() > 1 { "s" } else { "" },
                dups.join(", ")
            )));
        }
        let missing: Vec<String> = (0..52u8)
            .filter(|&c| seen[c as usize] == 0)
            .map(card::name)
            .collect();
        if !missing.is_empty() {
            return Err(Error::BadBoard(format!(
                "missing card{} {} (a board must hold all 52 cards)",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", ")
            )));
        }
        Ok(())
    }
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
const STATS_COUNTS: u64 = 0x07_FFFF_FFFF;

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
    /// Build the position of a validated layout (not yet settled) and the origin its keys refer to.
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
            prefix: [0; 52],
            col_of: [0; 52],
            key: [0; 3],
        };
        let mut origin = Origin { under: [NONE; 52] };
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
        }
    }

    #[inline(always)]
    fn safe_auto(&self, c: Card) -> bool {
        let r = rank(c);
        let s = suit(c);
        if self.found[s as usize] != r {
            return false;
        }
        if r <= 1 {
            return true;
        }
        let (o1, o2) = opposite_suits(s);
        let lo = self.found[o1 as usize].min(self.found[o2 as usize]);
        lo >= r || (lo + 1 >= r && self.found[same_colour_other(s) as usize] + 2 >= r)
    }

    /// Apply the safe automatic moves until none applies, logging each one when asked.
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
                    if self.above[c as usize] != NONE || !self.safe_auto(c) {
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
    /// card home leaves the foundations, so what may go home safely, as they were, and exposes one card
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
        if m.to == FOUNDATION || (uncovered != NONE && self.safe_auto(uncovered)) {
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

    /// The packed statistics of card `c` lying on `u` (`NONE` for the bottom of a column), from the
    /// statistics of `u` (see [`prefix_step`]).
    #[inline(always)]
    fn prefix_on(&self, c: Card, u: Card) -> u64 {
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
    fn stack_column(&mut self, b: Card, col: u8) -> Card {
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
    fn restack(&mut self, b: Card, t: Card, col: u8) {
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
                if self.safe_auto(u) {
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
        // The exposed cards `c` may go on: the two cards one rank higher of the other colour.
        let parents = |c: Card| tops & RUN_PARENTS[c as usize][1];
        // To the foundations by hand, in the order of the columns.
        let mut home_cols = 0u32;
        let mut home = tops & next;
        while home != 0 {
            home_cols |= 1 << col_of[home.trailing_zeros() as usize];
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
        let mut rest = held;
        while rest != 0 {
            let slot = rest.trailing_zeros() as usize / 8;
            rest &= rest - 1;
            let c = self.cells[slot];
            if (next >> c) & 1 != 0 {
                out.push(Move {
                    from: cell_place(slot),
                    to: FOUNDATION,
                    count: 1,
                });
            }
        }
        // From the free cells to the columns.
        let mut rest = held;
        while rest != 0 {
            let slot = rest.trailing_zeros() as usize / 8;
            rest &= rest - 1;
            let c = self.cells[slot];
            let mut ps = parents(c);
            while ps != 0 {
                let u = ps.trailing_zeros() as usize;
                ps &= ps - 1;
                out.push(Move {
                    from: cell_place(slot),
                    to: col_of[u],
                    count: 1,
                });
            }
            if first_empty != NONE {
                out.push(Move {
                    from: cell_place(slot),
                    to: first_empty,
                    count: 1,
                });
            }
        }
        // From the columns.
        let lim_card = Self::move_limit(free, empty) as usize;
        let lim_empty = if empty > 0 {
            Self::move_limit(free, empty - 1)
        } else {
            0
        };
        for s in 0..NCOLS {
            let t = self.top[s];
            if t == NONE {
                continue;
            }
            if self.track {
                // The run at the top and its length are kept: its cards' parents follow from the top
                // card's rank and colour.
                let pt = self.prefix[t as usize];
                let len = ((pt >> 36) & 0xF) as usize;
                let rt = rank(t);
                let mut ps = tops & RUN_PARENTS[t as usize][len.min(lim_card)];
                while ps != 0 {
                    let u = ps.trailing_zeros() as usize;
                    ps &= ps - 1;
                    out.push(Move {
                        from: s as u8,
                        to: col_of[u],
                        count: rank(u as Card) - rt,
                    });
                }
                let whole = len as u64 == (pt >> 40) & 0x1F;
                if first_empty != NONE {
                    let maxc = (len as u32).min(lim_empty) as usize;
                    for n in 1..=maxc {
                        if !(whole && n == len) {
                            out.push(Move {
                                from: s as u8,
                                to: first_empty,
                                count: n as u8,
                            });
                        }
                    }
                }
                if first_free != NONE {
                    out.push(Move {
                        from: s as u8,
                        to: first_free,
                        count: 1,
                    });
                }
                continue;
            }
            let mut len = 0usize;
            let mut x = t;
            loop {
                // `x` is the bottom card of a run of `len + 1` cards.
                if len < lim_card {
                    let mut ps = parents(x);
                    while ps != 0 {
                        let u = ps.trailing_zeros() as usize;
                        ps &= ps - 1;
                        out.push(Move {
                            from: s as u8,
                            to: col_of[u],
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
            let whole = self.below[x as usize] == NONE;
            if first_empty != NONE {
                let maxc = (len as u32).min(lim_empty) as usize;
                for n in 1..=maxc {
                    if !(whole && n == len) {
                        out.push(Move {
                            from: s as u8,
                            to: first_empty,
                            count: n as u8,
                        });
                    }
                }
            }
            if first_free != NONE {
                out.push(Move {
                    from: s as u8,
                    to: first_free,
                    count: 1,
                });
            }
        }
        PeekBase {
            stats,
            free,
            empty,
            tops,
        }
    }

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
            if exposed != NONE && self.safe_auto(exposed) {
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
    fn may_unstack_column(&self, col: u8, base: &PeekBase) -> bool {
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
    fn may_unstack(&self, col: u8, stop: Card, base: &PeekBase) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Position::may_unstack_column`] answers as [`Position::may_unstack`] of the whole column, on
    /// positions of random play from many deals, with every number of free cells.
    #[test]
    fn may_unstack_column_matches_the_walk() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut moves = Vec::new();
        let mut seen = [0u32; 2];
        for deal in 1..=300u64 {
            for cells in 0..=MAX_CELLS {
                let layout = Layout::deal(deal).unwrap();
                let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
                p.track_stats();
                p.settle(None);
                for _ in 0..60 {
                    let base = p.peek_base();
                    for col in 0..NCOLS as u8 {
                        let walk = p.may_unstack(col, NONE, &base);
                        assert_eq!(p.may_unstack_column(col, &base), walk);
                        seen[walk as usize] += 1;
                    }
                    p.moves(&mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    p.apply(moves[(rng % moves.len() as u64) as usize], &origin);
                    p.settle(None);
                }
            }
        }
        assert!(seen[0] > 1000 && seen[1] > 1000, "{seen:?}");
    }
}
