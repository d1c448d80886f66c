//! A FreeCell position, its legal moves, the safe automatic moves and its canonical key (SPEC §2–§3).
//!
//! Columns are kept as links between cards (`below`/`above`) so that moving a run of any length is O(1).
//! The canonical key gives each card 3 bits saying where it lies: home, in a free cell, at the bottom of a
//! column, on the card it was dealt on, or on one of its two possible parents. Column and cell order
//! follow from that, so positions that differ only by permuting columns or cells share one key, with no
//! sorting. The key is kept up to date as moves are applied (only the moved card's 3 bits change).

use crate::card::{self, fits_on, is_red, opposite_suits, rank, same_colour_other, suit, Card, NONE};
use crate::error::{Error, Result};

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

const LOC_HOME: u64 = 0;
const LOC_CELL: u64 = 1;
const LOC_BOTTOM: u64 = 2;
const LOC_DEALT: u64 = 3;
const LOC_PARENT_LO: u64 = 4;
const LOC_PARENT_HI: u64 = 5;

/// The canonical key: 3 bits per card, cards 0–20 in word 0, 21–41 in word 1, 42–51 in word 2.
pub type Key = [u64; 3];

const fn key_word(c: Card) -> usize {
    c as usize / 21
}
const fn key_shift(c: Card) -> u32 {
    (c as u32 % 21) * 3
}

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

/// A position: columns, free cells and foundations, with its canonical key.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    below: [Card; 52],
    above: [Card; 52],
    top: [Card; NCOLS],
    cells: [Card; MAX_CELLS],
    found: [u8; 4],
    ncells: u8,
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
        Ok(Layout { columns: crate::deal::deal(n)?.to_vec(), cells: vec![], foundations: [0; 4] })
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
        for &c in self.columns.iter().flatten().chain(self.cells.iter().filter(|&&c| c != NONE)) {
            if c as usize >= 52 {
                return Err(Error::BadBoard(format!("bad card code {c}")));
            }
            seen[c as usize] += 1;
        }
        let dups: Vec<String> = (0..52u8).filter(|&c| seen[c as usize] > 1).map(card::name).collect();
        if !dups.is_empty() {
            return Err(Error::BadBoard(format!(
                "duplicate card{} {} (a card is on the foundations or in play twice)",
                if dups.len() > 1 { "s" } else { "" },
                dups.join(", ")
            )));
        }
        let missing: Vec<String> = (0..52u8).filter(|&c| seen[c as usize] == 0).map(card::name).collect();
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

impl Origin {
    fn loc_on(&self, c: Card, u: Card) -> u64 {
        if fits_on(c, u) {
            if suit(u) == opposite_suits(suit(c)).0 {
                LOC_PARENT_LO
            } else {
                LOC_PARENT_HI
            }
        } else {
            debug_assert_eq!(self.under[c as usize], u, "card placed on a card that is neither parent nor origin");
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
        let cards: Vec<Card> = layout.cells.iter().copied().filter(|&c| c != NONE).collect();
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
        let mut p = Position {
            below: [NONE; 52],
            above: [NONE; 52],
            top: [NONE; NCOLS],
            cells: [NONE; MAX_CELLS],
            found: [0; 4],
            ncells,
            key: *key,
        };
        let mut bottoms = [NONE; NCOLS];
        let (mut nb, mut nc) = (0usize, 0usize);
        for c in 0..52u8 {
            let loc = (key[key_word(c)] >> key_shift(c)) & 7;
            match loc {
                LOC_HOME => p.found[suit(c) as usize] += 1,
                LOC_CELL => {
                    p.cells[nc] = c;
                    nc += 1;
                }
                LOC_BOTTOM => {
                    bottoms[nb] = c;
                    nb += 1;
                }
                LOC_DEALT => p.below[c as usize] = origin.under[c as usize],
                _ => {
                    let (lo, hi) = opposite_suits(suit(c));
                    let s = if loc == LOC_PARENT_LO { lo } else { hi };
                    p.below[c as usize] = card::make(rank(c) + 1, s);
                }
            }
        }
        for c in 0..52usize {
            let u = p.below[c];
            if u != NONE {
                p.above[u as usize] = c as Card;
            }
        }
        for (i, &b) in bottoms[..nb].iter().enumerate() {
            let mut t = b;
            while p.above[t as usize] != NONE {
                t = p.above[t as usize];
            }
            p.top[i] = t;
        }
        p
    }

    #[inline(always)]
    fn set_loc(&mut self, c: Card, loc: u64) {
        let w = key_word(c);
        let sh = key_shift(c);
        self.key[w] = (self.key[w] & !(7u64 << sh)) | (loc << sh);
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
            for slot in 0..self.ncells as usize {
                let c = self.cells[slot];
                if c != NONE && self.safe_auto(c) {
                    self.cells[slot] = NONE;
                    self.found[suit(c) as usize] += 1;
                    self.set_loc(c, LOC_HOME);
                    changed = true;
                    if let Some(l) = log.as_deref_mut() {
                        l.push(Move { from: cell_place(slot), to: FOUNDATION, count: 1 });
                    }
                }
            }
            for col in 0..NCOLS {
                loop {
                    let t = self.top[col];
                    if t == NONE || !self.safe_auto(t) {
                        break;
                    }
                    let u = self.below[t as usize];
                    self.top[col] = u;
                    self.below[t as usize] = NONE;
                    if u != NONE {
                        self.above[u as usize] = NONE;
                    }
                    self.found[suit(t) as usize] += 1;
                    self.set_loc(t, LOC_HOME);
                    changed = true;
                    if let Some(l) = log.as_deref_mut() {
                        l.push(Move { from: col as u8, to: FOUNDATION, count: 1 });
                    }
                }
            }
            if !changed {
                break;
            }
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
        }
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
        out.clear();
        let nc = self.ncells as usize;
        let mut free = 0u32;
        let mut first_free = NONE;
        for i in (0..nc).rev() {
            if self.cells[i] == NONE {
                free += 1;
                first_free = cell_place(i);
            }
        }
        let mut empty = 0u32;
        let mut first_empty = NONE;
        for i in (0..NCOLS).rev() {
            if self.top[i] == NONE {
                empty += 1;
                first_empty = i as u8;
            }
        }
        // To the foundations by hand.
        for col in 0..NCOLS {
            let t = self.top[col];
            if t != NONE && self.found[suit(t) as usize] == rank(t) {
                out.push(Move { from: col as u8, to: FOUNDATION, count: 1 });
            }
        }
        for slot in 0..nc {
            let c = self.cells[slot];
            if c != NONE && self.found[suit(c) as usize] == rank(c) {
                out.push(Move { from: cell_place(slot), to: FOUNDATION, count: 1 });
            }
        }
        // From the free cells to the columns.
        for slot in 0..nc {
            let c = self.cells[slot];
            if c == NONE {
                continue;
            }
            for d in 0..NCOLS {
                let u = self.top[d];
                if u != NONE && fits_on(c, u) {
                    out.push(Move { from: cell_place(slot), to: d as u8, count: 1 });
                }
            }
            if first_empty != NONE {
                out.push(Move { from: cell_place(slot), to: first_empty, count: 1 });
            }
        }
        // From the columns.
        let lim_card = Self::move_limit(free, empty);
        let lim_empty = if empty > 0 { Self::move_limit(free, empty - 1) } else { 0 };
        let mut run = [NONE; 13];
        for s in 0..NCOLS {
            let t = self.top[s];
            if t == NONE {
                continue;
            }
            let mut len = 1usize;
            run[0] = t;
            let mut x = t;
            loop {
                let u = self.below[x as usize];
                if u == NONE || !fits_on(x, u) {
                    break;
                }
                run[len] = u;
                len += 1;
                x = u;
            }
            let whole = self.below[x as usize] == NONE;
            let rt = rank(t);
            for d in 0..NCOLS {
                let u = self.top[d];
                if d == s || u == NONE {
                    continue;
                }
                let ru = rank(u);
                if ru <= rt {
                    continue;
                }
                let idx = (ru - rt - 1) as usize;
                if idx < len && is_red(run[idx]) != is_red(u) && (idx as u32) < lim_card {
                    out.push(Move { from: s as u8, to: d as u8, count: idx as u8 + 1 });
                }
            }
            if first_empty != NONE {
                let maxc = (len as u32).min(lim_empty) as usize;
                for n in 1..=maxc {
                    if !(whole && n == len) {
                        out.push(Move { from: s as u8, to: first_empty, count: n as u8 });
                    }
                }
            }
            if first_free != NONE {
                out.push(Move { from: s as u8, to: first_free, count: 1 });
            }
        }
    }

    /// True when every column is in non-increasing rank order from bottom to top: the lowest card left
    /// can then always go home, so the position is won.
    pub fn is_sorted(&self) -> bool {
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
            if c != NONE && self.found[suit(c) as usize] == rank(c) && best.is_none_or(|(r, _)| rank(c) < r) {
                best = Some((rank(c), Move { from: cell_place(slot), to: FOUNDATION, count: 1 }));
            }
        }
        for col in 0..NCOLS {
            let c = self.top[col];
            if c != NONE && self.found[suit(c) as usize] == rank(c) && best.is_none_or(|(r, _)| rank(c) < r) {
                best = Some((rank(c), Move { from: col as u8, to: FOUNDATION, count: 1 }));
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
            return Err(format!("card {} seen {} times", card::name(c as u8), seen[c]));
        }
        if self.key != self.compute_key(origin) {
            return Err("incremental key differs from the recomputed key".into());
        }
        Ok(())
    }
}
