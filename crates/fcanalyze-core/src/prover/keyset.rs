//! The prover's visited set: 20-byte packed keys without parent links, in 64-byte buckets of three
//! keys, in independently growing shards (about 24–48 bytes per position; about 30 once the set nears
//! its memory budget: [`KeySet::set_budget`]). One thread owns it
//! ([`KeySet::insert_hashed`]), or several share it ([`KeySet::insert_shared`]: a thread takes a
//! bucket, not a shard, and only to add a key to it; a key already there is found without writing
//! anything).
//!
//! While threads share the set, a bucket's `used` word says how many keys it holds ([`COUNT`]), whether
//! a thread holds it ([`LOCKED`]) and whether its shard has grown out of its table ([`MOVED`]). Keys are
//! only ever added, each written before the count that covers it is released, so a reader compares the
//! keys the count covers without a lock; a full bucket never changes. An insert takes the first bucket
//! with room on the key's probe line by raising its lock bit from the count it read (the count only
//! grows, so the bit is raised only on the bucket as it was read), writes the key and releases the new
//! count. A growth is made by one thread ([`Slot::growing`]): it takes every bucket with room, moves all
//! keys to the new table, publishes it, and marks the buckets it holds as moved, which sends inserts
//! waiting on them to the new table. The old table is given back once every other thread has passed a
//! quiescent point or waits for work ([`KeySet::quiescent`]): until then a thread may still be reading
//! it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::key::{hash, pack, unpack, Key};
#[cfg(target_os = "linux")]
use crate::mem::{ZeroIsDefault, Zeroed, HUGE_PAGE};

use super::Own;

/// One bucket of the set: three packed keys and the number in use, one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    keys: [[u32; 5]; 3],
    used: u32,
}

/// The bits of a bucket's `used` word: the keys it holds, and (threads sharing the set) a thread holds
/// it, its shard's keys have moved to a larger table.
const COUNT: u32 = 3;
const LOCKED: u32 = 4;
const MOVED: u32 = 8;

/// The `used` word of the bucket at `b`, to be read and written by threads sharing the set.
///
/// # Safety
/// `b` points to a bucket of a table that lives while the reference is used.
#[inline(always)]
unsafe fn used_of<'a>(b: *mut Bucket) -> &'a AtomicU32 {
    AtomicU32::from_ptr(std::ptr::addr_of_mut!((*b).used))
}

/// The bucket where a key of hash `h` is looked up first in a table of `nb` buckets (the low 32 bits
/// of the hash scaled to the table; the top bits choose the shard).
#[inline(always)]
fn home(h: u64, nb: usize) -> usize {
    ((h as u32 as u64 * nb as u64) >> 32) as usize
}

/// Key `s` of the bucket at `b`.
///
/// # Safety
/// As [`used_of`], and `s` is below a count of the bucket read with acquire ordering (the key was
/// written before that count was released, and is never written again).
#[inline(always)]
unsafe fn key_of(b: *mut Bucket, s: usize) -> [u32; 5] {
    std::ptr::read(std::ptr::addr_of!((*b).keys[s]))
}

/// 64 shards: a large set's shards fill whole huge pages (1024 shards of a set of 8 million positions
/// would not, and took 15% more time on one thread).
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
    /// Keys held (while threads share the set: [`Slot::counted`]), and past how many it grows.
    len: usize,
    limit: usize,
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
        }
    }

    /// Bytes of the table.
    fn bytes(&self) -> usize {
        self.buckets.bytes()
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

    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        home(h, self.buckets.len())
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

    /// A zeroed table larger by `growth`, its pages mapped now.
    fn next_table(&self, growth: f64) -> Buckets {
        let mut t = Buckets::new(self.next_size(growth), MAP_FROM);
        t.map_now();
        t
    }

    /// Move the keys to a table larger by `growth`; the old table, to be dropped.
    fn grow(&mut self, growth: f64) -> Buckets {
        let table = self.next_table(growth);
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

/// Where a table's buckets start and how many there are, as threads sharing the set see a shard's
/// table (one pointer to both, so that they are never read from two different tables).
struct Table {
    first: *mut Bucket,
    nb: usize,
}

/// A shard and what threads sharing the set read of it: its table, past how many keys it grows, the
/// keys counted so far, and whether a thread is growing it.
#[repr(C, align(64))]
struct Slot {
    /// The shard's table ([`Table`]), replaced when it grows.
    table: AtomicPtr<Table>,
    /// The same start and number, for [`KeySet::prefetch`] (a stale pair only prefetches a useless
    /// line: a prefetch never faults).
    first: AtomicPtr<Bucket>,
    nb: AtomicUsize,
    /// Threads sharing the set: the shard grows once [`Slot::counted`] reaches this.
    limit: AtomicUsize,
    /// A thread is growing the shard: until it is done, that thread alone touches [`Slot::shard`].
    growing: AtomicBool,
    /// Threads sharing the set: the shard's keys as counted so far (each thread adds its new keys in
    /// batches, [`Tally`]), on a line of its own, as it is written far more often than those above.
    counted: Own<AtomicUsize>,
    shard: UnsafeCell<Shard>,
}

impl Slot {
    fn new(shard: Shard) -> Slot {
        let slot = Slot {
            table: AtomicPtr::new(std::ptr::null_mut()),
            first: AtomicPtr::new(std::ptr::null_mut()),
            nb: AtomicUsize::new(0),
            limit: AtomicUsize::new(0),
            growing: AtomicBool::new(false),
            counted: Own(AtomicUsize::new(0)),
            shard: UnsafeCell::new(shard),
        };
        // SAFETY: the slot is not shared yet.
        drop(unsafe { slot.publish() });
        slot
    }

    /// Make the shard's table known to threads sharing the set and to [`KeySet::prefetch`]; the
    /// [`Table`] it replaces (to be dropped once no thread can be reading it).
    ///
    /// # Safety
    /// The caller owns the shard (exclusive access to the set, or [`Slot::growing`] taken).
    unsafe fn publish(&self) -> Option<Box<Table>> {
        let s = &*self.shard.get();
        let t = Box::new(Table {
            first: s.buckets.as_ptr() as *mut Bucket,
            nb: s.buckets.len(),
        });
        self.first.store(t.first, Ordering::Relaxed);
        self.nb.store(t.nb, Ordering::Relaxed);
        self.limit.store(s.limit, Ordering::Relaxed);
        let old = self.table.swap(Box::into_raw(t), Ordering::SeqCst);
        (!old.is_null()).then(|| Box::from_raw(old))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let t = *self.table.get_mut();
        if !t.is_null() {
            // SAFETY: made by `publish` with `Box::into_raw`, given back once.
            drop(unsafe { Box::from_raw(t) });
        }
    }
}

/// A table a shard grew out of while threads shared the set, kept until no thread can be reading it:
/// the thread that grew the shard, and every thread's quiescence count then ([`KeySet::epochs`]).
struct Retired {
    buckets: Buckets,
    _table: Box<Table>,
    by: usize,
    seen: Vec<u64>,
}

// SAFETY: a retired table is owned by the set alone (its pointers name the buckets it holds).
unsafe impl Send for Retired {}

/// One thread's part in a shared set ([`KeySet::insert_shared`]): its index among the threads, and the
/// new keys it stored in each shard and has not yet added to the shard's count.
pub(super) struct Tally {
    id: usize,
    pending: [u32; NSHARDS],
}

impl Tally {
    pub(super) fn new(id: usize) -> Tally {
        Tally {
            id,
            pending: [0; NSHARDS],
        }
    }
}

/// A set of canonical keys without parent links: shards chosen by the top bits of the hash, each an
/// open-addressing table of [`Bucket`]s probed linearly, grown one shard at a time (no moment with two
/// copies of the whole table).
pub struct KeySet {
    shards: Box<[Slot]>,
    /// Keys inserted through `&mut self` (shared inserts are counted by their threads; [`KeySet::recount`]).
    len: usize,
    /// Bytes of the buckets, kept up to date as shards grow (tables grown out of and not yet given
    /// back included).
    bytes: AtomicUsize,
    /// Bytes of buckets past which shards grow by [`TIGHT_GROWTH`] ([`KeySet::set_budget`]).
    tight_from: usize,
    /// Threads sharing the set ([`KeySet::share`]): each thread's quiescence count, raised at each of
    /// its quiescent points and when it starts and stops waiting for work (odd while it waits).
    epochs: Box<[Own<AtomicU64>]>,
    /// Tables grown out of and not yet given back, and their number.
    retired: Mutex<Vec<Retired>>,
    nretired: AtomicUsize,
}

// SAFETY: through `&self`, a shard's `Shard` is reached only by the thread that took its `growing`
// flag (or holds the set exclusively), and its buckets by the protocol of the module's doc; every other
// access takes `&mut self`.
unsafe impl Sync for KeySet {}

impl Default for KeySet {
    fn default() -> Self {
        Self::new()
    }
}

/// Above this many bytes, clearing the set gives its memory back instead of zeroing it.
pub(super) const KEEP_BYTES: usize = 64 << 20;

/// A thread sharing the set adds its new keys to a shard's count once it has this many (or a
/// thirty-second of the shard's limit, for small shards, so that no table fills up before it grows).
const TALLY_BATCH: u32 = 256;

impl KeySet {
    pub fn new() -> KeySet {
        let mut s = KeySet {
            shards: Box::new([]),
            len: 0,
            bytes: AtomicUsize::new(0),
            tight_from: usize::MAX,
            epochs: Box::new([]),
            retired: Mutex::new(Vec::new()),
            nretired: AtomicUsize::new(0),
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

    /// Ask the processor for the cache line where `h` is looked up first.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let s = &self.shards[Self::shard_of(h)];
            let at = home(h, s.nb.load(Ordering::Relaxed));
            let p = s.first.load(Ordering::Relaxed).wrapping_add(at) as *const i8;
            // SAFETY: a prefetch is a hint with no architectural effect (it never faults).
            unsafe { _mm_prefetch(p, _MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Insert `key` whose hash is `h` ([`crate::key::hash`]); true when it is new.
    #[inline(always)]
    pub fn insert_hashed(&mut self, key: &Key, h: u64) -> bool {
        // SAFETY: `&mut self`: no other thread uses the set.
        let new = unsafe { self.insert_alone(key, h) };
        self.len += new as usize;
        new
    }

    /// Insert `key` whose hash is `h` through `&self`, as the set's only user; true when it is new.
    /// Not counted in [`KeySet::len`] ([`KeySet::recount`]).
    ///
    /// # Safety
    /// No other thread may use the set meanwhile, and it is not shared ([`KeySet::share`]).
    #[inline(always)]
    pub(super) unsafe fn insert_alone(&self, key: &Key, h: u64) -> bool {
        let slot = &self.shards[Self::shard_of(h)];
        let s = &mut *slot.shard.get();
        if s.len >= s.limit {
            let before = s.bytes();
            drop(s.grow(self.growth()));
            drop(slot.publish());
            self.bytes
                .fetch_add(s.bytes().wrapping_sub(before), Ordering::Relaxed);
        }
        s.insert(&pack(key), h)
    }

    /// Get the set ready for `threads` threads inserting through [`KeySet::insert_shared`], each with
    /// a [`Tally`] of its own index.
    pub(super) fn share(&mut self, threads: usize) {
        self.epochs = (0..threads).map(|_| Own(AtomicU64::new(0))).collect();
        for slot in self.shards.iter_mut() {
            let s = slot.shard.get_mut();
            slot.counted.0.store(s.len, Ordering::Relaxed);
            slot.limit.store(s.limit, Ordering::Relaxed);
            *slot.growing.get_mut() = false;
        }
    }

    /// After threads shared the set, each having called [`KeySet::leave`]: give back the tables grown
    /// out of, and count the keys.
    pub(super) fn unshare(&mut self) {
        for r in self
            .retired
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            self.bytes.fetch_sub(r.buckets.bytes(), Ordering::Relaxed);
        }
        *self.nretired.get_mut() = 0;
        for slot in self.shards.iter_mut() {
            let n = slot.counted.0.load(Ordering::Relaxed);
            slot.shard.get_mut().len = n;
        }
        self.epochs = Box::new([]);
        self.recount();
    }

    /// Insert `key` whose hash is `h` while other threads may insert too: whether it is new, or `None`
    /// when its shard is growing and not `wait`. `tally` is the calling thread's ([`KeySet::share`]).
    #[inline(always)]
    pub(super) fn insert_shared(
        &self,
        key: &Key,
        h: u64,
        wait: bool,
        tally: &mut Tally,
    ) -> Option<bool> {
        let si = Self::shard_of(h);
        let slot = &self.shards[si];
        let k = pack(key);
        let mut spins = 0u32;
        'table: loop {
            // SAFETY: a table stays until every other thread has passed a quiescent point after it was
            // replaced (`quiescent`), and this thread reads it between two of its own.
            let t = unsafe { &*slot.table.load(Ordering::SeqCst) };
            let mut i = home(h, t.nb);
            let mut probed = 0;
            loop {
                // SAFETY: `i < t.nb`, in a live table (above).
                let b = unsafe { t.first.add(i) };
                let used = unsafe { used_of(b) };
                let u = used.load(Ordering::Acquire);
                let n = u & COUNT;
                for s in 0..n as usize {
                    // SAFETY: below the count just read.
                    if unsafe { key_of(b, s) } == k {
                        return Some(false);
                    }
                }
                if n == 3 {
                    i += 1;
                    if i == t.nb {
                        i = 0;
                    }
                    probed += 1;
                    if probed == t.nb {
                        // Every bucket is full (the counts of other threads not added yet): grow.
                        self.grow_shared(slot, tally.id, true);
                        continue 'table;
                    }
                    continue;
                }
                if u & MOVED != 0 {
                    continue 'table;
                }
                if u & LOCKED != 0 {
                    // Another thread adds a key to it (a moment), or grows the shard.
                    if !wait && slot.growing.load(Ordering::Relaxed) {
                        return None;
                    }
                    spins += 1;
                    if spins < 100 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                    continue;
                }
                if used
                    .compare_exchange_weak(u, u | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                // SAFETY: the bucket is held: no other thread writes it, and readers read only the
                // keys below the count, which this write does not touch.
                unsafe { std::ptr::write(std::ptr::addr_of_mut!((*b).keys[n as usize]), k) };
                used.store(n + 1, Ordering::Release);
                self.count(slot, si, tally);
                return Some(true);
            }
        }
    }

    /// Count a new key of shard `si` in `tally`, and in the shard once the tally has enough; grow the
    /// shard when it is full.
    #[inline(always)]
    fn count(&self, slot: &Slot, si: usize, tally: &mut Tally) {
        let p = &mut tally.pending[si];
        *p += 1;
        let limit = slot.limit.load(Ordering::Relaxed);
        if *p < TALLY_BATCH && (*p as usize) * 32 < limit {
            return;
        }
        let n = *p as usize;
        *p = 0;
        if slot.counted.0.fetch_add(n, Ordering::Relaxed) + n >= limit {
            self.grow_shared(slot, tally.id, false);
        }
    }

    /// Grow the shard of `slot` while threads share the set, if no other thread is growing it and it
    /// is still full (or `forced`: its table was found full). `id` is the calling thread's index.
    #[cold]
    #[inline(never)]
    fn grow_shared(&self, slot: &Slot, id: usize, forced: bool) {
        if slot.growing.swap(true, Ordering::Acquire) {
            if forced {
                std::thread::yield_now();
            }
            return;
        }
        let full = slot.counted.0.load(Ordering::Relaxed) >= slot.limit.load(Ordering::Relaxed);
        if !full && !forced {
            slot.growing.store(false, Ordering::Release);
            return;
        }
        // SAFETY: the `growing` flag taken: this thread alone touches the shard's `Shard`; the other
        // threads reach its buckets only through `slot.table`.
        let s = unsafe { &mut *slot.shard.get() };
        // The new table is mapped while the other threads go on with the old one.
        let mut grown = Shard::with_table(s.next_table(self.growth()));
        let (old_first, old_nb) = (s.buckets.as_ptr() as *mut Bucket, s.buckets.len());
        for i in 0..old_nb {
            // SAFETY: `i < old_nb`, in the shard's table, which only this thread can give back.
            let b = unsafe { old_first.add(i) };
            let used = unsafe { used_of(b) };
            // Take every bucket with room (a full one never changes), waiting out an insert in it.
            let n = loop {
                let u = used.load(Ordering::Acquire);
                if u & COUNT == 3 {
                    break 3;
                }
                if u & LOCKED != 0 {
                    std::hint::spin_loop();
                    continue;
                }
                if used
                    .compare_exchange_weak(u, u | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    break u & COUNT;
                }
            };
            for j in 0..n as usize {
                // SAFETY: below the count read (the bucket is held, or full).
                let k = unsafe { key_of(b, j) };
                // The keys of a set are distinct.
                grown.insert_new(&k, hash(&unpack(&k)));
            }
        }
        let old = std::mem::replace(s, grown);
        // SAFETY: the `growing` flag is taken.
        let old_table = unsafe { slot.publish() }.expect("a published table");
        // Send the inserts waiting on the old table's held buckets to the new one.
        for i in 0..old_nb {
            // SAFETY: as above; the old table is not given back before `retire`.
            let used = unsafe { used_of(old_first.add(i)) };
            let u = used.load(Ordering::Relaxed);
            if u & LOCKED != 0 {
                used.store(u | MOVED, Ordering::Release);
            }
        }
        self.bytes.fetch_add(s.bytes(), Ordering::Relaxed);
        self.retire(Retired {
            buckets: old.buckets,
            _table: old_table,
            by: id,
            seen: Vec::new(),
        });
        slot.growing.store(false, Ordering::Release);
    }

    /// Keep a table grown out of until no other thread can be reading it.
    fn retire(&self, mut r: Retired) {
        // The new table was published (sequentially consistent) before the counts are read: a thread
        // whose count is read unchanged here reads the new table after its next quiescent point.
        r.seen = self
            .epochs
            .iter()
            .map(|e| e.0.load(Ordering::SeqCst))
            .collect();
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        retired.push(r);
        self.nretired.store(retired.len(), Ordering::Relaxed);
    }

    /// A quiescent point of the thread of `tally`: it holds no reference into the set's tables. Tables
    /// grown out of that no thread can still be reading are given back.
    pub(super) fn quiescent(&self, tally: &Tally) {
        self.epochs[tally.id].0.fetch_add(2, Ordering::SeqCst);
        self.give_back();
    }

    /// The thread of `tally` starts (`true`) or stops waiting for work: meanwhile it reads no table.
    pub(super) fn waiting(&self, tally: &Tally, waits: bool) {
        let e = &self.epochs[tally.id].0;
        if (e.load(Ordering::Relaxed) & 1 == 1) != waits {
            e.fetch_add(1, Ordering::SeqCst);
        }
        if waits {
            self.give_back();
        }
    }

    /// The thread of `tally` is done with the set: its new keys counted, and it reads no table again.
    pub(super) fn leave(&self, tally: &mut Tally) {
        for (slot, p) in self.shards.iter().zip(tally.pending.iter_mut()) {
            slot.counted.0.fetch_add(*p as usize, Ordering::Relaxed);
            *p = 0;
        }
        self.waiting(tally, true);
    }

    /// Give back the retired tables that every thread but the one that grew them has passed: its count
    /// changed since (a quiescent point, or waiting or back from waiting), or it was waiting then.
    fn give_back(&self) {
        if self.nretired.load(Ordering::Relaxed) == 0 {
            return;
        }
        let now: Vec<u64> = self
            .epochs
            .iter()
            .map(|e| e.0.load(Ordering::SeqCst))
            .collect();
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        retired.retain(|r| {
            let passed =
                (0..now.len()).all(|j| j == r.by || now[j] != r.seen[j] || r.seen[j] & 1 == 1);
            if passed {
                self.bytes.fetch_sub(r.buckets.bytes(), Ordering::Relaxed);
            }
            !passed
        });
        self.nretired.store(retired.len(), Ordering::Relaxed);
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

    /// Whether `key` is in the set (no thread inserting meanwhile).
    pub fn contains(&mut self, key: &Key) -> bool {
        let h = hash(key);
        let s = self.shards[Self::shard_of(h)].shard.get_mut();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads inserting overlapping keys into a shared set: each key is new once, the set holds them
    /// all, every table grown out of is given back, and the set's byte count is that of its tables.
    fn shared_inserts(threads: usize, n: u64, quiet_every: u64) {
        let mut s = KeySet::new();
        let key = |i: u64| [i.wrapping_mul(0x9E37_79B9_7F4A_7C15), i, i & 0x3FFF_FFFF];
        s.share(threads);
        let new: u64 = std::thread::scope(|sc| {
            let set = &s;
            let handles: Vec<_> = (0..threads as u64)
                .map(|t| {
                    sc.spawn(move || {
                        let mut tally = Tally::new(t as usize);
                        let mut new = 0;
                        // Thread t inserts t*n/2 .. t*n/2 + 2n: each key by two or more threads.
                        for (c, i) in (t * n / 2..t * n / 2 + 2 * n).enumerate() {
                            let k = key(i);
                            let wait = c % 3 == 0;
                            let inserted = loop {
                                match set.insert_shared(&k, hash(&k), wait, &mut tally) {
                                    Some(x) => break x,
                                    None => std::thread::yield_now(),
                                }
                            };
                            new += inserted as u64;
                            if c as u64 % quiet_every == 0 {
                                set.quiescent(&tally);
                            }
                        }
                        set.leave(&mut tally);
                        new
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let distinct = (threads as u64 - 1) * n / 2 + 2 * n;
        assert_eq!(new, distinct);
        s.unshare();
        assert_eq!(s.len() as u64, distinct);
        for i in (0..distinct).step_by(997) {
            assert!(s.contains(&key(i)));
        }
        assert!(!s.contains(&key(distinct)));
        assert_eq!(s.keys().len() as u64, distinct);
        let tables: usize = s.shards.iter_mut().map(|x| x.shard.get_mut().bytes()).sum();
        assert_eq!(
            s.memory(),
            tables + s.shards.len() * std::mem::size_of::<Slot>()
        );
        // Tables of a huge page or more were grown under the threads (their pages mapped first).
        assert_eq!(
            s.shards
                .iter_mut()
                .any(|x| x.shard.get_mut().buckets.bytes() >= HUGE_PAGE),
            distinct >= 5_000_000
        );
        // The set goes on alone after being shared.
        for i in distinct..distinct + 1000 {
            assert!(s.insert(&key(i)));
        }
        assert!(!s.insert(&key(5)));
        assert_eq!(s.len() as u64, distinct + 1000);
    }

    #[test]
    fn shared_inserts_keep_each_key_once() {
        shared_inserts(2, 3_000_000, 64);
    }

    /// More threads than cores, tables grown many times from the smallest, quiescent points rare: the
    /// buckets' locks, the growths and the tables given back under contention.
    #[test]
    fn shared_inserts_under_contention_keep_each_key_once() {
        shared_inserts(4, 600_000, 5_000);
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
        let mut tight = fill(Some(free.memory() * 4 / 3));
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
