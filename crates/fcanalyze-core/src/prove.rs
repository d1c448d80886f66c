//! The lean exhaustive search: every position reachable from the start, depth first, in as little memory
//! and time per position as possible. It decides a position either way: it stops at the first won (or
//! provably won, [`Position::is_sorted`]) position and returns the line that leads there, or it proves
//! that none is reachable, with the exact size of the reachable set as its count (SPEC §3).
//!
//! What makes it lean:
//! - the visited set holds the 20-byte canonical keys and nothing else (no parent links): 64-byte buckets
//!   of three keys in 256 independently growing shards, about 26–30 bytes per position ([`KeySet`]);
//! - the line to a won position comes from an explicit depth-first path: the stack of positions being
//!   expanded, each a child of the one below it;
//! - a position is expanded from its key into a compact form ([`Lean`]: links, two card masks, the
//!   foundations and the key, about 110 bytes) whose children are computed without the heuristics'
//!   statistics; the children's slots in the set are prefetched before they are looked up.
//!
//! The rules are those of [`Position`]: the same moves, the same automatic moves, the same keys (the
//! tests check that both give the same children everywhere). The line found is replayed with
//! [`Position`] from the concrete start and checked by [`crate::replay`].

use std::time::Instant;

use crate::card::{fits_on, make, rank, suit, Card, NONE};
use crate::error::Result;
use crate::key::{
    gather_fields, hash, set_loc, LOC_BOTTOM, LOC_CELL, LOC_DEALT, LOC_HOME, LOC_PARENT_LO,
};
#[cfg(target_os = "linux")]
use crate::mem::{ZeroIsDefault, Zeroed, HUGE_PAGE};
use crate::outcome::{Budget, Outcome, SearchResult};
// compat: removed at integration
pub use crate::key::{cards_dealt, cards_home, pack, signature, unpack};
// compat: removed at integration
use crate::key::Key;
pub(crate) use crate::key::FIELD_LOW;
use crate::limits::Limits;
// compat: removed at integration
pub use crate::line::{checked_line, line_of};
use crate::position::{Layout, Position, NCOLS};

/// "No card" in [`Lean`]'s links: bit 63 of a card mask, never a card.
const NO: u8 = 63;
/// Cards 0..52 as a mask.
const DECK_MASK: u64 = (1 << 52) - 1;

#[inline(always)]
fn red(c: u8) -> bool {
    matches!(c & 3, 1 | 2)
}

/// A position in the compact form the prover expands: the card under each column card, the exposed
/// column cards and the free-cell cards as masks, the foundations and the canonical key (kept up to date).
#[derive(Clone, Copy)]
pub struct Lean {
    below: [u8; 64],
    tops: u64,
    cells: u64,
    found: [u8; 4],
    key: Key,
}

/// What the keys of one search refer to: the card each card was dealt on, and what the prover derives
/// from it.
#[derive(Clone)]
pub struct Rules {
    /// The card under card `c` for each place code of `c` ([`NO`] when it lies on none).
    under: [[u8; 8]; 52],
    /// Per key word: the low bit of the field of each card dealt on a lower card (a column where such a
    /// card lies on its dealt card is not in order).
    unsorted: [u64; 3],
    ncells: u32,
}

/// Number of features of [`Lean::features`].
pub const NFEAT: usize = 5;

/// The clubs as a card mask (cards `4r`); shifted left by `s`, the cards of suit `s`.
const SUIT_CARDS: u64 = 0x1_1111_1111_1111;

impl Rules {
    /// The rules for positions of `layout` (the dealt cards) with `ncells` free cells.
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
                    unsorted[c as usize / 21] |= 1 << (3 * (c as usize % 21));
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
            found: [0; 4],
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

    /// Call `f` on every position one move away from `p` (automatic moves applied).
    #[inline(always)]
    pub fn for_each_child(&self, p: &Lean, mut f: impl FnMut(&Lean)) {
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
        let mut e = p.tops | p.cells;
        while e != 0 {
            let c = e.trailing_zeros() as u8;
            e &= e - 1;
            if p.found[suit(c) as usize] == rank(c) {
                let mut q = *p;
                q.lift(c, c);
                q.put_home(c);
                q.settle();
                f(&q);
            }
        }
        // From the free cells.
        let mut e = p.cells;
        while e != 0 {
            let c = e.trailing_zeros() as u8;
            e &= e - 1;
            let mut ps = parents(c);
            while ps != 0 {
                let d = ps.trailing_zeros() as u8;
                ps &= ps - 1;
                let mut q = *p;
                q.lift(c, c);
                q.onto(c, c, d);
                q.settle();
                f(&q);
            }
            if nempty > 0 {
                let mut q = *p;
                q.lift(c, c);
                q.put_empty(c, c);
                q.settle();
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
                if len < lim_card {
                    let mut ps = parents(x);
                    while ps != 0 {
                        let d = ps.trailing_zeros() as u8;
                        ps &= ps - 1;
                        let mut q = *p;
                        q.lift(x, t);
                        q.onto(x, t, d);
                        q.settle();
                        f(&q);
                    }
                }
                len += 1;
                let u = p.below[x as usize];
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
                    if !(whole && n == len) {
                        let mut q = *p;
                        q.lift(b, t);
                        q.put_empty(b, t);
                        q.settle();
                        f(&q);
                    }
                    b = p.below[b as usize];
                }
            }
            if nfree > 0 {
                let mut q = *p;
                q.lift(t, t);
                q.put_cell(t);
                q.settle();
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
        let next = self.next_home();
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
        set_loc(&mut self.key, c, LOC_HOME);
    }

    #[inline(always)]
    fn safe_auto(&self, c: Card) -> bool {
        let r = rank(c);
        if r <= 1 {
            return true;
        }
        let s = suit(c);
        let (o1, o2) = crate::card::opposite_suits(s);
        let lo = self.found[o1 as usize].min(self.found[o2 as usize]);
        lo >= r || (lo + 1 >= r && self.found[(3 - s) as usize] + 2 >= r)
    }

    /// The next card of each foundation as a mask (a full foundation gives a bit past the deck).
    #[inline(always)]
    fn next_home(&self) -> u64 {
        (0..4).fold(0u64, |m, s| m | 1 << (4 * self.found[s] as u32 + s as u32))
    }

    /// Apply the safe automatic moves until none applies (SPEC §2).
    #[inline(always)]
    fn settle(&mut self) {
        // Most positions have no foundation's next card exposed: a single test of a mask of the four
        // decides it.
        if (self.tops | self.cells) & self.next_home() == 0 {
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
                    if (self.tops | self.cells) & (1u64 << c) == 0 || !self.safe_auto(c) {
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

/// One bucket of the set: three packed keys and the number in use, one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    keys: [[u32; 5]; 3],
    used: u32,
}

const SHARD_BITS: u32 = 6;
const NSHARDS: usize = 1 << SHARD_BITS;
/// A shard grows when more than this share of its slots is used…
const MAX_LOAD: f64 = 0.88;
/// …by this factor. Shards start at sizes spread over one growth step, so that they grow at different
/// times and the set's mean load stays near the middle of the range.
const GROWTH: f64 = 1.3;
/// Buckets of the smallest shard.
const MIN_BUCKETS: usize = 16;

/// A zeroed array of buckets, mapped with huge pages from one huge page on.
type Buckets = Zeroed<Bucket>;

// SAFETY: a bucket of zero bytes holds no key and is `Bucket::default()`.
unsafe impl ZeroIsDefault for Bucket {}

struct Shard {
    buckets: Buckets,
    len: usize,
    limit: usize,
}

impl Shard {
    fn with_buckets(nb: usize) -> Shard {
        Shard {
            buckets: Buckets::new(nb, HUGE_PAGE),
            len: 0,
            limit: ((nb * 3) as f64 * MAX_LOAD) as usize,
        }
    }

    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        ((h as u32 as u64 * self.buckets.len() as u64) >> 32) as usize
    }

    /// Insert a key (hash `h`); true when it was not there.
    #[inline(always)]
    fn insert(&mut self, k: &[u32; 5], h: u64) -> bool {
        let nb = self.buckets.len();
        let mut i = self.home(h);
        loop {
            let b = &mut self.buckets[i];
            let used = b.used as usize;
            for s in 0..used {
                if b.keys[s] == *k {
                    return false;
                }
            }
            if used < 3 {
                b.keys[used] = *k;
                b.used += 1;
                self.len += 1;
                return true;
            }
            i += 1;
            if i == nb {
                i = 0;
            }
        }
    }

    /// Insert a key (hash `h`) known not to be in the shard: the first bucket with room takes it, no
    /// key compared.
    #[inline(always)]
    fn insert_new(&mut self, k: &[u32; 5], h: u64) {
        let nb = self.buckets.len();
        let mut i = self.home(h);
        while self.buckets[i].used >= 3 {
            i += 1;
            if i == nb {
                i = 0;
            }
        }
        let b = &mut self.buckets[i];
        b.keys[b.used as usize] = *k;
        b.used += 1;
        self.len += 1;
    }

    fn grow(&mut self) {
        let mut nb = ((self.buckets.len() as f64 * GROWTH) as usize).max(self.buckets.len() + 1);
        // Large tables fill whole huge pages.
        let per_page = HUGE_PAGE / std::mem::size_of::<Bucket>();
        if nb >= per_page {
            nb = nb.div_ceil(per_page) * per_page;
        }
        let old = std::mem::replace(self, Shard::with_buckets(nb));
        for b in old.buckets.iter() {
            // The keys of a set are distinct.
            for k in &b.keys[..b.used as usize] {
                self.insert_new(k, hash(&unpack(k)));
            }
        }
    }
}

/// A set of canonical keys without parent links: shards chosen by the top bits of the hash, each an
/// open-addressing table of [`Bucket`]s probed linearly, grown one shard at a time (no moment with two
/// copies of the whole table).
pub struct KeySet {
    shards: Vec<Shard>,
    len: usize,
}

impl Default for KeySet {
    fn default() -> Self {
        Self::new()
    }
}

/// Above this many bytes, clearing the set gives its memory back instead of zeroing it.
const KEEP_BYTES: usize = 64 << 20;

impl KeySet {
    pub fn new() -> KeySet {
        let mut s = KeySet {
            shards: Vec::new(),
            len: 0,
        };
        s.reset();
        s
    }

    fn reset(&mut self) {
        self.shards = (0..NSHARDS)
            .map(|i| {
                let nb = (MIN_BUCKETS as f64 * GROWTH.powf(i as f64 / NSHARDS as f64)).round();
                Shard::with_buckets(nb as usize)
            })
            .collect();
        self.len = 0;
    }

    /// Forget every key; small tables are kept, large ones given back.
    pub fn clear(&mut self) {
        if self.memory() > KEEP_BYTES {
            self.reset();
        } else {
            for s in self.shards.iter_mut().filter(|s| s.len > 0) {
                s.buckets.fill(Bucket::default());
                s.len = 0;
            }
            self.len = 0;
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by the tables.
    pub fn memory(&self) -> usize {
        self.shards.iter().map(|s| s.buckets.bytes()).sum::<usize>()
            + self.shards.capacity() * std::mem::size_of::<Shard>()
    }

    #[inline(always)]
    fn shard_of(h: u64) -> usize {
        (h >> (64 - SHARD_BITS)) as usize
    }

    /// Ask the processor for the cache line where `h` is looked up first.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let s = &self.shards[Self::shard_of(h)];
            let p = s.buckets.as_ptr().wrapping_add(s.home(h)) as *const i8;
            // SAFETY: a prefetch is a hint with no architectural effect; the address is in bounds anyway.
            unsafe { std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Insert `key` whose hash is `h` ([`crate::store::hash`]); true when it is new.
    #[inline(always)]
    pub fn insert_hashed(&mut self, key: &Key, h: u64) -> bool {
        let s = &mut self.shards[Self::shard_of(h)];
        if s.len >= s.limit {
            s.grow();
        }
        let new = s.insert(&pack(key), h);
        self.len += new as usize;
        new
    }

    /// Insert `key`; true when it is new.
    #[inline]
    pub fn insert(&mut self, key: &Key) -> bool {
        self.insert_hashed(key, hash(key))
    }

    /// Every key of the set, in table order.
    pub fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.len);
        for s in &self.shards {
            for b in s.buckets.iter() {
                out.extend(b.keys[..b.used as usize].iter().map(unpack));
            }
        }
        out
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: &Key) -> bool {
        let h = hash(key);
        let s = &self.shards[Self::shard_of(h)];
        let k = pack(key);
        let mut i = s.home(h);
        loop {
            let b = &s.buckets[i];
            if b.keys[..b.used as usize].contains(&k) {
                return true;
            }
            if b.used < 3 {
                return false;
            }
            i = (i + 1) % s.buckets.len();
        }
    }
}

/// The positions a thread has still to expand: a stack (depth first), from whose bottom other threads
/// may take work.
#[derive(Default)]
struct Todo {
    v: Vec<u32>,
    /// Entries before this one were taken by other threads.
    start: usize,
}

impl Todo {
    fn len(&self) -> usize {
        self.v.len() - self.start
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn clear(&mut self) {
        self.v.clear();
        self.start = 0;
    }

    fn push(&mut self, i: u32) {
        self.v.push(i);
    }

    fn pop(&mut self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let i = self.v.pop();
        if self.is_empty() {
            self.clear();
        }
        i
    }

    /// The oldest entry.
    fn steal(&mut self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let i = self.v[self.start];
        self.start += 1;
        if self.is_empty() {
            self.clear();
        } else if self.start >= 4096 && self.start * 2 >= self.v.len() {
            self.v.drain(..self.start);
            self.start = 0;
        }
        Some(i)
    }
}

/// A position waiting on the search's stack: its key, the stack index of the position it was first
/// reached from, and whether it was expanded.
#[derive(Clone, Copy)]
struct Node {
    key: Key,
    parent: u32,
    state: u32,
}

const WAITING: u32 = 0;
const IN_FLIGHT: u32 = 1;
const DONE: u32 = 2;

/// An expanded position whose children are still to be looked up (their slots are being fetched).
#[derive(Default)]
struct Batch {
    node: u32,
    thread: u32,
    kids: Vec<(Key, u64)>,
    /// The children whole, in the order of `kids`, when the thread orders its new children: it scores
    /// them without decoding their keys again (empty otherwise, as copying them costs time too).
    leans: Vec<Lean>,
}

/// One depth-first search of the prover's portfolio: how it orders the children it finds new, and how
/// many expansions it makes in each turn. All share the set of stored positions and the stack of
/// nodes; each expands the positions it stored, so that together they expand every reachable position
/// once, whatever their orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Weights of [`Lean::features`] (the lowest score is expanded first); `None`: the order of the
    /// move generator.
    pub weights: Option<[u32; NFEAT]>,
    /// Expansions per turn.
    pub quantum: u32,
}

impl Thread {
    /// The default portfolio: searches with different child orders take turns; on hard solvable
    /// positions one of them often finds a line far sooner than the others.
    pub const PORTFOLIO: [Thread; 3] = [
        Thread {
            weights: Some([3, 1, 3, 3, 1]),
            quantum: 64,
        },
        Thread {
            weights: Some([6, 1, 4, 4, 2]),
            quantum: 64,
        },
        Thread {
            weights: None,
            quantum: 64,
        },
    ];
}

/// Expansions whose lookups overlap: the children of a position are looked up this many expansions
/// after they were computed and their slots prefetched, so that memory latency is hidden.
const PIPELINE: usize = 6;

/// Entries of the cache of recently seen children (a direct-mapped cache of keys known to be stored:
/// a hit spares a lookup in the large table, and most children were seen a moment ago).
const RECENT: usize = 1 << 15;
/// The recent-children cache is used once the set holds this many positions.
const RECENT_FROM: usize = 1 << 15;

/// The lean exhaustive search, reusable from one search to the next (it keeps its tables).
pub struct Prover {
    set: KeySet,
    /// Positions still to expand, and the expanded ones whose descendants are still being searched
    /// (a stack: a position's descendants lie above it).
    nodes: Vec<Node>,
    /// Per thread: stack indices of the positions still to expand (last in, first out: depth first).
    todo: Vec<Todo>,
    flight: std::collections::VecDeque<Batch>,
    spare: Vec<Batch>,
    /// The new children of the batch being looked up when they are to be ordered: their index in the
    /// batch (then their sort key), and their stack index (reused from batch to batch).
    fresh: Vec<(u32, u32)>,
    /// The children of the position being expanded, and the same whole when they are kept (reused).
    kids: Vec<Key>,
    leans: Vec<Lean>,
    recent: Vec<Key>,
    recent_on: bool,
    /// Most bytes the search may hold (set and stack); `None` for no limit. Running out ends the search
    /// as undecided with [`Budget::Positions`] (the memory budget is a budget on positions).
    pub max_memory: Option<usize>,
    /// Statistics of the last search.
    pub stats: ProveStats,
    /// The depth-first searches that take turns (at least one). A proof costs the same number of
    /// positions whatever they are; won positions are found sooner with good orders.
    pub threads: Vec<Thread>,
    /// Past this many stored positions only the first thread goes on, in the move generator's order (a
    /// search this large is most likely a proof: one depth-first search keeps the smallest stack, and
    /// ordering children costs time).
    pub portfolio_positions: u64,
    /// Threads of the layered proof that takes over when the memory runs out
    /// ([`crate::layered::prove_bounded`]; the count is the same whatever they are).
    pub layered_threads: usize,
}

/// What the last search of a [`Prover`] did.
#[derive(Clone, Copy, Debug)]
pub struct ProveStats {
    /// Positions expanded.
    pub expanded: u64,
    /// Children computed.
    pub children: u64,
    /// Children found in the recent-children cache.
    pub recent_hits: u64,
    /// Most positions on the stack.
    pub max_stack: usize,
    /// Bytes of the visited set at the end.
    pub set_bytes: usize,
    /// Bytes held at the end (set and stack).
    pub bytes: usize,
    /// Positions stored by number of cards home.
    pub by_home: [u64; 53],
}

impl Default for ProveStats {
    fn default() -> Self {
        ProveStats {
            expanded: 0,
            children: 0,
            recent_hits: 0,
            max_stack: 0,
            set_bytes: 0,
            bytes: 0,
            by_home: [0; 53],
        }
    }
}

impl Default for Prover {
    fn default() -> Self {
        Self::new()
    }
}

impl Prover {
    pub fn new() -> Prover {
        Prover {
            set: KeySet::new(),
            nodes: Vec::new(),
            todo: Vec::new(),
            flight: std::collections::VecDeque::with_capacity(PIPELINE),
            spare: Vec::new(),
            fresh: Vec::new(),
            kids: Vec::with_capacity(128),
            leans: Vec::with_capacity(128),
            recent: Vec::new(),
            recent_on: false,
            max_memory: None,
            stats: ProveStats::default(),
            threads: Thread::PORTFOLIO.to_vec(),
            portfolio_positions: 20_000_000,
            layered_threads: 1,
        }
    }

    fn held(&self) -> usize {
        self.set.memory()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.todo.iter().map(|t| t.v.capacity() * 4).sum::<usize>()
            + self.recent.capacity() * std::mem::size_of::<Key>()
    }

    /// Search every position reachable from `layout` with `ncells` free cells, or until a won position
    /// or a budget. The count of a proof is the exact size of the reachable set.
    pub fn prove(
        &mut self,
        layout: &Layout,
        ncells: usize,
        limits: Limits,
    ) -> Result<SearchResult> {
        let start = Instant::now();
        let (mut p0, _) = Position::from_layout(layout, ncells)?;
        p0.settle(None);
        let rules = Rules::new(layout, ncells);
        self.set.clear();
        self.nodes.clear();
        self.todo
            .resize_with(self.threads.len().max(1), Todo::default);
        for t in &mut self.todo {
            t.clear();
        }
        while let Some(b) = self.flight.pop_front() {
            self.spare.push(b);
        }
        self.recent_on = false;
        self.stats = ProveStats::default();
        let root = *p0.key();
        self.set.insert(&root);
        let (goal, exhausted) = if rules.is_sorted(&root) {
            (Some(vec![root]), None)
        } else if limits.max_positions <= 1 {
            (None, Some(Budget::Positions))
        } else {
            self.run(&rules, root, limits, start)
        };
        self.stats.bytes = self.held();
        self.stats.set_bytes = self.set.memory();
        let positions = self.set.len() as u64;
        if self.stats.bytes > KEEP_BYTES {
            // Give big tables back now rather than at the next search.
            self.set.clear();
            self.nodes = Vec::new();
            self.todo = Vec::new();
        }
        let (outcome, solution) = match (goal, exhausted) {
            (Some(chain), _) => (
                Outcome::Solved,
                checked_line(layout, ncells, &rules, chain, "a prover's line")?,
            ),
            (None, None) => (Outcome::Unsolvable, vec![]),
            (None, Some(_)) => (Outcome::Undecided, vec![]),
        };
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    }

    fn quantum(&self, t: usize) -> u32 {
        self.threads.get(t).map_or(u32::MAX, |t| t.quantum.max(1))
    }

    /// The line of keys from the root to stack node `i`, then `last`.
    fn chain(&self, mut i: u32, last: Key) -> Vec<Key> {
        let mut chain = vec![last];
        while i != u32::MAX {
            let n = &self.nodes[i as usize];
            chain.push(n.key);
            i = n.parent;
        }
        chain.reverse();
        chain
    }

    /// The search from `root` (stored, not sorted): depth first, the lookups of each expansion overlapped
    /// with the next expansions. Returns the line to a sorted position, or the budget that ran out, or
    /// neither (a proof).
    fn run(
        &mut self,
        rules: &Rules,
        root: Key,
        limits: Limits,
        start: Instant,
    ) -> (Option<Vec<Key>>, Option<Budget>) {
        self.nodes.push(Node {
            key: root,
            parent: u32::MAX,
            state: WAITING,
        });
        self.todo[0].push(0);
        let mut nthreads = self.todo.len();
        // Whether the threads still order their children (not once the search is past the portfolio).
        let mut portfolio = true;
        let (mut cur, mut left) = (0usize, self.quantum(0));
        let mut resolved = 0u64;
        loop {
            // Expand positions until the pipeline is full, the threads taking turns.
            while self.flight.len() < PIPELINE {
                if left == 0 {
                    cur = (cur + 1) % nthreads;
                    left = self.quantum(cur);
                }
                if self.todo[cur].is_empty() {
                    // Take over the oldest waiting position of the busiest other thread (near the
                    // root: a part of the search far from where that thread is).
                    let victim = (0..nthreads)
                        .max_by_key(|&t| self.todo[t].len())
                        .expect("a thread");
                    if self.todo[victim].is_empty() {
                        break;
                    }
                    let i = self.todo[victim].steal().expect("a waiting position");
                    self.todo[cur].push(i);
                }
                let i = self.todo[cur].pop().expect("a waiting position");
                left -= 1;
                let keep = portfolio && self.threads.get(cur).is_some_and(|t| t.weights.is_some());
                if let Some(won) = self.expand(rules, i, cur as u32, keep) {
                    return (Some(self.chain(i, won)), None);
                }
            }
            // Look up the children of the oldest expansion.
            let Some(batch) = self.flight.pop_front() else {
                return (None, None);
            };
            let node = batch.node;
            let thread = if (batch.thread as usize) < nthreads {
                batch.thread as usize
            } else {
                0
            };
            let first_new = self.todo[thread].v.len();
            // Whether this thread orders its new children, by their score.
            let weights = self
                .threads
                .get(thread)
                .and_then(|t| t.weights)
                .filter(|_| portfolio);
            self.fresh.clear();
            for (j, &(k, h)) in batch.kids.iter().enumerate() {
                if self.recent_on {
                    self.recent[(h >> 24) as usize & (RECENT - 1)] = k;
                }
                if !self.set.insert_hashed(&k, h) {
                    continue;
                }
                if rules.is_sorted(&k) {
                    self.spare.push(batch);
                    return (Some(self.chain(node, k)), None);
                }
                if self.set.len() as u64 >= limits.max_positions {
                    self.spare.push(batch);
                    return (None, Some(Budget::Positions));
                }
                self.stats.by_home[(cards_home(&k) + 52 - cards_dealt(&k)) as usize / 2] += 1;
                if weights.is_some() {
                    self.fresh.push((j as u32, self.nodes.len() as u32));
                }
                self.todo[thread].push(self.nodes.len() as u32);
                self.nodes.push(Node {
                    key: k,
                    parent: node,
                    state: WAITING,
                });
            }
            if let (Some(w), true) = (&weights, self.fresh.len() > 1) {
                // The most promising child last, to be expanded first: sorted by the complement of
                // the score (highest score first), stably (equal scores keep the generator's order).
                for f in &mut self.fresh {
                    f.0 = !batch.leans[f.0 as usize].score(w);
                }
                self.fresh.sort_by_key(|&(key, _)| key);
                let todo = &mut self.todo[thread].v[first_new..];
                for (t, &(_, i)) in todo.iter_mut().zip(&self.fresh) {
                    *t = i;
                }
            }
            self.spare.push(batch);
            self.nodes[node as usize].state = DONE;
            while self.nodes.last().is_some_and(|n| n.state == DONE) {
                self.nodes.pop();
            }
            self.stats.max_stack = self.stats.max_stack.max(self.nodes.len());
            if portfolio && self.set.len() as u64 >= self.portfolio_positions {
                // A large search is most likely a proof: the first thread goes on alone with every
                // waiting position (its own on top), so that finished positions leave the stack again.
                let mut all = Vec::new();
                for t in (1..nthreads).chain([0]) {
                    let todo = &mut self.todo[t];
                    all.extend_from_slice(&todo.v[todo.start..]);
                    todo.clear();
                }
                self.todo[0].v = all;
                nthreads = 1;
                portfolio = false;
                cur = 0;
                left = self.quantum(0);
            }
            if !self.recent_on && self.set.len() >= RECENT_FROM {
                self.recent_on = true;
                self.recent.clear();
                self.recent.resize(RECENT, [u64::MAX; 3]);
            }
            resolved += 1;
            if resolved & 1023 == 0 {
                if limits.out_of_time(start) {
                    return (None, Some(Budget::Time));
                }
                if let Some(m) = self.max_memory {
                    if self.held() > m {
                        return (None, Some(Budget::Positions));
                    }
                }
            }
        }
    }

    /// Expand stack node `i`: compute its children, drop those seen a moment ago, prefetch the slots of
    /// the others and queue them for lookup (with the children whole when `keep`: [`Batch::leans`]).
    /// Returns a child with every card home, if any.
    #[inline(always)]
    fn expand(&mut self, rules: &Rules, i: u32, thread: u32, keep: bool) -> Option<Key> {
        let node = &mut self.nodes[i as usize];
        node.state = IN_FLIGHT;
        let p = rules.decode(&node.key);
        let mut batch = self.spare.pop().unwrap_or_default();
        batch.node = i;
        batch.thread = thread;
        batch.kids.clear();
        batch.leans.clear();
        self.stats.expanded += 1;
        // The children first, then their lookups prepared: two short loops run faster than one.
        if keep {
            let (kids, leans) = (&mut self.kids, &mut self.leans);
            kids.clear();
            leans.clear();
            rules.for_each_child(&p, |q| {
                kids.push(q.key);
                leans.push(*q);
            });
        } else {
            rules.children(&p, &mut self.kids);
        }
        self.stats.children += self.kids.len() as u64;
        for (j, k) in self.kids.iter().enumerate() {
            if *k == [0; 3] {
                self.spare.push(batch);
                return Some(*k);
            }
            let h = hash(k);
            if self.recent_on && self.recent[(h >> 24) as usize & (RECENT - 1)] == *k {
                self.stats.recent_hits += 1;
                continue;
            }
            self.set.prefetch(h);
            batch.kids.push((*k, h));
            if keep {
                batch.leans.push(self.leans[j]);
            }
        }
        self.flight.push_back(batch);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    let loc = (key[c / 21] >> (3 * (c % 21))) & 7;
                    let u = rules.under[c][loc as usize];
                    assert_eq!(p.below[c], u);
                    covered |= 1 << u;
                    found[c & 3] += (loc == LOC_HOME) as u8;
                    cells |= ((loc == LOC_CELL) as u64) << c;
                    tops |= ((loc >= LOC_BOTTOM) as u64) << c;
                }
                assert_eq!(p.below[52..], [NO; 12]);
                assert_eq!((p.tops, p.cells, p.found), (tops & !covered, cells, found));
                assert_eq!(p.key, key);
                assert_eq!(p.features(), features_by_definition(&p));
                // The children as generated have the features of their decoded keys (the prover
                // orders children from the former).
                rules.for_each_child(&p, |q| {
                    assert_eq!(q.features(), rules.decode(&q.key).features());
                });
            }
        }
    }

    #[test]
    fn keyset_insert_contains_grow_clear() {
        let mut s = KeySet::new();
        let key = |i: u64| [i.wrapping_mul(0x9E37_79B9), i, i & 0x3FFF_FFFF];
        for i in 0..200_000u64 {
            assert!(s.insert(&key(i)));
        }
        assert_eq!(s.len(), 200_000);
        for i in 0..200_000u64 {
            assert!(!s.insert(&key(i)));
            assert!(s.contains(&key(i)));
        }
        assert!(!s.contains(&key(200_001)));
        s.clear();
        assert!(s.is_empty());
        assert!(!s.contains(&key(5)));
        assert!(s.insert(&[0; 3]));
        assert!(s.contains(&[0; 3]));
    }
}
