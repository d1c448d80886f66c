//! The prover's visited set: 20-byte packed keys without parent links, in 64-byte buckets of three
//! keys, in independently growing shards (about 26–30 bytes per position).

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
pub(super) const KEEP_BYTES: usize = 64 << 20;

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

    #[cfg(test)]
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

    /// Insert `key` whose hash is `h` ([`crate::key::hash`]); true when it is new.
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
    #[cfg(test)]
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

#[cfg(test)]
mod tests {
    use super::*;

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
