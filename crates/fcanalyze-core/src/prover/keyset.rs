//! The prover's visited set: 20-byte packed keys without parent links, in 64-byte buckets of three
//! keys, in independently growing shards (about 24–48 bytes per position; about 30 once the set nears
//! its memory budget: [`KeySet::set_budget`]). One thread owns it
//! ([`KeySet::insert_hashed`]), or several share it ([`KeySet::insert_shared`]: each shard behind a
//! spin lock of its own, so that two threads rarely meet).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use crate::key::{hash, pack, unpack, Key};
#[cfg(target_os = "linux")]
use crate::mem::{ZeroIsDefault, Zeroed, HUGE_PAGE};

/// One bucket of the set: three packed keys and the number in use, one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    keys: [[u32; 5]; 3],
    used: u32,
}

/// 64 shards: a large set's shards fill whole huge pages (1024 shards of a set of 8 million positions
/// would not, and took 15% more time on one thread); with two threads, a shard's lock line taken by the
/// other thread costs little measured ([`KeySet::prefetch`] fetches it with the bucket).
const SHARD_BITS: u32 = 6;
const NSHARDS: usize = 1 << SHARD_BITS;
/// A shard grows when more than this share of its slots is used…
const MAX_LOAD: f64 = 0.88;
/// …by this factor. Shards start at sizes spread over one growth step, so that they grow at different
/// times and the set's mean load stays near the middle of the range. A growth moves every key of the
/// shard and maps a zeroed table: over a set's life, keys are moved 1 / (GROWTH - 1) times each and
/// tables of 1 / (1 - 1 / GROWTH) times the final size are zeroed. Doubling (1 move, 2 times) took 0.88
/// of the time of 1.3 (3.3 moves, 4.3 times) on 26063 with 1 cell, on one thread and on two, for a
/// set of 24-48 bytes per position instead of 24-31.
const GROWTH: f64 = 2.0;
/// The growth of a shard once the set holds a quarter of the prover's memory budget
/// ([`KeySet::set_budget`]): a set that doubles its shards holds 40-48 bytes a position, one that grows
/// them by 1.3 about 30, so near its budget the set grows by this, and the prover holds half as many
/// positions again before the memory runs out (and a larger proof decides without the layered proof).
const TIGHT_GROWTH: f64 = 1.3;
/// Buckets of the smallest shard.
const MIN_BUCKETS: usize = 16;
/// Tables from this many bytes on are mapped from the system and given back to it when a shard grows
/// out of them: left to the allocator's heap, the tables a set grew out of stayed in the process.
const MAP_FROM: usize = 64 << 10;

/// A zeroed array of buckets, mapped with huge pages from one huge page on.
type Buckets = Zeroed<Bucket>;

// SAFETY: a bucket of zero bytes holds no key and is `Bucket::default()`.
unsafe impl ZeroIsDefault for Bucket {}

struct Shard {
    buckets: Buckets,
    len: usize,
    limit: usize,
    /// A zeroed table of the next size whose pages are already mapped: threads sharing the set map it
    /// outside the shard's lock ([`KeySet::insert_shared`]), so that a growth under the lock only
    /// moves the keys (mapping and zeroing the pages took as long again).
    spare: Option<Buckets>,
    /// A thread is making the spare table ready.
    preparing: bool,
}

impl Shard {
    fn with_buckets(nb: usize) -> Shard {
        Shard::with_table(Buckets::new(nb, MAP_FROM))
    }

    fn with_table(buckets: Buckets) -> Shard {
        Shard {
            limit: ((buckets.len() * 3) as f64 * MAX_LOAD) as usize,
            buckets,
            len: 0,
            spare: None,
            preparing: false,
        }
    }

    /// Bytes of the tables.
    fn bytes(&self) -> usize {
        self.buckets.bytes() + self.spare.as_ref().map_or(0, |t| t.bytes())
    }

    /// Buckets of the table the shard grows to by `growth`.
    fn next_size(&self, growth: f64) -> usize {
        let mut nb = ((self.buckets.len() as f64 * growth) as usize).max(self.buckets.len() + 1);
        // Large tables fill whole huge pages.
        let per_page = HUGE_PAGE / std::mem::size_of::<Bucket>();
        if nb >= per_page {
            nb = nb.div_ceil(per_page) * per_page;
        }
        nb
    }

    /// The buckets of a spare table worth making ready now, if one is: the shard is most of the way to
    /// its limit, and the table it grows to by `growth` (asked only then) takes at least a huge page.
    fn wants_spare(&self, growth: impl FnOnce() -> f64) -> Option<usize> {
        if self.spare.is_some() || self.preparing || self.len < self.limit - self.limit / 8 {
            return None;
        }
        let nb = self.next_size(growth());
        (nb * std::mem::size_of::<Bucket>() >= HUGE_PAGE).then_some(nb)
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

    /// Move the keys to a table larger by `growth` (the spare one if it is ready); the old table, to be
    /// dropped.
    fn grow(&mut self, growth: f64) -> Buckets {
        let nb = self.next_size(growth);
        let table = match self.spare.take() {
            Some(t) if t.len() == nb => t,
            _ => {
                let mut t = Buckets::new(nb, MAP_FROM);
                t.map_now();
                t
            }
        };
        let old = std::mem::replace(self, Shard::with_table(table));
        for b in old.buckets.iter() {
            // The keys of a set are distinct.
            for k in &b.keys[..b.used as usize] {
                self.insert_new(k, hash(&unpack(k)));
            }
        }
        old.buckets
    }
}

/// A shard with its lock and where its buckets start, in a cache line of its own.
#[repr(C, align(64))]
struct Slot {
    locked: AtomicBool,
    /// The shard's buckets and their number, for [`KeySet::prefetch`] (which takes no lock: a stale
    /// pair while the shard grows only prefetches a useless line, a prefetch never faults).
    first: AtomicPtr<Bucket>,
    nb: AtomicUsize,
    shard: UnsafeCell<Shard>,
}

impl Slot {
    fn new(shard: Shard) -> Slot {
        let slot = Slot {
            locked: AtomicBool::new(false),
            first: AtomicPtr::new(std::ptr::null_mut()),
            nb: AtomicUsize::new(0),
            shard: UnsafeCell::new(shard),
        };
        slot.publish();
        slot
    }

    /// Make the shard's buckets known to [`KeySet::prefetch`] (after it grew).
    fn publish(&self) {
        // SAFETY: called by the shard's owner (exclusive access or the lock held).
        let s = unsafe { &*self.shard.get() };
        self.first
            .store(s.buckets.as_ptr() as *mut Bucket, Ordering::Relaxed);
        self.nb.store(s.buckets.len(), Ordering::Relaxed);
    }

    /// Take the lock: spin a moment (it is held for one insert), then yield (its holder may be growing
    /// the shard, or have lost its core to another process).
    #[inline(always)]
    fn lock(&self) {
        let mut spins = 0u32;
        while self.locked.swap(true, Ordering::Acquire) {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 100 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Take the lock if it is free.
    #[inline(always)]
    fn try_lock(&self) -> bool {
        !self.locked.load(Ordering::Relaxed) && !self.locked.swap(true, Ordering::Acquire)
    }

    #[inline(always)]
    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

/// A set of canonical keys without parent links: shards chosen by the top bits of the hash, each an
/// open-addressing table of [`Bucket`]s probed linearly, grown one shard at a time (no moment with two
/// copies of the whole table).
pub struct KeySet {
    shards: Box<[Slot]>,
    /// Keys inserted through `&mut self` (shared inserts are counted by their threads; [`KeySet::recount`]).
    len: usize,
    /// Bytes of the buckets, kept up to date as shards grow.
    bytes: AtomicUsize,
    /// Bytes of buckets past which shards grow by [`TIGHT_GROWTH`] ([`KeySet::set_budget`]).
    tight_from: usize,
}

// SAFETY: a shard is reached through `&self` only by `insert_shared`, under the shard's lock; every
// other access takes `&mut self`.
unsafe impl Sync for KeySet {}

impl Default for KeySet {
    fn default() -> Self {
        Self::new()
    }
}

/// Above this many bytes, clearing the set gives its memory back instead of zeroing it.
pub(super) const KEEP_BYTES: usize = 64 << 20;

impl KeySet {
    pub fn new() -> KeySet {
        let mut s = KeySet {
            shards: Box::new([]),
            len: 0,
            bytes: AtomicUsize::new(0),
            tight_from: usize::MAX,
        };
        s.reset();
        s
    }

    fn reset(&mut self) {
        self.shards = (0..NSHARDS)
            .map(|i| {
                let nb = (MIN_BUCKETS as f64 * GROWTH.powf(i as f64 / NSHARDS as f64)).round();
                Slot::new(Shard::with_buckets(nb as usize))
            })
            .collect();
        self.len = 0;
        self.bytes = AtomicUsize::new(
            self.shards
                .iter_mut()
                .map(|s| s.shard.get_mut().bytes())
                .sum(),
        );
    }

    /// Forget every key; small tables are kept, large ones given back.
    pub fn clear(&mut self) {
        if self.memory() > KEEP_BYTES {
            self.reset();
        } else {
            for s in self.shards.iter_mut().map(|s| s.shard.get_mut()) {
                if s.len > 0 {
                    s.buckets.fill(Bucket::default());
                    s.len = 0;
                }
            }
            self.len = 0;
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Count the keys again after shared inserts.
    pub fn recount(&mut self) {
        self.len = self.shards.iter_mut().map(|s| s.shard.get_mut().len).sum();
    }

    /// The memory budget of the search that fills the set (`None`: none): past a quarter of it, shards
    /// grow by [`TIGHT_GROWTH`] instead of doubling.
    pub fn set_budget(&mut self, budget: Option<usize>) {
        self.tight_from = budget.map_or(usize::MAX, |b| b / 4);
    }

    /// How much a shard grows now.
    #[inline]
    fn growth(&self) -> f64 {
        if self.bytes.load(Ordering::Relaxed) >= self.tight_from {
            TIGHT_GROWTH
        } else {
            GROWTH
        }
    }

    /// Bytes held by the tables.
    pub fn memory(&self) -> usize {
        self.bytes.load(Ordering::Relaxed) + self.shards.len() * std::mem::size_of::<Slot>()
    }

    #[inline(always)]
    fn shard_of(h: u64) -> usize {
        (h >> (64 - SHARD_BITS)) as usize
    }

    /// Ask the processor for the cache line where `h` is looked up first (and for its shard's lock,
    /// to be written).
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let s = &self.shards[Self::shard_of(h)];
            // The lock's line to be written: PREFETCHW (`_MM_HINT_ET0` compiles to nothing for the
            // baseline x86-64 target; processors without the instruction run it as a no-op).
            // SAFETY: a prefetch is a hint with no architectural effect (it never faults).
            unsafe {
                std::arch::asm!("prefetchw [{0}]", in(reg) s as *const Slot, options(nostack, preserves_flags));
            }
            let nb = s.nb.load(Ordering::Relaxed) as u64;
            let home = ((h as u32 as u64 * nb) >> 32) as usize;
            let p = s.first.load(Ordering::Relaxed).wrapping_add(home) as *const i8;
            // SAFETY: as above.
            unsafe { _mm_prefetch(p, _MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Insert into the shard of `slot` (whose owner the caller is); true when the key is new. A table
    /// the shard grew out of is left in `old`, to be dropped.
    #[inline(always)]
    fn insert_owned(&self, slot: &Slot, key: &Key, h: u64, old: &mut Option<Buckets>) -> bool {
        // SAFETY: the caller owns the shard (exclusive access to the set, or the shard's lock).
        let s = unsafe { &mut *slot.shard.get() };
        if s.len >= s.limit {
            let before = s.bytes();
            *old = Some(s.grow(self.growth()));
            slot.publish();
            // The tables' bytes change by the new less the old and the spare (a wrapping add).
            self.bytes
                .fetch_add(s.bytes().wrapping_sub(before), Ordering::Relaxed);
        }
        s.insert(&pack(key), h)
    }

    /// Make a spare table of `nb` buckets ready for the shard of `slot` (see [`Shard::spare`]): mapped
    /// and zeroed without the lock, handed over with it.
    #[cold]
    fn make_spare(&self, slot: &Slot, nb: usize) {
        let mut table = Buckets::new(nb, MAP_FROM);
        table.map_now();
        let bytes = table.bytes();
        slot.lock();
        // SAFETY: the shard's lock is held.
        let s = unsafe { &mut *slot.shard.get() };
        s.preparing = false;
        // The shard may have grown meanwhile (the table is then of no use).
        let unused = if s.next_size(self.growth()) == nb {
            s.spare = Some(table);
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
            None
        } else {
            Some(table)
        };
        slot.unlock();
        drop(unused);
    }

    /// Insert `key` whose hash is `h` ([`crate::key::hash`]); true when it is new.
    #[inline(always)]
    pub fn insert_hashed(&mut self, key: &Key, h: u64) -> bool {
        let new = self.insert_owned(&self.shards[Self::shard_of(h)], key, h, &mut None);
        self.len += new as usize;
        new
    }

    /// Insert `key` whose hash is `h` through `&self` without a lock; true when it is new. Not counted
    /// in [`KeySet::len`] ([`KeySet::recount`]).
    ///
    /// # Safety
    /// No other thread may use the set meanwhile.
    #[inline(always)]
    pub(super) unsafe fn insert_alone(&self, key: &Key, h: u64) -> bool {
        self.insert_owned(&self.shards[Self::shard_of(h)], key, h, &mut None)
    }

    /// Insert `key` whose hash is `h` while other threads may insert too: whether it is new, or `None`
    /// when another thread holds its shard and not `wait`. The set's [`KeySet::len`] is not kept: the
    /// threads count their new keys, or [`KeySet::recount`].
    #[inline(always)]
    pub fn insert_shared(&self, key: &Key, h: u64, wait: bool) -> Option<bool> {
        let slot = &self.shards[Self::shard_of(h)];
        let mut old = None;
        if wait {
            slot.lock();
        } else if !slot.try_lock() {
            return None;
        }
        let new = self.insert_owned(slot, key, h, &mut old);
        // SAFETY: the shard's lock is held.
        let s = unsafe { &mut *slot.shard.get() };
        let spare = s.wants_spare(|| self.growth());
        s.preparing |= spare.is_some();
        slot.unlock();
        // The old table is given back, and the spare one made ready, without the lock.
        drop(old);
        if let Some(nb) = spare {
            self.make_spare(slot, nb);
        }
        Some(new)
    }

    /// Insert `key`; true when it is new.
    #[inline]
    pub fn insert(&mut self, key: &Key) -> bool {
        self.insert_hashed(key, hash(key))
    }

    /// Every key of the set, in table order.
    #[cfg(test)]
    pub fn keys(&mut self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.len);
        for s in self.shards.iter_mut() {
            let s = s.shard.get_mut();
            for b in s.buckets.iter() {
                out.extend(b.keys[..b.used as usize].iter().map(unpack));
            }
        }
        out
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: &Key) -> bool {
        let h = hash(key);
        let slot = &self.shards[Self::shard_of(h)];
        slot.lock();
        // SAFETY: the shard's lock is held.
        let s = unsafe { &*slot.shard.get() };
        let k = pack(key);
        let mut i = s.home(h);
        let found = loop {
            let b = &s.buckets[i];
            if b.keys[..b.used as usize].contains(&k) {
                break true;
            }
            if b.used < 3 {
                break false;
            }
            i = (i + 1) % s.buckets.len();
        };
        slot.unlock();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads inserting overlapping keys into a shared set: each key is new once, the set holds
    /// them all, and its byte count is that of its tables (shards grew, some from spare tables).
    #[test]
    fn shared_inserts_keep_each_key_once() {
        let mut s = KeySet::new();
        let key = |i: u64| [i.wrapping_mul(0x9E37_79B9_7F4A_7C15), i, i & 0x3FFF_FFFF];
        let n = 3_000_000u64;
        let new: u64 = std::thread::scope(|sc| {
            let set = &s;
            let a = sc.spawn(move || {
                (0..2 * n)
                    .filter(|&i| set.insert_shared(&key(i), hash(&key(i)), true) == Some(true))
                    .count()
            });
            let b = sc.spawn(move || {
                (n..3 * n)
                    .filter(|&i| set.insert_shared(&key(i), hash(&key(i)), true) == Some(true))
                    .count()
            });
            (a.join().unwrap() + b.join().unwrap()) as u64
        });
        assert_eq!(new, 3 * n);
        s.recount();
        assert_eq!(s.len() as u64, 3 * n);
        for i in (0..3 * n).step_by(997) {
            assert!(s.contains(&key(i)));
        }
        assert!(!s.contains(&key(3 * n)));
        let tables: usize = s.shards.iter_mut().map(|x| x.shard.get_mut().bytes()).sum();
        assert_eq!(
            s.memory(),
            tables + s.shards.len() * std::mem::size_of::<Slot>()
        );
        assert!(s
            .shards
            .iter_mut()
            .any(|x| x.shard.get_mut().buckets.bytes() >= HUGE_PAGE));
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

    /// A set given a memory budget grows its shards by less past a quarter of it: the same keys take
    /// fewer bytes than in a set without one, and each is there once.
    #[test]
    fn a_set_near_its_budget_grows_by_less() {
        let key = |i: u64| [i.wrapping_mul(0x9E37_79B9_7F4A_7C15), i, i & 0x3FFF_FFFF];
        let n = 1_500_000u64;
        let fill = |budget: Option<usize>| {
            let mut s = KeySet::new();
            s.set_budget(budget);
            for i in 0..n {
                assert!(s.insert(&key(i)));
            }
            for i in (0..n).step_by(7) {
                assert!(!s.insert(&key(i)));
            }
            s
        };
        let free = fill(None);
        // A quarter of the budget is reached a third of the way.
        let tight = fill(Some(free.memory() * 4 / 3));
        assert_eq!(tight.len(), free.len());
        let per_key = |s: &KeySet| s.memory() as f64 / n as f64;
        assert!(
            per_key(&tight) < 0.85 * per_key(&free),
            "{} against {} bytes a key",
            per_key(&tight),
            per_key(&free)
        );
        for i in (0..n).step_by(13) {
            assert!(tight.contains(&key(i)));
        }
        assert!(!tight.contains(&key(n + 1)));
    }
}
