//! The rules of play on keys alone, as the prover, the beams and the layered proof apply them: a key
//! decoded into a compact position ([`Lean`]: links, two card masks, the foundations and the key)
//! whose children are computed without the heuristics' statistics. The moves, automatic moves and
//! keys are those of [`Position`](crate::position::Position) (the tests check that both give the same
//! children everywhere).

use crate::autoplay::Autoplay;
use crate::card::{fits_on, make, rank, suit, Card, NONE};
use crate::key::{
    gather_fields, key_shift, key_word, set_loc, Key, LOC_BOTTOM, LOC_CELL, LOC_DEALT, LOC_HOME,
    LOC_PARENT_LO,
};
use crate::layout::{Layout, NCOLS};

/// "No card" in [`Lean`]'s links: bit 63 of a card mask, never a card.
pub(crate) const NO: u8 = 63;
/// Cards 0..52 as a mask.
const DECK_MASK: u64 = (1 << 52) - 1;

#[inline(always)]
fn red(c: u8) -> bool {
    matches!(c & 3, 1 | 2)
}

/// A position in the compact form the prover expands: the card under each column card, the exposed
/// column cards and the free-cell cards as masks, the foundations (and their next cards as a mask) and
/// the canonical key (kept up to date).
#[derive(Clone, Copy)]
pub struct Lean {
    below: [u8; 64],
    tops: u64,
    cells: u64,
    /// The next card of each foundation as a mask (a full foundation gives a bit past the deck): the
    /// cards that may go home, tested for every child.
    next: u64,
    found: [u8; 4],
    /// The lowest card of the run whose move reached this position when the position may skip that
    /// run's moves ([`Rules::for_each_child`]), else [`NO`].
    moved: u8,
    key: Key,
}

/// What the keys of one search refer to: the card each card was dealt on, and what the prover derives
/// from it; and the rules of automatic moves.
#[derive(Clone)]
pub struct Rules {
    /// The card under card `c` for each place code of `c` ([`NO`] when it lies on none).
    under: [[u8; 8]; 52],
    /// Per key word: the low bit of the field of each card dealt on a lower card (a column where such a
    /// card lies on its dealt card is not in order).
    unsorted: [u64; 3],
    ncells: u32,
    /// Every card that fits its foundation goes home automatically ([`Autoplay::Max`]).
    max_auto: bool,
}

/// The next card of each foundation as a mask (a full foundation gives a bit past the deck).
#[inline(always)]
fn next_cards(found: &[u8; 4]) -> u64 {
    (0..4).fold(0u64, |m, s| m | 1 << (4 * found[s] as u32 + s as u32))
}

/// Number of features of [`Lean::features`].
pub const NFEAT: usize = 5;

/// The clubs as a card mask (cards `4r`); shifted left by `s`, the cards of suit `s`.
const SUIT_CARDS: u64 = 0x1_1111_1111_1111;

impl Rules {
    /// The rules for positions of `layout` (the dealt cards, the automatic moves) with `ncells` free
    /// cells.
    pub fn new(layout: &Layout, ncells: usize) -> Rules {
        let mut dealt = [NONE; 52];
        for col in &layout.columns {
            let mut prev = NONE;
            for &c in col {
                dealt[c as usize] = prev;
                prev = c;
            }
        }
        let mut under = [[NO; 8]; 52];
        let mut unsorted = [0u64; 3];
        for c in 0..52u8 {
            let u = &mut under[c as usize];
            let d = dealt[c as usize];
            if d != NONE {
                u[LOC_DEALT as usize] = d;
                if rank(c) > rank(d) {
                    unsorted[key_word(c)] |= 1 << key_shift(c);
                }
            }
            if rank(c) < 12 {
                let (lo, hi) = crate::card::opposite_suits(suit(c));
                u[LOC_PARENT_LO as usize] = make(rank(c) + 1, lo);
                u[LOC_PARENT_LO as usize + 1] = make(rank(c) + 1, hi);
            }
        }
        Rules {
            under,
            unsorted,
            ncells: ncells as u32,
            max_auto: layout.autoplay == Autoplay::Max,
        }
    }

    /// Whether the position of `key` is provably won: every column in non-increasing rank order
    /// (the same test as [`Position::is_sorted`], read from the key alone).
    #[inline(always)]
    pub fn is_sorted(&self, key: &Key) -> bool {
        let mut bad = 0;
        for (&x, &u) in key.iter().zip(&self.unsorted) {
            // Fields equal to LOC_DEALT (0b011).
            bad |= x & (x >> 1) & !(x >> 2) & u;
        }
        bad == 0
    }

    /// The compact position of a key.
    #[inline]
    pub fn decode(&self, key: &Key) -> Lean {
        let mut p = Lean {
            below: [NO; 64],
            tops: 0,
            cells: 0,
            next: 0,
            found: [0; 4],
            moved: NO,
            key: *key,
        };
        // The card under each card, a table look-up per card (the only per-card work: everything else
        // is read a key word at a time below). Chunks of 21 cards match the key words, and the place
        // code indexes an 8-entry row, so no bounds checks are left in the loop.
        let mut covered = 0u64;
        for ((&word, unders), belows) in key
            .iter()
            .zip(self.under.chunks(21))
            .zip(p.below.chunks_mut(21))
        {
            let mut v = word;
            for (u, b) in unders.iter().zip(belows) {
                let d = u[(v & 7) as usize];
                *b = d;
                covered |= 1u64 << d;
                v >>= 3;
            }
        }
        // Which cards are home, in a cell or in a column, from the fields' bits a word at a time.
        let (mut home, mut in_cols) = (0u64, 0u64);
        for (w, &word) in key.iter().enumerate() {
            let x = if w < 2 { word } else { word & ((1 << 30) - 1) };
            let (b1, b2) = (x >> 1, x >> 2);
            home |= gather_fields(!(x | b1 | b2)) << (21 * w);
            p.cells |= gather_fields(x & !(b1 | b2)) << (21 * w);
            in_cols |= gather_fields(b1 | b2) << (21 * w);
        }
        // The fields past the last card of word 2 read as home: drop them.
        home &= DECK_MASK;
        for (s, f) in p.found.iter_mut().enumerate() {
            *f = (home & (SUIT_CARDS << s)).count_ones() as u8;
        }
        p.next = next_cards(&p.found);
        p.tops = in_cols & !covered;
        p
    }

    /// The canonical keys of every position one move away from `p` (automatic moves applied), in the
    /// order [`Position::moves`] would give them up to column and cell order; duplicates possible.
    #[inline]
    pub fn children(&self, p: &Lean, out: &mut Vec<Key>) {
        out.clear();
        self.for_each_child(p, |q| out.push(q.key));
    }

    /// [`Rules::children`], with the run each child may leave unmoved in turn ([`Lean::moved`]).
    #[inline]
    pub fn children_moved(&self, p: &Lean, out: &mut Vec<Key>, moved: &mut Vec<u8>) {
        out.clear();
        moved.clear();
        self.for_each_child(p, |q| {
            out.push(q.key);
            moved.push(q.moved);
        });
    }

    /// Call `f` on every position one move away from `p` (automatic moves applied), except those that
    /// move again the run that [`Lean::moved`] names (docs/reductions.md, "the same run twice"): each
    /// of them is the position the move reaching `p` came from, or one of its children. Each child
    /// says which run it may skip in turn: the run just moved, unless automatic moves followed the
    /// move or it emptied its column.
    #[inline(always)]
    pub fn for_each_child(&self, p: &Lean, mut f: impl FnMut(&Lean)) {
        let skip = p.moved;
        // A child reached by moving the run from `b` (not home): what it may skip.
        let reached = |q: &mut Lean, b: u8, emptied: bool| {
            q.moved = if q.next == p.next && !emptied { b } else { NO };
        };
        let nfree = self.ncells - p.cells.count_ones();
        let nempty = NCOLS as u32 - p.tops.count_ones();
        // The exposed cards one rank higher and of the other colour than `c`.
        let parents = |c: u8| -> u64 {
            let r = rank(c);
            if r >= 12 {
                return 0;
            }
            let m: u64 = if red(c) { 0b1001 } else { 0b0110 };
            p.tops & (m << ((r as u32 + 1) * 4))
        };
        // To the foundations by hand.
        let mut e = (p.tops | p.cells) & p.next;
        while e != 0 {
            let c = e.trailing_zeros() as u8;
            e &= e - 1;
            if c == skip {
                continue;
            }
            let mut q = *p;
            q.lift(c, c);
            q.put_home(c);
            q.settle(self.max_auto);
            q.moved = NO;
            f(&q);
        }
        // From the free cells.
        let mut e = p.cells;
        while e != 0 {
            let c = e.trailing_zeros() as u8;
            e &= e - 1;
            if c == skip {
                continue;
            }
            let mut ps = parents(c);
            while ps != 0 {
                let d = ps.trailing_zeros() as u8;
                ps &= ps - 1;
                let mut q = *p;
                q.lift(c, c);
                q.onto(c, c, d);
                q.settle(self.max_auto);
                reached(&mut q, c, false);
                f(&q);
            }
            if nempty > 0 {
                let mut q = *p;
                q.lift(c, c);
                q.put_empty(c, c);
                q.settle(self.max_auto);
                reached(&mut q, c, false);
                f(&q);
            }
        }
        // From the columns.
        let lim_card = (nfree + 1) << nempty;
        let lim_empty = if nempty > 0 {
            (nfree + 1) << (nempty - 1)
        } else {
            0
        };
        let mut e = p.tops;
        while e != 0 {
            let t = e.trailing_zeros() as u8;
            e &= e - 1;
            let mut len = 0u32;
            let mut x = t;
            loop {
                // `x` is the bottom card of a run of `len + 1` cards ending at `t`.
                let u = p.below[x as usize];
                if len < lim_card && x != skip {
                    let mut ps = parents(x);
                    while ps != 0 {
                        let d = ps.trailing_zeros() as u8;
                        ps &= ps - 1;
                        let mut q = *p;
                        q.lift(x, t);
                        q.onto(x, t, d);
                        q.settle(self.max_auto);
                        reached(&mut q, x, u == NO);
                        f(&q);
                    }
                }
                len += 1;
                if u == NO || !fits_on(x, u) {
                    break;
                }
                x = u;
            }
            if nempty > 0 {
                let whole = p.below[x as usize] == NO;
                let maxn = len.min(lim_empty);
                // The bottom card of the run of `n` cards ending at `t`.
                let mut b = t;
                for n in 1..=maxn {
                    let u = p.below[b as usize];
                    if !(whole && n == len) && b != skip {
                        let mut q = *p;
                        q.lift(b, t);
                        q.put_empty(b, t);
                        q.settle(self.max_auto);
                        reached(&mut q, b, u == NO);
                        f(&q);
                    }
                    b = u;
                }
            }
            if nfree > 0 && t != skip {
                let u = p.below[t as usize];
                let mut q = *p;
                q.lift(t, t);
                q.put_cell(t);
                q.settle(self.max_auto);
                reached(&mut q, t, u == NO);
                f(&q);
            }
        }
    }
}

impl crate::line::Successors for Rules {
    #[inline]
    fn children_of(&self, key: &Key, out: &mut Vec<Key>) {
        self.children(&self.decode(key), out);
    }

    #[inline]
    fn is_sorted(&self, key: &Key) -> bool {
        Rules::is_sorted(self, key)
    }
}

impl Lean {
    /// The features of a cheap estimate of how far the position is from won: cards not home, cards
    /// above a lower card of their column, occupied free cells, non-empty columns, cards above the next
    /// card of each foundation.
    #[inline]
    pub fn features(&self) -> [u32; NFEAT] {
        let mut blockers = 0u32;
        let mut depth = 0u32;
        let next = self.next;
        let mut ranks = [0u8; 64];
        let mut e = self.tops;
        while e != 0 {
            let t = e.trailing_zeros() as u8;
            e &= e - 1;
            // Down the column from its exposed card (counting the cards above each foundation's
            // next card), then up from its bottom card: a card above a lower one is a blocker.
            let mut n = 0usize;
            let mut x = t;
            while x != NO {
                depth += n as u32 & 0u32.wrapping_sub((next >> x) as u32 & 1);
                ranks[n & 63] = rank(x);
                n += 1;
                x = self.below[x as usize];
            }
            let mut min = 99u8;
            for &r in ranks[..n.min(64)].iter().rev() {
                blockers += (r > min) as u32;
                min = min.min(r);
            }
        }
        let home: u32 = self.found.iter().map(|&f| f as u32).sum();
        [
            52 - home,
            blockers,
            self.cells.count_ones(),
            self.tops.count_ones(),
            depth,
        ]
    }

    /// The weighted estimate (lower is more promising).
    #[inline]
    pub fn score(&self, w: &[u32; NFEAT]) -> u32 {
        self.features().iter().zip(w).map(|(f, w)| f * w).sum()
    }

    /// The canonical key.
    #[inline(always)]
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The run this position's children may leave unmoved ([`Rules::for_each_child`]): a card, or
    /// none (past the deck).
    #[inline(always)]
    pub(crate) fn moved(&self) -> u8 {
        self.moved
    }

    /// The position whose children may leave unmoved the run from card `moved` (or none: [`NO`]).
    #[inline(always)]
    pub(crate) fn with_moved(mut self, moved: u8) -> Lean {
        self.moved = moved;
        self
    }

    /// Take the run from `b` (its lowest card) up to `t` (exposed) off its column, or `b == t` off its
    /// free cell.
    #[inline(always)]
    fn lift(&mut self, b: u8, t: u8) {
        let bit = 1u64 << b;
        if self.cells & bit != 0 {
            self.cells &= !bit;
        } else {
            let u = self.below[b as usize];
            self.tops = (self.tops & !(1u64 << t)) | ((1u64 << u) & DECK_MASK);
        }
    }

    #[inline(always)]
    fn onto(&mut self, b: u8, t: u8, d: u8) {
        self.below[b as usize] = d;
        self.tops = (self.tops & !(1u64 << d)) | (1u64 << t);
        // The lower-indexed parent suit (clubs or diamonds) is the "low" parent.
        set_loc(&mut self.key, b, LOC_PARENT_LO + (suit(d) as u64 >> 1));
    }

    #[inline(always)]
    fn put_empty(&mut self, b: u8, t: u8) {
        self.below[b as usize] = NO;
        self.tops |= 1u64 << t;
        set_loc(&mut self.key, b, LOC_BOTTOM);
    }

    #[inline(always)]
    fn put_cell(&mut self, c: u8) {
        self.below[c as usize] = NO;
        self.cells |= 1u64 << c;
        set_loc(&mut self.key, c, LOC_CELL);
    }

    #[inline(always)]
    fn put_home(&mut self, c: u8) {
        self.below[c as usize] = NO;
        self.found[suit(c) as usize] += 1;
        // The card above it in its suit comes next (past the king: a bit past the deck).
        self.next = (self.next & !(1u64 << c)) | (1u64 << (c + 4));
        set_loc(&mut self.key, c, LOC_HOME);
    }

    /// Whether card `c`, which fits its foundation, goes home automatically ([`auto_home`]).
    #[inline(always)]
    fn auto_home(&self, c: Card, max_auto: bool) -> bool {
        auto_home(&self.found, c, max_auto)
    }

    /// Apply the automatic moves until none applies (SPEC §2; every card that fits under `max_auto`).
    #[inline(always)]
    fn settle(&mut self, max_auto: bool) {
        // Most positions have no foundation's next card exposed: a single test of a mask of the four
        // decides it.
        if (self.tops | self.cells) & self.next == 0 {
            return;
        }
        loop {
            let mut changed = false;
            for s in 0..4u8 {
                loop {
                    let r = self.found[s as usize];
                    if r >= 13 {
                        break;
                    }
                    let c = make(r, s);
                    if (self.tops | self.cells) & (1u64 << c) == 0 || !self.auto_home(c, max_auto) {
                        break;
                    }
                    self.lift(c, c);
                    self.put_home(c);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// Whether card `c`, which fits its foundation, goes home automatically with `found` cards of each
/// suit home: always under `max_auto`, else when no card still in play could need it (SPEC §2).
#[inline(always)]
fn auto_home(found: &[u8; 4], c: Card, max_auto: bool) -> bool {
    let r = rank(c);
    if r <= 1 || max_auto {
        return true;
    }
    let s = suit(c);
    let (o1, o2) = crate::card::opposite_suits(s);
    let lo = found[o1 as usize].min(found[o2 as usize]);
    lo >= r || (lo + 1 >= r && found[(3 - s) as usize] + 2 >= r)
}

impl Rules {
    /// The cards that go home automatically as soon as they are exposed, with `found` cards of each
    /// suit home: each foundation's next card when the rule of automatic moves sends it (a card mask).
    pub(crate) fn auto_cards(&self, found: &[u8; 4]) -> u64 {
        (0..4u8)
            .filter(|&s| found[s as usize] < 13)
            .map(|s| make(found[s as usize], s))
            .filter(|&c| auto_home(found, c, self.max_auto))
            .fold(0, |m, c| m | 1 << c)
    }

    /// The card `c` was dealt on ([`NO`] for the first card of a column).
    pub(crate) fn dealt_on(&self, c: Card) -> u8 {
        self.under[c as usize][LOC_DEALT as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::loc_of;
    use crate::limits::Limits;
    use crate::prover::Prover;
    use std::collections::HashSet;

    /// [`Lean::features`] as defined: each column read from the bottom for the blockers (cards above
    /// a lower card), and the number of cards above each foundation's next card.
    fn features_by_definition(p: &Lean) -> [u32; NFEAT] {
        let (mut blockers, mut depth) = (0, 0);
        let mut e = p.tops;
        while e != 0 {
            let t = e.trailing_zeros() as u8;
            e &= e - 1;
            let mut col = vec![];
            let mut x = t;
            while x != NO {
                if p.found[suit(x) as usize] == rank(x) {
                    depth += col.len() as u32;
                }
                col.push(x);
                x = p.below[x as usize];
            }
            let mut min = 99;
            for &c in col.iter().rev() {
                if rank(c) > min {
                    blockers += 1;
                }
                min = min.min(rank(c));
            }
        }
        let home: u32 = p.found.iter().map(|&f| f as u32).sum();
        [
            52 - home,
            blockers,
            p.cells.count_ones(),
            p.tops.count_ones(),
            depth,
        ]
    }

    /// `decode` agrees with decoding one card at a time, on every position of a few searches.
    #[test]
    fn decode_matches_card_by_card() {
        for (deal, cells) in [(1, 2), (2257, 1), (11982, 4), (5, 1)] {
            let layout = Layout::deal(deal).unwrap();
            let rules = Rules::new(&layout, cells);
            let mut prover = Prover::new();
            let limits = Limits {
                max_positions: 30_000,
                max_millis: None,
            };
            prover.prove(&layout, cells, limits).unwrap();
            let keys = prover.set.keys();
            assert!(keys.len() > 1000);
            for key in keys {
                let p = rules.decode(&key);
                let (mut tops, mut cells, mut found, mut covered) = (0u64, 0u64, [0u8; 4], 0u64);
                for c in 0..52 {
                    let loc = loc_of(&key, c as Card);
                    let u = rules.under[c][loc as usize];
                    assert_eq!(p.below[c], u);
                    covered |= 1 << u;
                    found[c & 3] += (loc == LOC_HOME) as u8;
                    cells |= ((loc == LOC_CELL) as u64) << c;
                    tops |= ((loc >= LOC_BOTTOM) as u64) << c;
                }
                assert_eq!(p.below[52..], [NO; 12]);
                assert_eq!((p.tops, p.cells, p.found), (tops & !covered, cells, found));
                assert_eq!(p.next, next_cards(&found));
                assert_eq!(p.key, key);
                assert_eq!(p.features(), features_by_definition(&p));
                // The children as generated have the features of their decoded keys (the prover
                // orders children from the former).
                rules.for_each_child(&p, |q| {
                    assert_eq!(q.next, rules.decode(&q.key).next);
                    assert_eq!(q.features(), rules.decode(&q.key).features());
                });
            }
        }
    }

    /// Every position reachable from `layout` (breadth first) and the children generated on the way,
    /// each position's children skipping the run its move reached it by when `skip`.
    fn closure(layout: &Layout, cells: usize, skip: bool) -> (HashSet<Key>, u64) {
        let rules = Rules::new(layout, cells);
        let (p0, _) = crate::position::Position::from_layout(layout, cells).unwrap();
        let mut p0 = p0;
        p0.settle(None);
        let root = *p0.key();
        let mut seen = HashSet::from([root]);
        let mut queue = std::collections::VecDeque::from([(root, NO)]);
        let mut children = 0;
        while let Some((key, moved)) = queue.pop_front() {
            let p = rules.decode(&key).with_moved(if skip { moved } else { NO });
            rules.for_each_child(&p, |q| {
                children += 1;
                if seen.insert(q.key) {
                    queue.push_back((q.key, q.moved()));
                }
            });
            assert!(seen.len() < 2_000_000, "a closure too large for a test");
        }
        (seen, children)
    }

    /// Skipping the run just moved (docs/reductions.md) leaves the reachable set exactly as it is (eight
    /// whole reachable sets, of proofs under both rules of automatic moves: a won deal's set is too large
    /// for a test), and spares children.
    #[test]
    fn skipping_the_run_just_moved_keeps_every_position() {
        let cases = [
            (11982u64, 4usize, Autoplay::Safe),
            (11982, 4, Autoplay::Max),
            (617, 3, Autoplay::Safe),
            (125, 1, Autoplay::Safe),
            (617, 3, Autoplay::Max),
            (125, 1, Autoplay::Max),
            (1, 2, Autoplay::Safe),
            (391, 2, Autoplay::Safe),
        ];
        for (deal, cells, autoplay) in cases {
            let layout = Layout::deal(deal).unwrap().with_autoplay(autoplay);
            let (all, every) = closure(&layout, cells, false);
            let (kept, fewer) = closure(&layout, cells, true);
            assert!(all.len() > 100, "deal {deal} k={cells}: {}", all.len());
            assert!(
                all == kept,
                "deal {deal} k={cells} {autoplay:?}: {} against {}",
                kept.len(),
                all.len()
            );
            assert!(
                fewer < every,
                "deal {deal} k={cells} {autoplay:?}: {fewer} children, {every} without"
            );
        }
    }
}
