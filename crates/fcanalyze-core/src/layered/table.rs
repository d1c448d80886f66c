//! The set of one group's positions ([`Table`]): open addressing over the positions' codes, in as few
//! bytes a slot as the group's free cards need, sharded once large.

use crate::mem::Zeroed;

/// Slots of a table before it splits into shards.
pub(super) const SPLIT: usize = 1 << 20;

/// Shards of a large table: `1 << SHARD_BITS`. Each grows on its own, so a growing table holds at most
/// an eighth more than itself; each stays large enough for huge pages.
pub(super) const SHARD_BITS: u32 = 4;

/// A shard grows when it is this full, by [`GROWTH`]: the load stays between 0.4 and 0.8.
pub(super) const MAX_LOAD: f64 = 0.8;

/// Doubling moves a position about once over a set's life, growing by a quarter (as this did) four
/// times: the layered proof of deal 26063 with 1 cell takes 0.85 of the time on one thread, 0.81 on
/// two, at the same peak memory (its group sets are small; a set of 2^25 positions takes up to 1.2 GB
/// instead of 0.7).
pub(super) const GROWTH: f64 = 2.0;

/// The set of one group's positions, in the least memory. Within a group every card is either home, on
/// its dealt card (both fixed by the signature) or *free* (in a cell, at a column's bottom, or on one
/// of its two parents); a position is its *places*, 2 bits per free card ([`Frame`]). A slot holds the
/// places and two flags above them, "taken for expansion" and "in use", in as few bytes as they need
/// (8 for 31 free cards, 14 for 52). Open addressing, probed linearly; one shard while small, then
/// `1 << SHARD_BITS`, each grown on its own.
pub(super) struct Table {
    /// Bits of the places.
    pub(super) width: u32,
    /// Bytes of a slot.
    pub(super) stride: usize,
    /// Per shard: its slots' bytes (16 more at the end, so that every slot reads as 16 bytes), its
    /// number of slots, and of positions.
    pub(super) shards: Vec<Slab>,
    pub(super) slots: Vec<usize>,
    pub(super) lens: Vec<usize>,
    pub(super) bits: u32,
    pub(super) len: usize,
}

impl Table {
    /// A table for places of `width` bits.
    pub(super) fn new(width: u32) -> Table {
        let stride = (width as usize + 2).div_ceil(8);
        Table {
            width,
            stride,
            shards: vec![Slab::new(16 * stride + 16, SLAB_MAPPED)],
            slots: vec![16],
            lens: vec![0],
            bits: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub(super) fn used_bit(&self) -> u128 {
        1 << (self.width + 1)
    }

    #[inline(always)]
    pub(super) fn taken_bit(&self) -> u128 {
        1 << self.width
    }

    /// The slot `i` of `shard` (places and flags).
    #[inline(always)]
    pub(super) fn get(shard: &[u8], stride: usize, mask: u128, i: usize) -> u128 {
        let b: [u8; 16] = shard[i * stride..i * stride + 16]
            .try_into()
            .expect("16 bytes");
        u128::from_le_bytes(b) & mask
    }

    #[inline(always)]
    pub(super) fn set(shard: &mut [u8], stride: usize, i: usize, v: u128) {
        shard[i * stride..i * stride + stride].copy_from_slice(&v.to_le_bytes()[..stride]);
    }

    /// The bits of a slot.
    #[inline(always)]
    pub(super) fn slot_mask(&self) -> u128 {
        (1 << (self.width + 2)) - 1
    }

    /// A hash of the places. The high word is mixed before it meets the low one: folding it in by a
    /// shift or rotation (as this did) is linear, and a group's places are structured enough that whole
    /// families of positions then share a hash (two cards whose places sit at bits that the fold lines
    /// up, swapped): linear probing went quadratic, and deal 20410 with 1 cell sat for half an hour
    /// rehashing one group.
    #[inline(always)]
    pub(super) fn hash(places: u128) -> u64 {
        fn mix(mut h: u64) -> u64 {
            h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            h ^ (h >> 31)
        }
        mix(places as u64 ^ mix((places >> 64) as u64 ^ 0x9E37_79B9_7F4A_7C15))
    }

    /// The shard and the home slot of a hash.
    #[inline(always)]
    pub(super) fn home(&self, h: u64) -> (usize, usize) {
        let s = (h & ((1 << self.bits) - 1)) as usize;
        (s, (((h >> 32) * self.slots[s] as u64) >> 32) as usize)
    }

    /// Ask the processor for the cache lines of the home slot of hash `h` (a hint: the slot is looked
    /// up a moment later, its cache miss meanwhile overlapped with others').
    #[inline(always)]
    pub(super) fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let (s, i) = self.home(h);
            let p = self.shards[s].as_ptr().wrapping_add(i * self.stride) as *const i8;
            // SAFETY: a prefetch is a hint with no architectural effect; the slot's 16 bytes are in
            // bounds anyway.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch(p, _MM_HINT_T0);
                _mm_prefetch(p.wrapping_add(15), _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Insert the position of `places`, taken or not; true when it is new.
    #[inline]
    pub(super) fn insert(&mut self, places: u128, taken: bool) -> bool {
        self.insert_hashed(places, Self::hash(places), taken)
    }

    /// [`Table::insert`] of `places` whose hash is `h` ([`Table::hash`]).
    #[inline]
    pub(super) fn insert_hashed(&mut self, places: u128, h: u64, taken: bool) -> bool {
        let (mut s, mut i) = self.home(h);
        if (self.lens[s] + 1) as f64 > self.slots[s] as f64 * MAX_LOAD {
            self.grow(s);
            (s, i) = self.home(h);
        }
        let (stride, mask, n) = (self.stride, self.slot_mask(), self.slots[s]);
        let pos = places | self.used_bit();
        let flag = self.taken_bit();
        let shard = &mut self.shards[s];
        loop {
            let c = Self::get(shard, stride, mask, i);
            if c == 0 {
                Self::set(shard, stride, i, if taken { pos | flag } else { pos });
                self.lens[s] += 1;
                self.len += 1;
                return true;
            }
            if c & !flag == pos {
                return false;
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
    }

    /// Place a slot's value known to be absent (while growing).
    pub(super) fn place(&mut self, v: u128) {
        let places = v & (self.taken_bit() - 1);
        let (s, mut i) = self.home(Self::hash(places));
        let (stride, mask, n) = (self.stride, self.slot_mask(), self.slots[s]);
        let shard = &mut self.shards[s];
        while Self::get(shard, stride, mask, i) != 0 {
            i += 1;
            if i == n {
                i = 0;
            }
        }
        Self::set(shard, stride, i, v);
        self.lens[s] += 1;
    }

    /// Zeroed bytes for `n` slots.
    pub(super) fn zeroed(&self, n: usize) -> Slab {
        Slab::new(n * self.stride + 16, SLAB_MAPPED)
    }

    /// Place the values of the slots in use of `old` (`n` slots), moved out of the table.
    pub(super) fn replace_all(&mut self, old: Slab, n: usize) {
        let mask = self.slot_mask();
        for i in 0..n {
            let v = Self::get(&old, self.stride, mask, i);
            if v != 0 {
                self.place(v);
            }
        }
    }

    /// Grow shard `s`, or split the one shard of a large table. Memory holds the old shard and the
    /// new one, never a copy of the whole table.
    pub(super) fn grow(&mut self, s: usize) {
        if self.bits == 0 && self.slots[0] >= SPLIT {
            let old = std::mem::replace(&mut self.shards[0], Slab::new(0, SLAB_MAPPED));
            let n = self.slots[0];
            let each = (n as f64 * GROWTH) as usize >> SHARD_BITS;
            self.bits = SHARD_BITS;
            self.shards = (0..1 << SHARD_BITS).map(|_| self.zeroed(each)).collect();
            self.slots = vec![each; 1 << SHARD_BITS];
            self.lens = vec![0; 1 << SHARD_BITS];
            self.replace_all(old, n);
            return;
        }
        let n = self.slots[s];
        let grown = ((n as f64 * GROWTH) as usize).max(n + 16);
        let fresh = self.zeroed(grown);
        let old = std::mem::replace(&mut self.shards[s], fresh);
        self.slots[s] = grown;
        self.lens[s] = 0;
        self.replace_all(old, n);
    }

    /// The places of the next position not yet taken at or after `cursor` (shard, slot), taken now;
    /// `None` at the end of the table. A table that grows meanwhile may move positions behind the
    /// cursor.
    pub(super) fn take_next(&mut self, cursor: &mut (usize, usize)) -> Option<u128> {
        let (stride, mask, flag) = (self.stride, self.slot_mask(), self.taken_bit());
        while cursor.0 < self.shards.len() {
            let n = self.slots[cursor.0];
            let shard = &mut self.shards[cursor.0];
            while cursor.1 < n {
                let i = cursor.1;
                cursor.1 += 1;
                let c = Self::get(shard, stride, mask, i);
                if c != 0 && c & flag == 0 {
                    Self::set(shard, stride, i, c | flag);
                    return Some(c & (flag - 1));
                }
            }
            *cursor = (cursor.0 + 1, 0);
        }
        None
    }

    pub(super) fn memory(&self) -> usize {
        self.shards.iter().map(|s| s.bytes()).sum()
    }
}

/// Bytes from which a table's shard is mapped from the system (see [`Zeroed`]).
pub(super) const SLAB_MAPPED: usize = 64 << 10;

/// Zeroed bytes of a table's shard.
pub(super) type Slab = Zeroed<u8>;
