//! The set of stored positions: 20-byte canonical keys in an arena with a parent link each, indexed by
//! an open-addressing table of (hash tag, index) slots. About 24 bytes per position in the arena plus
//! 8 bytes per table slot at a load factor between 0.35 and 0.7: 35–47 bytes per position in all.

use crate::key::{hash, pack, unpack, Key};

/// A stored position: its packed 20-byte key and the index of the position it was first reached from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Entry {
    key: [u32; 5],
    pub parent: u32,
}

/// Bytes of memory per stored position, counting the table at its mean load.
pub const BYTES_PER_POSITION: usize = std::mem::size_of::<Entry>() + 8 * 2;

impl Entry {
    #[inline(always)]
    pub fn key(&self) -> Key {
        unpack(&self.key)
    }
}

const MIN_SLOTS: usize = 1 << 12;

/// A growable set of canonical keys, reusable from one search to the next.
pub struct Store {
    entries: Vec<Entry>,
    slots: Vec<u64>,
    mask: usize,
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

impl Store {
    pub fn new() -> Store {
        Store {
            entries: Vec::new(),
            slots: vec![0; MIN_SLOTS],
            mask: MIN_SLOTS - 1,
        }
    }

    /// Forget every position, keeping a small table.
    pub fn clear(&mut self) {
        self.entries.clear();
        if self.slots.len() > MIN_SLOTS {
            self.entries.shrink_to(MIN_SLOTS);
            self.slots = vec![0; MIN_SLOTS];
            self.mask = MIN_SLOTS - 1;
        } else {
            self.slots.fill(0);
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline(always)]
    pub fn get(&self, idx: u32) -> &Entry {
        &self.entries[idx as usize]
    }

    /// Insert `key`, reached from `parent`; returns its new index, or `None` when it was already stored.
    #[inline]
    pub fn insert(&mut self, key: &Key, parent: u32) -> Option<u32> {
        match self.insert_or_get(key, parent) {
            (idx, true) => Some(idx),
            _ => None,
        }
    }

    /// Insert `key`, reached from `parent`; returns its index and whether it is new.
    #[inline]
    pub fn insert_or_get(&mut self, key: &Key, parent: u32) -> (u32, bool) {
        if (self.entries.len() + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let h = hash(key);
        let tag = h & 0xFFFF_FFFF_0000_0000;
        let packed = pack(key);
        let mut i = (h as usize) & self.mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                let idx = self.entries.len() as u32;
                self.entries.push(Entry {
                    key: packed,
                    parent,
                });
                self.slots[i] = tag | (idx as u64 + 1);
                return (idx, true);
            }
            if s & 0xFFFF_FFFF_0000_0000 == tag
                && self.entries[((s as u32) - 1) as usize].key == packed
            {
                return ((s as u32) - 1, false);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The index of `key` if stored.
    #[inline]
    pub fn find(&self, key: &Key) -> Option<u32> {
        let h = hash(key);
        let tag = h & 0xFFFF_FFFF_0000_0000;
        let packed = pack(key);
        let mut i = (h as usize) & self.mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            let idx = (s as u32) - 1;
            if s & 0xFFFF_FFFF_0000_0000 == tag && self.entries[idx as usize].key == packed {
                return Some(idx);
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let mut slots = vec![0u64; n];
        // Advised before the rehash touches it.
        crate::mem::advise_huge_pages(&slots);
        let mask = n - 1;
        for (idx, e) in self.entries.iter().enumerate() {
            let h = hash(&e.key());
            let mut i = (h as usize) & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = (h & 0xFFFF_FFFF_0000_0000) | (idx as u64 + 1);
        }
        self.slots = slots;
        self.mask = mask;
        // The entries reach at most 0.7 of the slots before the next growth: reserve them now, so that
        // they are advised once, before they are touched.
        let most = n * 7 / 10 + 1;
        self.entries
            .reserve_exact(most.saturating_sub(self.entries.len()));
        crate::mem::advise_huge_pages(&self.entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_grow_clear() {
        let mut s = Store::new();
        for i in 0..100_000u64 {
            let k = [i, i.wrapping_mul(7) & ((1 << 63) - 1), i & 0x3FFF_FFFF];
            assert_eq!(s.insert(&k, 0), Some(i as u32));
        }
        for i in 0..100_000u64 {
            let k = [i, i.wrapping_mul(7) & ((1 << 63) - 1), i & 0x3FFF_FFFF];
            assert_eq!(s.insert(&k, 1), None);
            assert_eq!(s.find(&k), Some(i as u32));
            assert_eq!(s.get(i as u32).key(), k);
        }
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.find(&[1, 7, 1]), None);
    }
}
