//! The layered exhaustive search: a proof of unsolvability that holds one layer of the reachable set in
//! memory at a time and keeps the rest on disk (../shared/SEARCH.md, "Ideas for the proofs that remain
//! out of reach in memory").
//!
//! Two counts never decrease along a line of play: the cards on the foundations (they never leave), and
//! the cards no longer lying on the card they were dealt on when that card is not their parent (they can
//! never go back there). Their sum, the *progress* of a position ([`progress`], 0..=104), orders the
//! reachable set in layers: a move leads to the same layer or a later one. Within a layer, the cards home
//! and the cards still on their dealt card are fixed too ([`signature`]): a layer splits into groups that
//! cannot reach each other. The search finishes the layers in increasing order, group by group. A
//! group's positions are found from earlier layers (its *seeds*, kept in a spill file of packed 20-byte
//! keys, each with the 20-byte key of the position it came from, sorted and deduplicated in batches
//! before they are written) and from each other: depth first, in a set of the group's positions in
//! memory (`Table`: a position is coded in 2 bits per card the group leaves free, in a slot of as few
//! bytes as that takes: 8 for 31 free cards, 14 for 52). The seeds come one at a time from the merge, and
//! the stack is bounded: positions that find it full wait in the set, flagged as not taken, and scans
//! of the set take them. A finished group is dropped: no later position leads back to it. Memory holds
//! the current group's set, the bounded stack, the merge's read buffers and the write buffers; the
//! disk holds the later layers' seeds, duplicates included, and the finished layers' as long as they
//! take at most twice the memory budget (past it, a win comes without a line, and the seeds are written
//! lean from then on: 20 bytes, the key alone, instead of 48).
//!
//! The count of a finished search is the exact number of distinct canonical positions reachable (layers
//! are disjoint and each layer's set is exact), the same as [`crate::prove::Prover`]'s. The group sets
//! keep no parent links; a seed keeps the position it was reached from, and each layer's seeds stay on
//! disk until the search ends. So when a won position turns up, the line to it is found again backwards
//! ([`chain_to`]): a breadth-first search of its group from the group's seeds reaches it, the seed that
//! leads there names a position of an earlier layer, whose group is searched again from its seeds, and so
//! on down to the start. Each step holds one group with parent links (about 100 bytes a position).
//!
//! Threads ([`LayeredConfig::threads`]) share each layer out group by group: every thread merges the
//! layer's file on its own, and takes the next group no thread has claimed when it is free; the
//! threads' seeds for later layers go to the same files, each flush as a sorted run of its own. The
//! count does not depend on the threads. A layer's groups are few and uneven, and a layer takes as long
//! as its largest group: one group held 273 of the 274 million positions of layer 48 of deal 982 with
//! 2 cells, and 144 of the 440 million of layer 50 of deal 24966 with 1 cell. On the 2-core machines
//! of this project two threads did not gain: deal 26063 with 1 cell took 52.0 s with two against 50.8 s
//! with one (medians of 3, `farm-bench`), its largest groups holding most of their layers.
//!
//! A search given a directory of its own ([`LayeredConfig::checkpoint_dir`]) can be resumed: at the start of
//! each layer, every buffer written, it saves a checkpoint there (`Checkpoint`: the bytes and sorted
//! runs of every later layer's file, the finished layers kept, the counts). Killed later, it is run
//! again with the same directory and goes on from that layer: the files are brought back to what the
//! checkpoint lists (the layer's file renamed back, later files cut to their listed bytes). Within a
//! layer it saves the checkpoint again at the end of each level of a group searched by levels (with the
//! two level files the next level starts from), and after a finished group once the last save is a
//! minute old (the group listed, with its count): a giant proof killed loses at most a level.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::layer::{progress, LAYERS};
use crate::mem::Zeroed;
use crate::outcome::Budget;
use crate::position::{Key, Layout, Position};
use crate::prove::{pack, signature, unpack, Rules, FIELD_LOW};
use crate::search::Limits;

/// A seed: its packed key, the packed key of the position it was reached from ([`NO_PARENT`] for the
/// start), and a 64-bit hash of its group's [`signature`] (high word first).
type Rec = [u32; 12];
/// Bytes of a seed in a spill file.
const RECORD: usize = 48;
/// Bytes of a seed in a spill file once the lines are forgotten ([`Seeds::keep`] false): its key alone
/// (the parent would serve no line, and the group hash is computed again from the key).
const LEAN: usize = 20;
/// The parent of the start.
const NO_PARENT: [u32; 5] = [u32::MAX; 5];

#[inline(always)]
fn rec_key(r: &Rec) -> [u32; 5] {
    r[..5].try_into().expect("five words")
}

#[inline(always)]
fn rec_parent(r: &Rec) -> [u32; 5] {
    r[5..10].try_into().expect("five words")
}

/// The order of seeds in the spill files: by group (the hash of the signature), then by key.
#[inline(always)]
fn rec_order(r: &Rec) -> (u32, u32, [u32; 5]) {
    (r[10], r[11], rec_key(r))
}

/// A hash of the group of `key` (equal signatures, equal hashes).
#[inline]
fn group_hash(key: &Key) -> u64 {
    let s = signature(key);
    crate::store::hash(&[
        s[0] ^ s[3].rotate_left(17),
        s[1] ^ s[4].rotate_left(29),
        s[2] ^ s[5].rotate_left(41),
    ])
}
/// Keys buffered for later layers before the buffers are sorted, deduplicated and written.
const FLUSH_KEYS: usize = 1 << 24;

/// How a layered search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayeredOutcome {
    /// Every reachable position was expanded and none is won.
    Unsolvable,
    /// A won (or provably won) position is reachable; [`LayeredResult::chain`] leads there when the
    /// memory held the search for it.
    Won,
    /// A budget ran out.
    Undecided(Budget),
}

/// What a layered search did.
#[derive(Clone, Debug)]
pub struct LayeredResult {
    pub outcome: LayeredOutcome,
    /// Distinct canonical positions reached (the exact reachable set's size when unsolvable).
    pub positions: u64,
    /// Most positions of one group (held at once).
    pub peak_positions: u64,
    /// Most bytes held in memory at once (the group's set, the stack, the merge's read buffers and the
    /// write buffers).
    pub peak_bytes: usize,
    /// The parts of [`LayeredResult::peak_bytes`]: the group's set, the stack, the merge's read buffers,
    /// the write buffers; and the positions of the group then searched.
    pub peak_parts: [usize; 5],
    /// Most bytes of spill files on disk at once.
    pub peak_disk: u64,
    pub elapsed_ms: f64,
    /// When won: the canonical keys from the start to a won or sorted position, each one move from the
    /// one before (empty when the memory did not hold a group with its parent links).
    pub chain: Vec<Key>,
}

/// A card's 3-bit field in a key.
#[inline(always)]
fn field(k: &Key, c: usize) -> u64 {
    (k[c / 21] >> (3 * (c % 21))) & 7
}

/// The 2-bit place of a free card from its field (1, 2, 4 or 5), and back.
#[inline(always)]
fn place_of(f: u64) -> u64 {
    debug_assert!(matches!(f, 1 | 2 | 4 | 5), "a free card's place");
    f - 1 - (f > 3) as u64
}
const FIELD_OF: [u64; 4] = [1, 2, 4, 5];

/// Slots of a table before it splits into shards.
const SPLIT: usize = 1 << 20;
/// Shards of a large table: `1 << SHARD_BITS`. Each grows on its own, so a growing table holds at most
/// a twelfth more than itself; each stays large enough for huge pages.
const SHARD_BITS: u32 = 4;
/// A shard grows when it is this full, by [`GROWTH`]: the load stays between 0.64 and 0.8.
const MAX_LOAD: f64 = 0.8;
const GROWTH: f64 = 1.25;

/// The set of one group's positions, in the least memory. Within a group every card is either home, on
/// its dealt card (both fixed by the signature) or *free* (in a cell, at a column's bottom, or on one
/// of its two parents); a position is its *places*, 2 bits per free card ([`Frame`]). A slot holds the
/// places and two flags above them, "taken for expansion" and "in use", in as few bytes as they need
/// (8 for 31 free cards, 14 for 52). Open addressing, probed linearly; one shard while small, then
/// `1 << SHARD_BITS`, each grown on its own.
struct Table {
    /// Bits of the places.
    width: u32,
    /// Bytes of a slot.
    stride: usize,
    /// Per shard: its slots' bytes (16 more at the end, so that every slot reads as 16 bytes), its
    /// number of slots, and of positions.
    shards: Vec<Slab>,
    slots: Vec<usize>,
    lens: Vec<usize>,
    bits: u32,
    len: usize,
}

impl Table {
    /// A table for places of `width` bits.
    fn new(width: u32) -> Table {
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
    fn used_bit(&self) -> u128 {
        1 << (self.width + 1)
    }

    #[inline(always)]
    fn taken_bit(&self) -> u128 {
        1 << self.width
    }

    /// The slot `i` of `shard` (places and flags).
    #[inline(always)]
    fn get(shard: &[u8], stride: usize, mask: u128, i: usize) -> u128 {
        let b: [u8; 16] = shard[i * stride..i * stride + 16]
            .try_into()
            .expect("16 bytes");
        u128::from_le_bytes(b) & mask
    }

    #[inline(always)]
    fn set(shard: &mut [u8], stride: usize, i: usize, v: u128) {
        shard[i * stride..i * stride + stride].copy_from_slice(&v.to_le_bytes()[..stride]);
    }

    /// The bits of a slot.
    #[inline(always)]
    fn slot_mask(&self) -> u128 {
        (1 << (self.width + 2)) - 1
    }

    /// A hash of the places. The high word is mixed before it meets the low one: folding it in by a
    /// shift or rotation (as this did) is linear, and a group's places are structured enough that whole
    /// families of positions then share a hash (two cards whose places sit at bits that the fold lines
    /// up, swapped): linear probing went quadratic, and deal 20410 with 1 cell sat for half an hour
    /// rehashing one group.
    #[inline(always)]
    fn hash(places: u128) -> u64 {
        fn mix(mut h: u64) -> u64 {
            h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            h ^ (h >> 31)
        }
        mix(places as u64 ^ mix((places >> 64) as u64 ^ 0x9E37_79B9_7F4A_7C15))
    }

    /// The shard and the home slot of a hash.
    #[inline(always)]
    fn home(&self, h: u64) -> (usize, usize) {
        let s = (h & ((1 << self.bits) - 1)) as usize;
        (s, (((h >> 32) * self.slots[s] as u64) >> 32) as usize)
    }

    /// Ask the processor for the cache lines of the home slot of hash `h` (a hint: the slot is looked
    /// up a moment later, its cache miss meanwhile overlapped with others').
    #[inline(always)]
    fn prefetch(&self, h: u64) {
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
    fn insert(&mut self, places: u128, taken: bool) -> bool {
        self.insert_hashed(places, Self::hash(places), taken)
    }

    /// [`Table::insert`] of `places` whose hash is `h` ([`Table::hash`]).
    #[inline]
    fn insert_hashed(&mut self, places: u128, h: u64, taken: bool) -> bool {
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
    fn place(&mut self, v: u128) {
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
    fn zeroed(&self, n: usize) -> Slab {
        Slab::new(n * self.stride + 16, SLAB_MAPPED)
    }

    /// Place the values of the slots in use of `old` (`n` slots), moved out of the table.
    fn replace_all(&mut self, old: Slab, n: usize) {
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
    fn grow(&mut self, s: usize) {
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
    fn take_next(&mut self, cursor: &mut (usize, usize)) -> Option<u128> {
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

    fn memory(&self) -> usize {
        self.shards.iter().map(|s| s.bytes()).sum()
    }
}

/// Bytes from which a table's shard is mapped from the system (see [`Zeroed`]).
const SLAB_MAPPED: usize = 64 << 10;

/// Zeroed bytes of a table's shard.
type Slab = Zeroed<u8>;

/// A group's coding of positions: its free cards, in card order, the 2-bit place of card `i` of them at
/// bits `2i, 2i + 1` of the code.
struct Frame {
    free: Vec<u8>,
    /// The key with the free cards' fields cleared (the group's fixed part).
    fixed: Key,
    /// Per key word, the bits `3j, 3j + 1` of the fields of free cards, and their number.
    masks: [u64; 3],
    bits: [u32; 3],
    /// Whether the processor has BMI2 (`pext`, `pdep`): then a key is coded a word at a time.
    bmi2: bool,
}

impl Frame {
    /// The frame of the group of `key`.
    fn of(key: &Key) -> Frame {
        let free: Vec<u8> = (0..52u8)
            .filter(|&c| !matches!(field(key, c as usize), 0 | 3))
            .collect();
        let mut fixed = *key;
        let mut masks = [0u64; 3];
        for &c in &free {
            let c = c as usize;
            fixed[c / 21] &= !(7 << (3 * (c % 21)));
            masks[c / 21] |= 3 << (3 * (c % 21));
        }
        #[cfg(target_arch = "x86_64")]
        let bmi2 = std::is_x86_feature_detected!("bmi2");
        #[cfg(not(target_arch = "x86_64"))]
        let bmi2 = false;
        Frame {
            free,
            fixed,
            masks,
            bits: masks.map(|m| m.count_ones()),
            bmi2,
        }
    }

    /// The code of `key`, a position of the group.
    #[inline(always)]
    fn encode(&self, key: &Key) -> u128 {
        #[cfg(target_arch = "x86_64")]
        if self.bmi2 {
            // SAFETY: the processor has BMI2.
            return unsafe { self.encode_bmi2(key) };
        }
        self.encode_cards(key)
    }

    /// [`Frame::encode`] a card at a time.
    fn encode_cards(&self, key: &Key) -> u128 {
        let mut x = 0u128;
        for (i, &c) in self.free.iter().enumerate() {
            x |= (place_of(field(key, c as usize)) as u128) << (2 * i);
        }
        x
    }

    /// [`Frame::encode`] a word at a time: in each field, the place's low bit is `b1 | (b2 & b0)` and
    /// its high bit `b2` (fields 1, 2, 4, 5 give places 0, 1, 2, 3), gathered by `pext`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    unsafe fn encode_bmi2(&self, key: &Key) -> u128 {
        use std::arch::x86_64::_pext_u64;
        let mut x = 0u128;
        let mut at = 0;
        for (w, &k) in key.iter().enumerate() {
            let (b0, b1, b2) = (k & FIELD_LOW, (k >> 1) & FIELD_LOW, (k >> 2) & FIELD_LOW);
            let spread = (b1 | (b2 & b0)) | b2 << 1;
            x |= (_pext_u64(spread, self.masks[w]) as u128) << at;
            at += self.bits[w];
        }
        x
    }

    /// The key of `code`.
    #[inline(always)]
    fn decode(&self, places: u128) -> Key {
        #[cfg(target_arch = "x86_64")]
        if self.bmi2 {
            // SAFETY: the processor has BMI2.
            return unsafe { self.decode_bmi2(places) };
        }
        self.decode_cards(places)
    }

    /// [`Frame::decode`] a card at a time.
    fn decode_cards(&self, x: u128) -> Key {
        let mut k = self.fixed;
        for (i, &c) in self.free.iter().enumerate() {
            let c = c as usize;
            k[c / 21] |= FIELD_OF[((x >> (2 * i)) & 3) as usize] << (3 * (c % 21));
        }
        k
    }

    /// [`Frame::decode`] a word at a time: places 0, 1, 2, 3 (low bit `l`, high bit `h`) give fields with
    /// `b0 = !(l ^ h)`, `b1 = l & !h`, `b2 = h`, spread by `pdep`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    unsafe fn decode_bmi2(&self, x: u128) -> Key {
        use std::arch::x86_64::_pdep_u64;
        let mut k = self.fixed;
        let mut at = 0;
        for (w, kw) in k.iter_mut().enumerate() {
            let part = (x >> at) as u64;
            let spread = _pdep_u64(part, self.masks[w]);
            let free = self.masks[w] & FIELD_LOW;
            let (l, h) = (spread & FIELD_LOW, (spread >> 1) & FIELD_LOW);
            *kw |= (!(l ^ h) & free) | (l & !h) << 1 | h << 2;
            at += self.bits[w];
        }
        k
    }
}

/// A directory of spill files, removed with everything in it when dropped, unless it persists (a
/// resumable search's).
struct SpillDir(PathBuf, bool);

impl SpillDir {
    fn create() -> Result<SpillDir> {
        let base = std::env::temp_dir();
        remove_orphans(&base);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("fcanalyze-layered-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        Ok(SpillDir(dir, false))
    }

    /// The directory `dir` (created if need be, its files left as they are, and not removed when
    /// dropped): a search that can be resumed keeps its files there.
    fn at(dir: &Path) -> Result<SpillDir> {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        Ok(SpillDir(dir.to_path_buf(), true))
    }

    fn file(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.keys"))
    }

    /// The checkpoint of a resumable search ([`Checkpoint`]).
    fn state(&self) -> PathBuf {
        self.0.join(CHECKPOINT_FILE)
    }

    /// A finished layer's seeds, sorted by group, kept for [`chain_to`].
    fn kept(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.seeds"))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if !self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Tests: the checkpoints a resumable search saves before it stops, as if killed (its files stay).
    static KILL_AFTER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: whether that kill comes as the last checkpoint is saved (else after the layer's first
    /// group).
    static KILL_AT_ONCE: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Tests: a disk of this many bytes that holds the seeds' files only.
    static DISK_SIZE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// Tests: a kill after the first group that ends with the kept files forgotten.
    static KILL_ON_FORGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests: the checkpoints within layers a resumable search saves before it stops, as if killed
    /// right after the last one.
    static KILL_WITHIN: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Remove the spill directories of processes that are gone (killed in the middle of a layered proof).
/// Only where `/proc` tells which processes live.
fn remove_orphans(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fcanalyze-layered-"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Bytes free for an unprivileged user on the file system of `path` (`None` where unknown).
fn free_disk(path: &Path) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        /// `struct statvfs` of glibc and musl on 64-bit Linux.
        #[repr(C)]
        struct StatVfs {
            bsize: u64,
            frsize: u64,
            blocks: u64,
            bfree: u64,
            bavail: u64,
            files: u64,
            ffree: u64,
            favail: u64,
            fsid: u64,
            flag: u64,
            namemax: u64,
            spare: [i32; 6],
        }
        extern "C" {
            fn statvfs(path: *const std::ffi::c_char, buf: *mut StatVfs) -> i32;
        }
        if cfg!(not(target_pointer_width = "64")) {
            return None;
        }
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<StatVfs>::uninit();
        // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the layout statvfs fills on 64-bit
        // Linux; it is read only when the call succeeded.
        let st = unsafe {
            if statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
                return None;
            }
            st.assume_init()
        };
        Some(st.bavail.saturating_mul(st.frsize))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("layered proof, {}: {e}", path.display()))
}

/// The seeds a thread of the search found for later layers, per layer a buffer in memory: sorted,
/// deduplicated and written to the layer's file ([`Seeds::append`]) as one sorted run when they reach
/// `flush_keys`, or when their layer is merged.
struct SeedBuf {
    flush_keys: usize,
    buffers: Vec<Vec<Rec>>,
    buffered: usize,
}

impl SeedBuf {
    fn new(flush_keys: usize) -> SeedBuf {
        SeedBuf {
            flush_keys: flush_keys.max(1),
            buffers: vec![Vec::new(); LAYERS],
            buffered: 0,
        }
    }

    /// A seed of `layer`, reached from `parent` (`None`: the start).
    #[inline]
    fn push(&mut self, layer: usize, key: &Key, parent: Option<&Key>, spill: &Spill) -> Result<()> {
        let mut rec = [0u32; 12];
        rec[..5].copy_from_slice(&pack(key));
        rec[5..10].copy_from_slice(&parent.map_or(NO_PARENT, pack));
        let h = group_hash(key);
        rec[10] = (h >> 32) as u32;
        rec[11] = h as u32;
        self.buffers[layer].push(rec);
        self.buffered += 1;
        if self.buffered >= self.flush_keys {
            self.flush(spill)?;
        }
        Ok(())
    }

    /// Every buffer written to its layer's file.
    fn flush(&mut self, spill: &Spill) -> Result<()> {
        for layer in 0..LAYERS {
            self.flush_layer(layer, spill)?;
        }
        Ok(())
    }

    /// The buffer of `layer` sorted and deduplicated (outside the lock), then written.
    fn flush_layer(&mut self, layer: usize, spill: &Spill) -> Result<()> {
        let buf = &mut self.buffers[layer];
        if buf.is_empty() {
            return Ok(());
        }
        self.buffered -= buf.len();
        buf.sort_unstable_by_key(rec_order);
        buf.dedup_by_key(|r| rec_key(r));
        let r = lock(spill).append(layer, buf);
        buf.clear();
        buf.shrink_to(0);
        r
    }

    fn memory(&self) -> usize {
        self.buffers.iter().map(|b| b.capacity() * RECORD).sum()
    }
}

/// Where each sorted run of a layer's file starts, and whether its records are lean ([`LEAN`]).
type Runs = Vec<(u64, bool)>;

/// The spill files, shared by the threads of a search.
type Spill = std::sync::Mutex<Seeds>;

/// The spill files, locked (a thread that panicked holding them ends the search anyway).
fn lock(spill: &Spill) -> std::sync::MutexGuard<'_, Seeds> {
    spill.lock().unwrap_or_else(|e| e.into_inner())
}

/// The seeds of later layers on disk (per layer, a file of sorted runs), and the finished layers' files
/// kept for lines.
struct Seeds {
    dir: SpillDir,
    files: Vec<Option<BufWriter<File>>>,
    /// Per layer: the bytes written to its file, and where each sorted run of it starts and whether its
    /// records are lean ([`LEAN`]).
    written: Vec<u64>,
    runs: Vec<Runs>,
    disk: u64,
    /// Whether finished layers' files are kept for lines, and the most bytes they may take on disk
    /// (past it they are removed and a win comes without a line).
    keep: bool,
    max_kept: u64,
    kept: u64,
    /// Bytes of the last layer's file when it is not kept (removed when the next layer's replaces it).
    transient: u64,
    /// Free disk space a write must leave; a write that would leave less is not made, and the search
    /// ends undecided ([`Budget::Disk`]) instead of failing on a full disk.
    min_free: u64,
    disk_low: bool,
    /// The layer whose file is being merged.
    merging: Option<usize>,
    /// Within that layer (resumable searches): the checkpoint saved at its start, the base of the ones
    /// saved within it ([`Seeds::save_within`]), when it was saved, and the groups finished since and the
    /// groups searched by levels, as the last checkpoint within the layer lists them.
    layer_start: Option<(Checkpoint, Instant)>,
    finished: Vec<Finished>,
    by_levels: Vec<LevelState>,
    /// When the last checkpoint was saved.
    saved_at: Option<Instant>,
    /// Level files are numbered from here (past those a resumed checkpoint lists).
    level_base: u64,
    /// Tests: the simulated disk size ([`DISK_SIZE`]) of the thread that started the search.
    #[cfg(test)]
    disk_size: Option<u64>,
    /// Tests: the checkpoints within layers still to save before the search stops ([`KILL_WITHIN`]).
    #[cfg(test)]
    kill_within: Option<usize>,
}

impl Seeds {
    fn new(max_kept: u64, min_free: u64, dir: SpillDir) -> Result<Seeds> {
        Ok(Seeds {
            dir,
            files: (0..LAYERS).map(|_| None).collect(),
            written: vec![0; LAYERS],
            runs: vec![Vec::new(); LAYERS],
            disk: 0,
            keep: true,
            max_kept,
            kept: 0,
            transient: 0,
            min_free,
            disk_low: false,
            merging: None,
            layer_start: None,
            finished: Vec::new(),
            by_levels: Vec::new(),
            saved_at: None,
            level_base: 0,
            #[cfg(test)]
            disk_size: DISK_SIZE.get(),
            #[cfg(test)]
            kill_within: KILL_WITHIN.get(),
        })
    }

    /// Append `buf` (sorted by [`rec_order`], each key once) to `layer`'s file as one sorted run.
    fn append(&mut self, layer: usize, buf: &[Rec]) -> Result<()> {
        if self.keep
            && self.kept + self.written[layer] + (buf.len() * RECORD) as u64 > self.max_kept
        {
            // The layer's file will not be kept for lines when its turn comes (the kept files only
            // grow): the lines are forgotten now, and the seeds from here on written lean.
            self.forget_kept();
        }
        let lean = !self.keep;
        let bytes = (buf.len() * if lean { LEAN } else { RECORD }) as u64;
        if self.keep && self.kept > 0 && self.short_of(bytes) {
            // The files kept for lines go first: the proof goes on, a win would come without a line.
            self.forget_kept();
        }
        self.disk_low |= self.short_of(bytes);
        if self.disk_low {
            // Dropped: the search is no longer complete and ends undecided at its next check.
            return Ok(());
        }
        let path = self.dir.file(layer);
        if self.files[layer].is_none() {
            // Appending: a resumed search goes on with the runs its checkpoint lists.
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| io_error(&path, e))?;
            self.files[layer] = Some(BufWriter::with_capacity(1 << 20, f));
        }
        let w = self.files[layer].as_mut().expect("an open file");
        write_recs(w, buf, lean).map_err(|e| io_error(&path, e))?;
        self.runs[layer].push((self.written[layer], lean));
        self.written[layer] += bytes;
        self.disk += bytes;
        Ok(())
    }

    /// `layer`'s file, its seeds all written (every thread's buffer of the layer flushed), to be merged
    /// by each thread ([`Merge::open`]); `None` when the layer has no seeds. The file is kept (with the
    /// parents) for [`chain_to`] until the search ends.
    fn open_layer(&mut self, layer: usize) -> Result<Option<LayerFile>> {
        let path = self.dir.file(layer);
        match self.files[layer].take() {
            Some(w) => drop(
                w.into_inner()
                    .map_err(|e| io_error(&path, e.into_error()))?,
            ),
            // Written before a checkpoint this search resumed from.
            None if self.written[layer] > 0 => {}
            None => return Ok(None),
        }
        let size = self.written[layer];
        if self.keep && self.kept + size > self.max_kept {
            self.forget_kept();
        }
        let kept = if self.keep {
            self.kept += size;
            self.dir.kept(layer)
        } else {
            // Replaces the previous layer's file.
            self.disk -= self.transient.min(self.disk);
            self.transient = size;
            self.dir.kept(LAYERS)
        };
        std::fs::rename(&path, &kept).map_err(|e| io_error(&kept, e))?;
        self.merging = Some(layer);
        let starts = std::mem::take(&mut self.runs[layer]);
        let runs = starts
            .iter()
            .enumerate()
            .map(|(i, &(at, lean))| (at, starts.get(i + 1).map_or(size, |r| r.0), lean))
            .collect();
        Ok(Some(LayerFile { path: kept, runs }))
    }

    /// Whether writing `bytes` more would leave less free disk than the search must leave.
    fn short_of(&self, bytes: u64) -> bool {
        #[cfg(test)]
        if let Some(size) = self.disk_size {
            return size.saturating_sub(self.disk) < bytes + self.min_free;
        }
        free_disk(&self.dir.0).is_some_and(|f| f < bytes + self.min_free)
    }

    /// No more room for lines: forget the finished layers' files (a win then comes without a line). The
    /// file of the layer being merged, if kept, becomes the transient one (its merge reads on; a
    /// resumed search finds it there).
    fn forget_kept(&mut self) {
        self.keep = false;
        let mut freed = self.kept;
        if let Some(l) = self.merging {
            let (from, to) = (self.dir.kept(l), self.dir.kept(LAYERS));
            if from.exists() && std::fs::rename(&from, &to).is_ok() {
                self.transient = self.written[l];
                freed -= self.transient.min(freed);
            }
        }
        for l in 0..LAYERS {
            let _ = std::fs::remove_file(self.dir.kept(l));
        }
        self.disk -= freed.min(self.disk);
        self.kept = 0;
    }

    /// The kept seeds of the group of `key`, with their parents, sorted and deduplicated by key; `None`
    /// when the files were not kept.
    fn group_of(&self, key: &Key) -> Result<Option<Vec<Rec>>> {
        if !self.keep {
            return Ok(None);
        }
        let sig = signature(key);
        let mut group = Vec::new();
        let path = self.dir.kept(progress(key));
        if !path.exists() {
            return Ok(None);
        }
        read_recs(&path, |r| {
            if signature(&unpack(&rec_key(r))) == sig {
                group.push(*r);
            }
        })?;
        group.sort_unstable_by_key(rec_key);
        group.dedup_by_key(|r| rec_key(r));
        Ok(Some(group))
    }

    /// Make the files durable (every buffer written before): what a checkpoint lists is then on disk.
    fn sync(&mut self) -> Result<()> {
        for (layer, f) in self.files.iter_mut().enumerate() {
            if let Some(w) = f {
                let path = self.dir.file(layer);
                w.flush().map_err(|e| io_error(&path, e))?;
                w.get_ref().sync_all().map_err(|e| io_error(&path, e))?;
            }
        }
        Ok(())
    }
}

impl Seeds {
    /// Positions of the layer's groups a checkpoint within it lists: the finished groups', and the levels
    /// done of those searched by levels.
    fn credit(&self) -> u64 {
        self.finished.iter().map(|f| f.len).sum::<u64>()
            + self.by_levels.iter().map(|g| g.total).sum::<u64>()
    }

    /// Save a checkpoint within the layer being merged (a resumable search's; the caller wrote its
    /// thread's seed buffers first): the layer's start checkpoint, with the later layers' files as they
    /// are now and the groups [`Seeds::finished`] and [`Seeds::by_levels`] list. A group another thread
    /// is searching is not listed: a resumed search searches it again (its seeds written so far are
    /// written again, and the merge takes each key once).
    fn save_within(&mut self) -> Result<()> {
        let Some((start, at)) = &self.layer_start else {
            return Ok(());
        };
        let mut c = start.clone();
        c.elapsed_ms += at.elapsed().as_secs_f64() * 1e3;
        self.sync()?;
        if self.disk_low {
            // Seeds were dropped: no checkpoint of an incomplete search.
            return Ok(());
        }
        c.layers.retain(|&(l, _, _)| l == c.layer);
        c.layers.extend(
            (c.layer + 1..LAYERS)
                .filter(|&l| self.written[l] > 0)
                .map(|l| (l, self.written[l], self.runs[l].clone())),
        );
        if !self.keep {
            (c.keep, c.kept) = (false, 0);
            c.kept_layers.clear();
        }
        c.disk = self.disk;
        c.finished = self.finished.clone();
        c.by_levels = self.by_levels.clone();
        c.save(&self.dir.state())?;
        self.saved_at = Some(Instant::now());
        #[cfg(test)]
        if let Some(n) = self.kill_within {
            self.kill_within = n.checked_sub(1);
            if n == 1 {
                return Err(Error::Io("killed (test)".into()));
            }
        }
        Ok(())
    }

    /// Whether a checkpoint within the layer is due: the last one was saved `every` ago.
    fn save_due(&self, every: std::time::Duration) -> bool {
        self.layer_start.is_some() && self.saved_at.map_or(true, |t| t.elapsed() >= every)
    }
}

/// The file of a resumable search's checkpoint, in its directory.
const CHECKPOINT_FILE: &str = "checkpoint";
const CHECKPOINT_FORMAT: &str = "fcanalyze-layered-checkpoint/1";

/// A group of the layer being searched, finished since the layer's start: its number in the merge's
/// order (groups of one hash share it), its signature, and its positions.
#[derive(Clone, Debug, PartialEq)]
struct Finished {
    group: u64,
    sig: [u64; 6],
    len: u64,
}

/// A group searched by levels ([`search_by_levels`]) as it stood at the end of a level: its number and
/// signature, the positions of its levels before `cur`, and the files (names in the spill directory) and
/// codes of the level to expand next and of the one before it.
#[derive(Clone, Debug, PartialEq)]
struct LevelState {
    group: u64,
    sig: [u64; 6],
    total: u64,
    cur: (String, u64),
    prev: Option<(String, u64)>,
}

impl LevelState {
    fn files(&self) -> impl Iterator<Item = &(String, u64)> {
        std::iter::once(&self.cur).chain(self.prev.as_ref())
    }
}

fn sig_text(sig: &[u64; 6]) -> String {
    let w: Vec<String> = sig.iter().map(|x| format!("{x:x}")).collect();
    w.join(",")
}

fn parse_sig(text: &str) -> Option<[u64; 6]> {
    let w = text
        .split(',')
        .map(|x| u64::from_str_radix(x, 16).ok())
        .collect::<Option<Vec<u64>>>()?;
    w.try_into().ok()
}

/// What a resumable layered search saves when it starts a layer (the seeds of the layers to come are on
/// disk then, every buffer written): enough to go on from that layer after the process is killed. Within
/// a layer it saves it again ([`Seeds::save_within`]) at the end of each level of a group searched by
/// levels, and when a large group is finished: with the groups finished since the layer's start and the
/// levels reached, so that a killed search loses at most a level of a giant group.
/// Saved as text, `name value...` a line, written to a temporary file and renamed over the last one.
#[derive(Clone, Debug, PartialEq)]
struct Checkpoint {
    /// What the search is: the start position, the cells, and the bounds that shape the files.
    identity: String,
    layer: usize,
    done: u64,
    expanded: u64,
    elapsed_ms: f64,
    peak_positions: u64,
    peak_bytes: usize,
    peak_parts: [usize; 5],
    peak_disk: u64,
    keep: bool,
    kept: u64,
    transient: u64,
    disk: u64,
    /// Per layer to come with seeds: its file's bytes and the offsets of its sorted runs (and whether
    /// each is lean).
    layers: Vec<(usize, u64, Runs)>,
    /// The finished layers whose seeds are kept for lines (when `keep`).
    kept_layers: Vec<usize>,
    /// Within the layer: the groups finished, and those searched by levels (`expanded` does not count
    /// their positions).
    finished: Vec<Finished>,
    by_levels: Vec<LevelState>,
}

fn identity(
    root: &Key,
    ncells: usize,
    max_memory: Option<usize>,
    flush: usize,
    b: &Bounds,
) -> String {
    let words: Vec<String> = pack(root).iter().map(|w| format!("{w:08x}")).collect();
    format!(
        "{} cells={ncells} memory={max_memory:?} flush={flush} kept={} stack={}",
        words.join(""),
        b.max_kept,
        b.max_stack_bytes
    )
}

impl Checkpoint {
    fn of(s: &Seeds, layer: usize, t: &Totals, identity: &str, elapsed_ms: f64) -> Checkpoint {
        Checkpoint {
            identity: identity.to_string(),
            layer,
            done: t.done,
            expanded: t.expanded - s.credit(),
            elapsed_ms,
            peak_positions: t.res.peak_positions,
            peak_bytes: t.res.peak_bytes,
            peak_parts: t.res.peak_parts,
            peak_disk: t.res.peak_disk,
            keep: s.keep,
            kept: s.kept,
            transient: s.transient,
            disk: s.disk,
            // The layers to come (a finished layer's file is its kept seeds, or gone).
            layers: (layer..LAYERS)
                .filter(|&l| s.written[l] > 0)
                .map(|l| (l, s.written[l], s.runs[l].clone()))
                .collect(),
            kept_layers: (0..layer).filter(|&l| s.keep && s.written[l] > 0).collect(),
            finished: s.finished.clone(),
            by_levels: s.by_levels.clone(),
        }
    }

    fn to_text(&self) -> String {
        let mut t = format!("{CHECKPOINT_FORMAT}\nidentity {}\n", self.identity);
        let parts: Vec<String> = self.peak_parts.iter().map(|p| p.to_string()).collect();
        t += &format!(
            "layer {}\ndone {}\nexpanded {}\nelapsed_ms {}\npeak {} {} {} {}\n",
            self.layer,
            self.done,
            self.expanded,
            self.elapsed_ms,
            self.peak_positions,
            self.peak_bytes,
            self.peak_disk,
            parts.join(" ")
        );
        t += &format!(
            "files {} {} {} {}\n",
            self.keep as u8, self.kept, self.transient, self.disk
        );
        for (l, written, runs) in &self.layers {
            let runs: Vec<String> = runs
                .iter()
                .map(|&(r, lean)| format!("{r}{}", if lean { "k" } else { "" }))
                .collect();
            t += &format!("seeds {l} {written} {}\n", runs.join(" "));
        }
        for l in &self.kept_layers {
            t += &format!("kept {l}\n");
        }
        for f in &self.finished {
            t += &format!("finished {} {} {}\n", f.group, sig_text(&f.sig), f.len);
        }
        for g in &self.by_levels {
            let (prev, prev_len) = g.prev.clone().unwrap_or(("-".into(), 0));
            t += &format!(
                "levels {} {} {} {} {} {prev} {prev_len}\n",
                g.group,
                sig_text(&g.sig),
                g.total,
                g.cur.0,
                g.cur.1
            );
        }
        t + "end\n"
    }

    /// The checkpoint in `text`; `None` unless it is whole (a torn or foreign file is not resumed).
    fn parse(text: &str) -> Option<Checkpoint> {
        let mut lines = text.lines();
        if lines.next()? != CHECKPOINT_FORMAT {
            return None;
        }
        let identity = lines.next()?.strip_prefix("identity ")?.to_string();
        let mut c = Checkpoint {
            identity,
            layer: 0,
            done: 0,
            expanded: 0,
            elapsed_ms: 0.0,
            peak_positions: 0,
            peak_bytes: 0,
            peak_parts: [0; 5],
            peak_disk: 0,
            keep: false,
            kept: 0,
            transient: 0,
            disk: 0,
            layers: vec![],
            kept_layers: vec![],
            finished: vec![],
            by_levels: vec![],
        };
        // A level's file: a name of its own in the directory.
        let file = |name: &str, len: u64| Levels::number(name).map(|_| (name.to_string(), len));
        let num = |x: Option<&str>| x?.parse::<u64>().ok();
        for line in lines {
            let mut w = line.split(' ');
            match w.next()? {
                "layer" => c.layer = num(w.next())? as usize,
                "done" => c.done = num(w.next())?,
                "expanded" => c.expanded = num(w.next())?,
                "elapsed_ms" => c.elapsed_ms = w.next()?.parse().ok()?,
                "peak" => {
                    c.peak_positions = num(w.next())?;
                    c.peak_bytes = num(w.next())? as usize;
                    c.peak_disk = num(w.next())?;
                    for p in &mut c.peak_parts {
                        *p = num(w.next())? as usize;
                    }
                }
                "files" => {
                    c.keep = num(w.next())? == 1;
                    c.kept = num(w.next())?;
                    c.transient = num(w.next())?;
                    c.disk = num(w.next())?;
                }
                "seeds" => {
                    let l = num(w.next())? as usize;
                    let written = num(w.next())?;
                    // A lean run's offset ends in `k` (its records are keys alone).
                    let runs = w
                        .map(|r| {
                            let lean = r.ends_with('k');
                            Some((r.trim_end_matches('k').parse().ok()?, lean))
                        })
                        .collect::<Option<Runs>>()?;
                    if l >= LAYERS || runs.is_empty() || runs.iter().any(|&(r, _)| r >= written) {
                        return None;
                    }
                    c.layers.push((l, written, runs));
                }
                "kept" => {
                    let l = num(w.next())? as usize;
                    if l >= c.layer {
                        return None;
                    }
                    c.kept_layers.push(l);
                }
                "finished" => c.finished.push(Finished {
                    group: num(w.next())?,
                    sig: parse_sig(w.next()?)?,
                    len: num(w.next())?,
                }),
                "levels" => {
                    let group = num(w.next())?;
                    let sig = parse_sig(w.next()?)?;
                    let total = num(w.next())?;
                    let cur = file(w.next()?, num(w.next())?)?;
                    let (prev, prev_len) = (w.next()?, num(w.next())?);
                    let prev = if prev == "-" {
                        None
                    } else {
                        Some(file(prev, prev_len)?)
                    };
                    c.by_levels.push(LevelState {
                        group,
                        sig,
                        total,
                        cur,
                        prev,
                    });
                }
                "end" => return (c.layer < LAYERS).then_some(c),
                _ => return None,
            }
        }
        None
    }

    /// Save to `path` atomically.
    fn save(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(self.to_text().as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Some(dir) = path.parent() {
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| io_error(path, e))
    }

    /// The checkpoint saved in `dir` for the search `identity`, its files brought back to what it lists:
    /// the layer it was saved at gets its file back (the merge renames it), later layers' files are cut
    /// back to their listed bytes, files it does not list are removed. Lines are forgotten if a kept
    /// layer is gone (the search went past the disk budget for lines after the checkpoint). `None` (and
    /// the directory emptied) when there is none, or it is for another search or unreadable.
    fn load(dir: &SpillDir, identity: &str) -> Result<Option<Checkpoint>> {
        let mut found = std::fs::read_to_string(dir.state())
            .ok()
            .and_then(|t| Checkpoint::parse(&t))
            .filter(|c| c.identity == identity);
        if let Some(c) = found.as_mut() {
            let current = dir.file(c.layer);
            let listed = c.layers.iter().any(|(l, _, _)| *l == c.layer);
            if listed && !current.exists() {
                for renamed in [dir.kept(c.layer), dir.kept(LAYERS)] {
                    if renamed.exists() {
                        std::fs::rename(&renamed, &current).map_err(|e| io_error(&current, e))?;
                        break;
                    }
                }
            }
            let short = |l: usize, written: u64| {
                std::fs::metadata(dir.file(l)).map_or(true, |m| m.len() < written)
            };
            if c.layers.iter().any(|&(l, written, _)| short(l, written)) {
                // Its files are gone (the checkpoint came to another machine without them, say) or cut
                // short: the search starts afresh, as from a torn checkpoint.
                found = None;
            }
        }
        if let Some(c) = found.as_mut() {
            // A group whose level files are gone or cut short is searched again from its seeds.
            c.by_levels.retain(|g| {
                g.files().all(|(name, len)| {
                    std::fs::metadata(dir.0.join(name)).is_ok_and(|m| m.len() == len * CODE as u64)
                })
            });
            if c.keep && c.kept_layers.iter().any(|&l| !dir.kept(l).exists()) {
                c.keep = false;
                c.disk -= c.kept.min(c.disk);
                c.kept = 0;
                c.kept_layers.clear();
            }
            if c.keep {
                // Every finished layer kept on disk (a checkpoint saved after an earlier resumption
                // may list only the layers finished since).
                c.kept_layers = (0..c.layer).filter(|&l| dir.kept(l).exists()).collect();
            }
        }
        let entries = std::fs::read_dir(&dir.0).map_err(|e| io_error(&dir.0, e))?;
        for e in entries.flatten() {
            let path = e.path();
            let keep = found.as_ref().is_some_and(|c| {
                path == dir.state()
                    || c.layers.iter().any(|(l, _, _)| path == dir.file(*l))
                    || (c.keep && c.kept_layers.iter().any(|&l| path == dir.kept(l)))
                    || c.by_levels
                        .iter()
                        .any(|g| g.files().any(|(name, _)| path == dir.0.join(name)))
            });
            if !keep {
                let _ = std::fs::remove_file(&path);
            }
        }
        let Some(c) = found else {
            return Ok(None);
        };
        for (l, written, _) in &c.layers {
            let path = dir.file(*l);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| io_error(&path, e))?;
            f.set_len(*written).map_err(|e| io_error(&path, e))?;
        }
        Ok(Some(c))
    }
}

/// One sorted run of a layer's file, being read: the bytes `pos..end` still to read, the bytes of its
/// records, and a chunk read.
struct Run {
    pos: u64,
    end: u64,
    width: usize,
    buf: Vec<u8>,
    at: usize,
}

/// A seed's place in the merge: its order, and its run.
type Head = std::cmp::Reverse<((u32, u32, [u32; 5]), usize)>;

/// The k-way merge of a layer's sorted runs: its seeds group by group, each key once.
#[derive(Default)]
struct Merge {
    file: Option<File>,
    path: PathBuf,
    chunk: usize,
    runs: Vec<Run>,
    heap: std::collections::BinaryHeap<Head>,
    /// The last key given (a key may be in several runs).
    last: Option<[u32; 5]>,
}

/// A layer's file to merge: its path and the bytes of each sorted run (and whether it is lean).
struct LayerFile {
    path: PathBuf,
    runs: Vec<(u64, u64, bool)>,
}

impl Merge {
    /// The merge of `file`'s runs, with a handle and read buffers of its own (each thread of the search
    /// merges the whole file and searches its share of the groups).
    fn open(file: &LayerFile) -> Result<Merge> {
        let path = &file.path;
        // Each run reads its part in chunks (smaller when there are many).
        let chunk = ((16 << 20) / file.runs.len().max(1)).clamp(RECORD * 64, 1 << 16);
        let mut m = Merge {
            file: Some(File::open(path).map_err(|e| io_error(path, e))?),
            path: path.clone(),
            chunk,
            ..Merge::default()
        };
        for &(pos, end, lean) in &file.runs {
            m.runs.push(Run {
                pos,
                end,
                width: if lean { LEAN } else { RECORD },
                buf: Vec::new(),
                at: 0,
            });
        }
        for i in 0..m.runs.len() {
            if let Some(r) = m.next_of(i)? {
                m.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
        }
        Ok(m)
    }

    /// The next record of run `i`.
    fn next_of(&mut self, i: usize) -> Result<Option<Rec>> {
        let run = &mut self.runs[i];
        if run.at == run.buf.len() {
            if run.pos == run.end {
                return Ok(None);
            }
            let n = (run.end - run.pos).min((self.chunk / run.width * run.width) as u64) as usize;
            run.buf.resize(n, 0);
            let f = self.file.as_mut().expect("an open file");
            let path = &self.path;
            std::io::Seek::seek(f, std::io::SeekFrom::Start(run.pos))
                .and_then(|_| f.read_exact(&mut run.buf))
                .map_err(|e| io_error(path, e))?;
            run.pos += n as u64;
            run.at = 0;
        }
        let bytes = &run.buf[run.at..run.at + run.width];
        run.at += run.width;
        Ok(Some(decode_rec(bytes)))
    }

    /// Bytes of the read buffers.
    fn memory(&self) -> usize {
        self.runs.len() * self.chunk
    }

    /// The group hash of the next seed, if any.
    fn peek_hash(&self) -> Option<(u32, u32)> {
        self.heap
            .peek()
            .map(|&std::cmp::Reverse(((a, b, _), _))| (a, b))
    }

    /// The next seed key of group hash `h` (in key order, each key once), `None` past the last one.
    fn next_in_group(&mut self, h: (u32, u32)) -> Result<Option<[u32; 5]>> {
        while let Some(&std::cmp::Reverse(((a, b, key), i))) = self.heap.peek() {
            if (a, b) != h {
                return Ok(None);
            }
            self.heap.pop();
            if let Some(r) = self.next_of(i)? {
                self.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
            if self.last != Some(key) {
                self.last = Some(key);
                return Ok(Some(key));
            }
        }
        Ok(None)
    }
}

/// The seed in `bytes`, a record of [`RECORD`] bytes or a lean one ([`LEAN`]: its group hash computed
/// again, no parent).
fn decode_rec(bytes: &[u8]) -> Rec {
    let mut rec = [0u32; 12];
    for (i, x) in rec.iter_mut().enumerate().take(bytes.len() / 4) {
        *x = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    }
    if bytes.len() == LEAN {
        rec[5..10].copy_from_slice(&NO_PARENT);
        let h = group_hash(&unpack(&rec_key(&rec)));
        rec[10] = (h >> 32) as u32;
        rec[11] = h as u32;
    }
    rec
}

/// `recs` written as records of [`RECORD`] bytes, or lean ones ([`LEAN`]).
fn write_recs(w: &mut impl Write, recs: &[Rec], lean: bool) -> std::io::Result<()> {
    let mut bytes = [0u8; RECORD];
    let width = if lean { LEAN } else { RECORD };
    for r in recs {
        for (i, x) in r.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        w.write_all(&bytes[..width])?;
    }
    Ok(())
}

/// Each record of the file at `path`, in order.
fn read_recs(path: &Path, mut each: impl FnMut(&Rec)) -> Result<()> {
    let f = File::open(path).map_err(|e| io_error(path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut bytes = [0u8; RECORD];
    loop {
        match r.read_exact(&mut bytes) {
            Ok(()) => each(&decode_rec(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io_error(path, e)),
        }
    }
    Ok(())
}

/// Bytes a position costs in [`group_path`]'s map (key, parent key, hash table overhead).
const PATH_BYTES: usize = 100;

/// A shortest path within one group (one layer, one signature) from the group's seeds `group` (sorted by
/// key) to `target`: the keys from a seed to `target`, and the position that seed was reached from
/// (`None` for the start). `None` when `target` is not reached, or the map outgrows `max_memory`.
fn group_path(
    rules: &Rules,
    group: &[Rec],
    target: &Key,
    max_memory: Option<usize>,
) -> Option<(Vec<Key>, Option<Key>)> {
    let layer = progress(target);
    // Each position found, with the one it was found from (the seeds from themselves).
    let mut from: HashMap<Key, Key> = HashMap::new();
    let mut queue: VecDeque<Key> = VecDeque::new();
    for r in group {
        let k = unpack(&rec_key(r));
        from.insert(k, k);
        queue.push_back(k);
    }
    let mut kids = Vec::new();
    while !from.contains_key(target) {
        let key = queue.pop_front()?;
        rules.children(&rules.decode(&key), &mut kids);
        for k in &kids {
            if progress(k) == layer && !from.contains_key(k) {
                from.insert(*k, key);
                queue.push_back(*k);
            }
        }
        if max_memory.is_some_and(|m| from.len() * PATH_BYTES > m) {
            return None;
        }
    }
    let mut path = vec![*target];
    loop {
        let last = *path.last().expect("a key");
        let prev = from[&last];
        if prev == last {
            break;
        }
        path.push(prev);
    }
    path.reverse();
    let seed = pack(&path[0]);
    let i = group.binary_search_by_key(&seed, rec_key).ok()?;
    let parent = rec_parent(&group[i]);
    Some((path, (parent != NO_PARENT).then(|| unpack(&parent))))
}

/// The chain of keys from the start to `target` (a reached position), then `tail` if any: each group on
/// the way is searched again from its kept seeds. Empty when a group with its parent links does not fit
/// in `max_memory`.
fn chain_to(
    rules: &Rules,
    seeds: &Seeds,
    target: Key,
    tail: Option<Key>,
    max_memory: Option<usize>,
) -> Result<Vec<Key>> {
    let mut back: Vec<Key> = tail.into_iter().collect();
    let mut target = target;
    loop {
        let Some(group) = seeds.group_of(&target)? else {
            return Ok(vec![]);
        };
        let Some((path, parent)) = group_path(rules, &group, &target, max_memory) else {
            return Ok(vec![]);
        };
        back.extend(path.iter().rev());
        let Some(parent) = parent else {
            break;
        };
        target = parent;
    }
    back.reverse();
    Ok(back)
}

/// How a layered proof runs besides its limits: its memory, its write buffers, its threads, and where
/// its files go. [`LayeredConfig::default`]: no memory bound, buffers of [`flush_keys`]`(None)` keys,
/// one thread, spill files in the system's temporary directory (`TMPDIR`), not resumable.
#[derive(Clone, Debug)]
pub struct LayeredConfig {
    /// Bytes held in memory at most (running out is undecided, [`Budget::Positions`]).
    pub max_memory: Option<usize>,
    /// Keys buffered for later layers before they are written to disk; `None`:
    /// [`flush_keys`]`(max_memory)`.
    pub flush_keys: Option<usize>,
    /// Threads searching each layer: each group of a layer goes to the first thread free for it, and
    /// the memory is shared out between them. The count is the same whatever the threads; a win may
    /// be another one, found after other positions.
    pub threads: usize,
    /// A directory of the search's own, which makes it resumable: at the start of every layer it
    /// saves a checkpoint there, and a search of the same start position, cells and memory started
    /// with the same directory goes on from the last checkpoint instead of the start (after its
    /// process was killed, say). The directory is removed when the search decides (it stays after an
    /// error or a budget run out).
    pub checkpoint_dir: Option<PathBuf>,
}

impl Default for LayeredConfig {
    fn default() -> Self {
        LayeredConfig {
            max_memory: None,
            flush_keys: None,
            threads: 1,
            checkpoint_dir: None,
        }
    }
}

/// Search every position reachable from `layout` with `ncells` free cells, layer by layer, within
/// `limits` and as `config` says.
pub fn prove_layered(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    config: &LayeredConfig,
) -> Result<LayeredResult> {
    let max_memory = config.max_memory;
    let flush = config.flush_keys.unwrap_or_else(|| flush_keys(max_memory));
    let bounds = Bounds {
        threads: config.threads,
        ..bounds(max_memory)
    };
    let dir = config.checkpoint_dir.as_deref();
    search(layout, ncells, limits, max_memory, flush, bounds, dir)
}

/// Keys buffered before a flush within `max_memory`: the write buffers take at most an eighth of it
/// (twice that with the slack of growing vectors).
pub fn flush_keys(max_memory: Option<usize>) -> usize {
    max_memory.map_or(FLUSH_KEYS, |m| (m / 8 / RECORD).clamp(1 << 12, FLUSH_KEYS))
}

/// Whether `dir` holds the checkpoint of a resumable layered search.
pub fn has_checkpoint(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(CHECKPOINT_FILE))
        .ok()
        .and_then(|t| Checkpoint::parse(&t))
        .is_some()
}

fn bounds(max_memory: Option<usize>) -> Bounds {
    Bounds {
        // The files kept for lines take at most twice the memory budget on disk.
        max_kept: max_memory.map_or(u64::MAX, |m| 2 * m as u64),
        // The stack of positions to expand takes at most a sixteenth of it.
        max_stack_bytes: max_memory.map_or(usize::MAX, |m| m / 16),
        // A group's set goes over to levels past MAX_SET_LEN positions, or when the memory runs out.
        max_set_len: MAX_SET_LEN,
        // A group searched by levels sorts chunks of a quarter of it (64 Mi codes, 1 GiB, without).
        level_chunk: max_memory.map_or(1 << 26, |m| (m / 4 / CODE).max(1 << 16)),
        min_free_disk: MIN_FREE_DISK,
        threads: 1,
        save_every_ms: 60_000,
    }
}

/// The bounds of a layered search besides its limits and memory.
#[derive(Clone, Copy)]
struct Bounds {
    /// Bytes of finished layers' files kept for lines.
    max_kept: u64,
    /// Bytes of the stack of positions to expand; positions past it wait in the group's set, untaken,
    /// and are found again by a scan of the set.
    max_stack_bytes: usize,
    /// Positions of a group's set past which the group is searched again by levels
    /// ([`search_by_levels`]), as when the memory runs out (tests set it low; it does not change the
    /// count).
    max_set_len: usize,
    /// Codes a group searched by levels sorts in memory before it writes them as a run.
    level_chunk: usize,
    /// Free disk space the spill files must leave ([`Budget::Disk`]).
    min_free_disk: u64,
    /// Threads searching each layer's groups (the memory budget is shared out between them).
    threads: usize,
    /// A resumable search saves a checkpoint within a layer after a finished group when the last one is
    /// this old (and at the end of each level of a group searched by levels).
    save_every_ms: u64,
}

/// Positions of a group's set past which the group is searched again by levels. A set of hundreds of
/// millions of positions is slow (every insertion a cache miss, and scans of the whole set for the
/// positions left waiting when the stack was full), and a group that outgrows the memory loses its
/// set's work: deal 982's largest group of layer 53 with 2 cells held its set for 20 minutes before it
/// outgrew 10 GB and was searched again by levels. Up to this size the set is as fast as the levels
/// (deal 20410 with 1 cell, largest group 25 million positions: 737 s with sets only and 10 GB, 754 s
/// with this bound at 20 million and 4 GB), and a group that passes it loses at most this many
/// positions' work.
const MAX_SET_LEN: usize = 1 << 25;

/// The free disk space a layered proof leaves: a write that would leave less ends the proof undecided.
const MIN_FREE_DISK: u64 = 2 << 30;

/// How the search of one group ended.
enum GroupEnd {
    /// Every position of the group was expanded: their number.
    Done(usize),
    /// A won or sorted position, or one whose child is won (`tail`); the group's positions so far.
    Won {
        target: Key,
        tail: Option<Key>,
        len: usize,
    },
    Out(Budget),
    /// Another thread ended the layer first.
    Stopped,
}

/// What a thread's search of its groups needs from the whole search.
struct Cx<'a> {
    rules: &'a Rules,
    /// This thread's seeds of later layers, and the files they go to.
    seeds: &'a mut SeedBuf,
    spill: &'a Spill,
    /// The thread (its files are named after it).
    thread: usize,
    limits: Limits,
    /// This thread's share of the memory budget.
    max_memory: Option<usize>,
    max_stack_bytes: usize,
    max_set_len: usize,
    /// Codes a group searched by levels sorts in memory before it writes them as a run.
    level_chunk: usize,
    /// The least time between two checkpoints within a layer after finished groups.
    save_every: std::time::Duration,
    start: Instant,
    layer: usize,
    /// Positions of the groups finished before this layer.
    before: u64,
    /// Positions of this layer's groups finished, by every thread.
    layer_done: &'a AtomicU64,
    /// Set when a thread ends the layer early (a win, a budget, an error): the others stop.
    stop: &'a AtomicBool,
    /// The number of the layer's next group no thread has claimed yet.
    next_group: &'a AtomicU64,
    /// Positions of finished groups when the group being searched started.
    done: u64,
    expanded: u64,
    /// Bytes of the layer's merge (its read buffers).
    merge_bytes: usize,
    kids: Vec<Key>,
    /// Per child of the position expanded: its layer, and when in the layer its code and hash.
    codes: Vec<(usize, u128, u64)>,
    res: LayeredResult,
}

/// Search the group of `first` (a seed), its other seeds given by `more`: depth first from each seed,
/// with a stack of at most [`Cx::max_stack_bytes`]; positions that find the stack full wait in the set
/// untaken, and scans of the set take them until none is left. When the set outgrows the memory, the
/// group is searched again by levels ([`search_by_levels`]) from the seeds taken so far and the rest.
fn search_group(
    cx: &mut Cx,
    group: u64,
    first: Key,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let frame = Frame::of(&first);
    let sig = signature(&first);
    let mut table = Table::new(2 * frame.free.len() as u32);
    let max_stack = (cx.max_stack_bytes / std::mem::size_of::<u128>()).max(1);
    let mut stack: Vec<u128> = Vec::new();
    // Positions in the set not yet taken for expansion.
    let mut waiting = 0usize;
    let mut cursor = (0, 0);
    let mut next = Some(first);
    // The seeds taken that were not in the set yet: with the rest, they reach the whole group.
    let mut taken: Vec<u128> = Vec::new();
    loop {
        // The next position to expand: from the stack, else the next seed, else one left waiting.
        let code = if let Some(c) = stack.pop() {
            c
        } else if let Some(seed) = match next.take() {
            Some(s) => Some(s),
            None => more()?,
        } {
            debug_assert_eq!(signature(&seed), sig, "a seed of another group");
            let code = frame.encode(&seed);
            if !table.insert(code, true) {
                continue;
            }
            taken.push(code);
            if cx.rules.is_sorted(&seed) {
                return Ok(GroupEnd::Won {
                    target: seed,
                    tail: None,
                    len: table.len,
                });
            }
            code
        } else if waiting > 0 {
            match table.take_next(&mut cursor) {
                Some(c) => {
                    waiting -= 1;
                    c
                }
                None => {
                    // The table grew behind the cursor: scan again.
                    cursor = (0, 0);
                    continue;
                }
            }
        } else {
            return Ok(GroupEnd::Done(table.len));
        };
        let key = frame.decode(code);
        let p = cx.rules.decode(&key);
        cx.rules.children(&p, &mut cx.kids);
        // The codes of the children in this layer, their home slots prefetched: the lookups below then
        // wait for one cache miss at a time less.
        cx.codes.clear();
        for k in &cx.kids {
            let l = progress(k);
            if l == cx.layer {
                let c = frame.encode(k);
                let h = Table::hash(c);
                table.prefetch(h);
                cx.codes.push((l, c, h));
            } else {
                cx.codes.push((l, 0, 0));
            }
        }
        for (k, &(l, c, h)) in cx.kids.iter().zip(&cx.codes) {
            if *k == [0; 3] {
                return Ok(GroupEnd::Won {
                    target: key,
                    tail: Some(*k),
                    len: table.len,
                });
            }
            debug_assert!(l >= cx.layer, "a move lowered the progress");
            if l > cx.layer {
                cx.seeds.push(l, k, Some(&key), cx.spill)?;
                continue;
            }
            debug_assert_eq!(
                signature(k),
                sig,
                "a move within a layer changed the signature"
            );
            let room = stack.len() < max_stack;
            if table.insert_hashed(c, h, room) {
                if cx.rules.is_sorted(k) {
                    return Ok(GroupEnd::Won {
                        target: *k,
                        tail: None,
                        len: table.len,
                    });
                }
                if room {
                    if stack.len() == stack.capacity() {
                        // Grown within its bound.
                        let more = stack.len().max(64).min(max_stack - stack.len());
                        stack.reserve_exact(more);
                    }
                    stack.push(c);
                } else {
                    waiting += 1;
                }
            }
        }
        cx.expanded += 1;
        if table.len > cx.max_set_len {
            return search_by_levels(cx, (group, sig), &frame, taken, more);
        }
        if cx.expanded & 4095 == 0 {
            let held = (stack.capacity() + taken.capacity()) * std::mem::size_of::<u128>();
            match cx.check(table.len, table.memory(), held) {
                Check::Go => {}
                Check::Out(b) => return Ok(GroupEnd::Out(b)),
                Check::Stopped => return Ok(GroupEnd::Stopped),
                Check::OverMemory => {
                    drop(table);
                    drop(stack);
                    return search_by_levels(cx, (group, sig), &frame, taken, more);
                }
            }
        }
    }
}

/// What [`Cx::check`] found.
enum Check {
    Go,
    /// The memory budget is passed (a group's set then goes over to levels).
    OverMemory,
    Out(Budget),
    /// Another thread ended the layer.
    Stopped,
}

impl Cx<'_> {
    /// Group `group` of signature `sig` is finished, with `len` positions: in a resumable search, a
    /// checkpoint within the layer lists it when one is due (the group's seeds written first).
    fn finished(&mut self, group: u64, sig: [u64; 6], len: usize) -> Result<()> {
        if !lock(self.spill).save_due(self.save_every) {
            return Ok(());
        }
        self.seeds.flush(self.spill)?;
        let mut s = lock(self.spill);
        if !s.finished.iter().any(|f| (f.group, f.sig) == (group, sig)) {
            s.finished.push(Finished {
                group,
                sig,
                len: len as u64,
            });
        }
        s.save_within()
    }

    /// The periodic check of a group's search, `len` positions into the group, its positions holding
    /// `set_bytes` and its stack (or other working lists) `held_bytes`: the counts and peaks brought up
    /// to date, then the budgets in order: positions, disk, memory, time; then the other threads.
    fn check(&mut self, len: usize, set_bytes: usize, held_bytes: usize) -> Check {
        let (disk, disk_low) = {
            let s = lock(self.spill);
            (s.disk, s.disk_low)
        };
        let res = &mut self.res;
        res.positions = self.done + len as u64;
        if res.positions >= self.limits.max_positions {
            return Check::Out(Budget::Positions);
        }
        let parts = [
            set_bytes,
            held_bytes,
            self.merge_bytes,
            self.seeds.memory(),
            len,
        ];
        let bytes = parts[..4].iter().sum();
        if bytes > res.peak_bytes {
            res.peak_bytes = bytes;
            res.peak_parts = parts;
        }
        res.peak_disk = res.peak_disk.max(disk);
        if disk_low {
            return Check::Out(Budget::Disk);
        }
        if self.max_memory.is_some_and(|m| bytes > m) {
            return Check::OverMemory;
        }
        if self.limits.out_of_time(self.start) {
            return Check::Out(Budget::Time);
        }
        if self.stop.load(Ordering::Relaxed) {
            return Check::Stopped;
        }
        Check::Go
    }
}

/// Search a group breadth first from its seeds (`seeds`, the rest given by `more`), level by level: the
/// positions one move from level `t` lie in levels `t - 1`, `t` and `t + 1`, because every move within a
/// group can be undone by a move within the group (no card goes home or leaves its dealt card there; a
/// card or run goes back where it came from, the free cells and empty columns allowing as many cards back
/// as forth). So level `t + 1` is what level `t` reaches, less levels `t` and `t - 1`, and the group's
/// count is the sum of its levels. The levels live on disk as sorted files ([`Level`]): level `t` is read
/// in order, the codes it reaches are sorted in chunks of [`Cx::level_chunk`] and written as runs, and
/// the runs are merged into level `t + 1`, less the codes of levels `t` and `t - 1`, read alongside. So
/// the memory holds one chunk whatever the size of the group, and the disk three levels and the runs.
/// Slower than the set, for the groups the set does not hold in memory.
fn search_by_levels(
    cx: &mut Cx,
    (group, sig): (u64, [u64; 6]),
    frame: &Frame,
    mut chunk: Vec<u128>,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let mut levels = Levels::of(cx);
    let max_chunk = cx.level_chunk.max(1);
    let mut runs: Vec<Level> = Vec::new();
    while let Some(seed) = more()? {
        push_code(&mut chunk, frame.encode(&seed), max_chunk);
        if chunk.len() >= max_chunk {
            runs.push(levels.write_run(&mut chunk)?);
        }
    }
    let none = Level::empty();
    let Some(cur) = levels.merge(runs, &mut chunk, &none, &none)? else {
        return Ok(GroupEnd::Out(Budget::Disk));
    };
    by_levels(cx, group, sig, frame, levels, chunk, cur, Level::empty(), 0)
}

/// The search by levels of a group from `state` (saved in a checkpoint within its layer), the group's
/// seeds given by `more` passed over (its levels hold them).
fn resume_by_levels(
    cx: &mut Cx,
    state: LevelState,
    frame: &Frame,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    while more()?.is_some() {}
    let mut levels = Levels::of(cx);
    let level = |(name, len): (String, u64)| Level {
        path: Some(levels.dir.join(name)),
        len: len as usize,
    };
    let cur = level(state.cur);
    let prev = state.prev.map_or(Level::empty(), level);
    levels.disk = ((cur.len + prev.len) * CODE) as u64;
    let total = state.total as usize;
    by_levels(
        cx,
        state.group,
        state.sig,
        frame,
        levels,
        Vec::new(),
        cur,
        prev,
        total,
    )
}

/// The levels of group `group` (signature `sig`) from `cur`, `prev` the level before it and `total` the
/// positions of the levels before `cur` ([`search_by_levels`]). In a resumable search, the end of each
/// level saves a checkpoint that lists the two levels the next one starts from, and the end of the group
/// one that lists it finished.
#[allow(clippy::too_many_arguments)]
fn by_levels(
    cx: &mut Cx,
    group: u64,
    sig: [u64; 6],
    frame: &Frame,
    mut levels: Levels,
    mut chunk: Vec<u128>,
    mut cur: Level,
    mut prev: Level,
    mut total: usize,
) -> Result<GroupEnd> {
    let max_chunk = cx.level_chunk.max(1);
    let mut counted = 0u64;
    while cur.len > 0 {
        total += cur.len;
        let mut runs: Vec<Level> = Vec::new();
        let mut read = cur.read()?;
        let mut left = cur.len;
        while let Some(code) = read.next_code()? {
            left -= 1;
            let key = frame.decode(code);
            if cx.rules.is_sorted(&key) {
                return Ok(GroupEnd::Won {
                    target: key,
                    tail: None,
                    len: total,
                });
            }
            let p = cx.rules.decode(&key);
            cx.rules.children(&p, &mut cx.kids);
            for k in &cx.kids {
                if *k == [0; 3] {
                    return Ok(GroupEnd::Won {
                        target: key,
                        tail: Some(*k),
                        len: total,
                    });
                }
                let l = progress(k);
                if l > cx.layer {
                    cx.seeds.push(l, k, Some(&key), cx.spill)?;
                    continue;
                }
                push_code(&mut chunk, frame.encode(k), max_chunk);
            }
            if chunk.len() >= max_chunk {
                if levels.disk_low(chunk.len()) {
                    return Ok(GroupEnd::Out(Budget::Disk));
                }
                runs.push(levels.write_run(&mut chunk)?);
            }
            cx.expanded += 1;
            counted += 1;
            if counted & 4095 == 0 || left == 0 {
                let disk = lock(cx.spill).disk;
                cx.res.peak_disk = cx.res.peak_disk.max(disk + levels.disk);
                let held = chunk.capacity() * std::mem::size_of::<u128>();
                match cx.check(total, held, 0) {
                    Check::Go => {}
                    Check::OverMemory => return Ok(GroupEnd::Out(Budget::Positions)),
                    Check::Out(b) => return Ok(GroupEnd::Out(b)),
                    Check::Stopped => return Ok(GroupEnd::Stopped),
                }
            }
        }
        drop(read);
        let Some(next) = levels.merge(runs, &mut chunk, &cur, &prev)? else {
            return Ok(GroupEnd::Out(Budget::Disk));
        };
        let old = std::mem::replace(&mut prev, std::mem::replace(&mut cur, next));
        // The level is done: a resumed search goes on from the next one (from its end, the seeds it
        // gave written first), or past the group when it was the last.
        if lock(cx.spill).layer_start.is_some() {
            cx.seeds.flush(cx.spill)?;
            let mut s = lock(cx.spill);
            s.by_levels.retain(|g| (g.group, g.sig) != (group, sig));
            if cur.len > 0 {
                let name = |l: &Level| {
                    l.path.as_ref().map(|p| {
                        let name = p.file_name().expect("a file name");
                        (name.to_string_lossy().into_owned(), l.len as u64)
                    })
                };
                s.by_levels.push(LevelState {
                    group,
                    sig,
                    total: total as u64,
                    cur: name(&cur).expect("a level with codes has a file"),
                    prev: name(&prev),
                });
            } else {
                s.finished.push(Finished {
                    group,
                    sig,
                    len: total as u64,
                });
            }
            s.save_within()?;
        }
        levels.remove(old);
    }
    levels.remove(prev);
    levels.remove(cur);
    Ok(GroupEnd::Done(total))
}

/// Push `code` on `chunk`, growing it within `max` codes (doubling would overshoot by up to twice).
#[inline]
fn push_code(chunk: &mut Vec<u128>, code: u128, max: usize) {
    if chunk.len() == chunk.capacity() {
        let more = chunk
            .len()
            .max(1 << 16)
            .min(max.saturating_sub(chunk.len()))
            .max(1);
        chunk.reserve_exact(more);
    }
    chunk.push(code);
}

/// Bytes of a code in a level's file.
const CODE: usize = std::mem::size_of::<u128>();

/// The files of a group searched by levels ([`search_by_levels`]), in the spill directory.
struct Levels {
    dir: PathBuf,
    /// The thread searching the group (its files' names start with it).
    thread: usize,
    /// Files made so far (their names are numbered).
    made: u64,
    /// Bytes of the files on disk.
    disk: u64,
    /// Free disk space a write must leave.
    min_free: u64,
}

/// Codes sorted, each once, in a file (none for an empty level).
struct Level {
    path: Option<PathBuf>,
    len: usize,
}

impl Level {
    fn empty() -> Level {
        Level { path: None, len: 0 }
    }

    fn read(&self) -> Result<LevelReader> {
        let file = match &self.path {
            Some(path) => Some((
                BufReader::with_capacity(1 << 20, File::open(path).map_err(|e| io_error(path, e))?),
                path.clone(),
            )),
            None => None,
        };
        Ok(LevelReader {
            file,
            left: self.len,
        })
    }
}

/// A level's codes, read in order.
struct LevelReader {
    file: Option<(BufReader<File>, PathBuf)>,
    left: usize,
}

impl LevelReader {
    fn next_code(&mut self) -> Result<Option<u128>> {
        if self.left == 0 {
            return Ok(None);
        }
        let (r, path) = self.file.as_mut().expect("a level with codes has a file");
        let mut b = [0u8; CODE];
        r.read_exact(&mut b).map_err(|e| io_error(path, e))?;
        self.left -= 1;
        Ok(Some(u128::from_le_bytes(b)))
    }
}

impl Levels {
    /// The levels of a group `cx`'s thread searches.
    fn of(cx: &Cx) -> Levels {
        let s = lock(cx.spill);
        Levels {
            dir: s.dir.0.clone(),
            thread: cx.thread,
            made: s.level_base,
            disk: 0,
            min_free: s.min_free,
        }
    }

    /// Whether writing `codes` more would leave less free disk than the search must leave.
    fn disk_low(&self, codes: usize) -> bool {
        free_disk(&self.dir).is_some_and(|f| f < (codes * CODE) as u64 + self.min_free)
    }

    /// The name of level file `made` of `thread`'s groups.
    fn name(thread: usize, made: u64) -> String {
        format!("level-{thread}-{made:06}.codes")
    }

    /// The number of a level file named by [`Levels::name`] (`None` for any other name, one with a path
    /// in it among them).
    fn number(name: &str) -> Option<u64> {
        let rest = name.strip_prefix("level-")?.strip_suffix(".codes")?;
        let (thread, made) = rest.split_once('-')?;
        thread.parse::<usize>().ok()?;
        made.parse().ok()
    }

    fn create(&mut self) -> Result<(PathBuf, BufWriter<File>)> {
        let path = (self.dir).join(Levels::name(self.thread, self.made));
        self.made += 1;
        let f = File::create(&path).map_err(|e| io_error(&path, e))?;
        Ok((path, BufWriter::with_capacity(1 << 20, f)))
    }

    /// `chunk` sorted, each code once, written to a file of its own; `chunk` is left empty.
    fn write_run(&mut self, chunk: &mut Vec<u128>) -> Result<Level> {
        chunk.sort_unstable();
        chunk.dedup();
        let (path, mut w) = self.create()?;
        for c in chunk.iter() {
            w.write_all(&c.to_le_bytes())
                .map_err(|e| io_error(&path, e))?;
        }
        w.flush().map_err(|e| io_error(&path, e))?;
        self.disk += (chunk.len() * CODE) as u64;
        let level = Level {
            path: Some(path),
            len: chunk.len(),
        };
        chunk.clear();
        Ok(level)
    }

    /// The next level: the codes of `runs` and `chunk` (each once) that are not in `cur` or `prev`,
    /// written to a file; the runs are removed and `chunk` is left empty. `None` when the disk is too
    /// full for it.
    fn merge(
        &mut self,
        runs: Vec<Level>,
        chunk: &mut Vec<u128>,
        cur: &Level,
        prev: &Level,
    ) -> Result<Option<Level>> {
        let room: usize = runs.iter().map(|r| r.len).sum::<usize>() + chunk.len();
        if self.disk_low(room) {
            return Ok(None);
        }
        chunk.sort_unstable();
        chunk.dedup();
        let mut readers = runs.iter().map(Level::read).collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(c) = r.next_code()? {
                heap.push(std::cmp::Reverse((c, i)));
            }
        }
        let mut in_chunk = chunk.iter().copied().peekable();
        let mut old = [cur.read()?, prev.read()?];
        let mut old_next = [old[0].next_code()?, old[1].next_code()?];
        let (path, mut w) = self.create()?;
        let mut len = 0usize;
        let mut last: Option<u128> = None;
        loop {
            // The least code of the runs and the chunk.
            let from_heap = heap.peek().map(|r| r.0 .0);
            let from_chunk = in_chunk.peek().copied();
            let code = match (from_heap, from_chunk) {
                (Some(h), Some(c)) if c < h => in_chunk.next(),
                (Some(_), _) => {
                    let std::cmp::Reverse((c, i)) = heap.pop().expect("peeked");
                    if let Some(n) = readers[i].next_code()? {
                        heap.push(std::cmp::Reverse((n, i)));
                    }
                    Some(c)
                }
                (None, c) => c.and(in_chunk.next()),
            };
            let Some(code) = code else { break };
            if last == Some(code) {
                continue;
            }
            last = Some(code);
            let mut known = false;
            for (o, n) in old.iter_mut().zip(old_next.iter_mut()) {
                while n.is_some_and(|x| x < code) {
                    *n = o.next_code()?;
                }
                known |= *n == Some(code);
            }
            if !known {
                w.write_all(&code.to_le_bytes())
                    .map_err(|e| io_error(&path, e))?;
                len += 1;
            }
        }
        w.flush().map_err(|e| io_error(&path, e))?;
        drop(w);
        chunk.clear();
        for run in runs {
            self.remove(run);
        }
        self.disk += (len * CODE) as u64;
        if len == 0 {
            let _ = std::fs::remove_file(&path);
            return Ok(Some(Level::empty()));
        }
        Ok(Some(Level {
            path: Some(path),
            len,
        }))
    }

    fn remove(&mut self, level: Level) {
        if let Some(path) = level.path {
            let _ = std::fs::remove_file(path);
            self.disk -= ((level.len * CODE) as u64).min(self.disk);
        }
    }
}

/// [`prove_layered`] within `bounds`, writing the seeds of later layers to disk every `flush_keys` keys,
/// its files in `resume` (resumable) if given.
fn search(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: Bounds,
    resume: Option<&Path>,
) -> Result<LayeredResult> {
    let r = search_in(
        layout, ncells, limits, max_memory, flush_keys, bounds, resume,
    );
    // A resumable search's files go when it decides; after an error, or when a budget ran out (the
    // disk, the positions, the time), they stay, so that the search goes on from its last checkpoint
    // once the cause is mended (a freed disk, a larger budget), not from the start.
    if let (Ok(res), Some(dir)) = (&r, resume) {
        if !matches!(res.outcome, LayeredOutcome::Undecided(_)) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    r
}

fn search_in(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: Bounds,
    resume: Option<&Path>,
) -> Result<LayeredResult> {
    let start = Instant::now();
    let (mut p0, _) = Position::from_layout(layout, ncells)?;
    p0.settle(None);
    let rules = Rules::new(layout, ncells);
    let root = *p0.key();
    let flush_keys = flush_keys.max(1);
    let ident = identity(&root, ncells, max_memory, flush_keys, &bounds);
    let (dir, saved) = match resume {
        Some(path) => {
            let dir = SpillDir::at(path)?;
            let saved = Checkpoint::load(&dir, &ident)?;
            (dir, saved)
        }
        None => (SpillDir::create()?, None),
    };
    let before_ms = saved.as_ref().map_or(0.0, |c| c.elapsed_ms);
    let res = LayeredResult {
        outcome: LayeredOutcome::Unsolvable,
        positions: 0,
        peak_positions: 0,
        peak_bytes: 0,
        peak_parts: [0; 5],
        peak_disk: 0,
        elapsed_ms: 0.0,
        chain: vec![],
    };
    let finish = |mut r: LayeredResult, outcome| {
        r.outcome = outcome;
        r.elapsed_ms = before_ms + start.elapsed().as_secs_f64() * 1e3;
        Ok(r)
    };
    if rules.is_sorted(&root) {
        let mut res = res;
        res.positions = 1;
        res.chain = vec![root];
        return finish(res, LayeredOutcome::Won);
    }
    let threads = bounds.threads.max(1);
    let spill = Spill::new(Seeds::new(bounds.max_kept, bounds.min_free_disk, dir)?);
    // Each thread's share of the memory: its seeds' buffers, its stack, its group's set.
    let mut bufs: Vec<SeedBuf> = (0..threads)
        .map(|_| SeedBuf::new(flush_keys / threads))
        .collect();
    let mut t = Totals {
        done: 0,
        expanded: 0,
        res,
    };
    let first = match saved {
        Some(c) => {
            // Go on from the layer the checkpoint was saved at, with its files and counts.
            t.done = c.done;
            t.expanded = c.expanded;
            t.res.positions = c.done;
            t.res.peak_positions = c.peak_positions;
            t.res.peak_bytes = c.peak_bytes;
            t.res.peak_parts = c.peak_parts;
            t.res.peak_disk = c.peak_disk;
            let s = &mut *lock(&spill);
            (s.keep, s.kept, s.transient, s.disk) = (c.keep, c.kept, c.transient, c.disk);
            for (l, written, runs) in c.layers {
                s.written[l] = written;
                s.runs[l] = runs;
            }
            for l in c.kept_layers {
                let path = s.dir.kept(l);
                s.written[l] = std::fs::metadata(&path)
                    .map_err(|e| io_error(&path, e))?
                    .len();
            }
            // Saved within the layer: the groups finished and searched by levels so far (their
            // positions expanded), and level files numbered past theirs.
            s.level_base = c
                .by_levels
                .iter()
                .flat_map(|g| g.files())
                .filter_map(|(name, _)| Levels::number(name))
                .max()
                .map_or(0, |n| n + 1);
            (s.finished, s.by_levels) = (c.finished, c.by_levels);
            t.expanded += s.credit();
            c.layer
        }
        None => {
            let first = progress(&root);
            bufs[0].push(first, &root, None, &spill)?;
            first
        }
    };
    for layer in first..LAYERS {
        let pending = |bufs: &[SeedBuf]| bufs.iter().any(|b| !b.buffers[layer].is_empty());
        if resume.is_some() && (lock(&spill).written[layer] > 0 || pending(&bufs)) {
            for b in &mut bufs {
                b.flush(&spill)?;
            }
            let mut s = lock(&spill);
            s.sync()?;
            if s.disk_low {
                // Seeds were dropped: no checkpoint of an incomplete search.
                drop(s);
                return finish(t.res, LayeredOutcome::Undecided(Budget::Disk));
            }
            let elapsed = before_ms + start.elapsed().as_secs_f64() * 1e3;
            let c = Checkpoint::of(&s, layer, &t, &ident, elapsed);
            c.save(&s.dir.state())?;
            // The base of the checkpoints saved within the layer.
            let c = Checkpoint {
                finished: vec![],
                by_levels: vec![],
                ..c
            };
            s.layer_start = Some((c, Instant::now()));
            s.saved_at = Some(Instant::now());
            #[cfg(test)]
            if let Some(n) = KILL_AFTER.get() {
                KILL_AFTER.set(n.checked_sub(1));
                if n == 1 && KILL_AT_ONCE.get() {
                    return Err(Error::Io("killed (test)".into()));
                }
            }
        }
        // The layer's seeds, group by group, merged from the sorted runs on disk: positions of one
        // signature reach only each other within the layer, so each group is searched with a set of
        // its own, dropped after. Each group goes to the first thread free for it.
        for b in &mut bufs {
            b.flush_layer(layer, &spill)?;
        }
        let Some(file) = lock(&spill).open_layer(layer)? else {
            continue;
        };
        let layer_done = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let next_group = AtomicU64::new(0);
        let share = |thread: usize, seeds: &mut SeedBuf, expanded: u64| {
            let mut cx = Cx {
                rules: &rules,
                seeds,
                spill: &spill,
                thread,
                limits,
                max_memory: max_memory.map(|m| m / threads),
                max_stack_bytes: bounds.max_stack_bytes / threads,
                max_set_len: bounds.max_set_len,
                level_chunk: bounds.level_chunk / threads,
                save_every: std::time::Duration::from_millis(bounds.save_every_ms),
                start,
                layer,
                before: t.done,
                layer_done: &layer_done,
                stop: &stop,
                next_group: &next_group,
                done: t.done,
                expanded,
                merge_bytes: 0,
                kids: Vec::with_capacity(128),
                codes: Vec::with_capacity(128),
                // The thread's peaks in this layer.
                res: LayeredResult {
                    peak_positions: 0,
                    peak_bytes: 0,
                    peak_parts: [0; 5],
                    ..t.res.clone()
                },
            };
            let end = search_share(&mut cx, &file);
            if !matches!(end, Ok(None | Some(GroupEnd::Stopped))) {
                stop.store(true, Ordering::Relaxed);
            }
            (end, cx.expanded, cx.res)
        };
        let ends = if threads == 1 {
            vec![share(0, &mut bufs[0], t.expanded)]
        } else {
            std::thread::scope(|scope| {
                let share = &share;
                let running: Vec<_> = bufs
                    .iter_mut()
                    .enumerate()
                    .map(|(i, b)| {
                        scope.spawn(move || share(i, b, if i == 0 { t.expanded } else { 0 }))
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|h| h.join().expect("a thread of the layered proof panicked"))
                    .collect::<Vec<_>>()
            })
        };
        {
            let s = &mut *lock(&spill);
            s.layer_start = None;
            s.finished.clear();
            s.by_levels.clear();
        }
        // The layer's counts: its groups' positions, and the threads' peaks (their sums: the threads'
        // peaks may come at once).
        t.done += layer_done.into_inner();
        t.expanded = ends.iter().map(|e| e.1).sum();
        let mut positions = t.done;
        let mut peak_bytes = 0;
        let mut peak_parts = [0; 5];
        for (_, _, r) in &ends {
            positions = positions.max(r.positions);
            t.res.peak_positions = t.res.peak_positions.max(r.peak_positions);
            t.res.peak_disk = t.res.peak_disk.max(r.peak_disk);
            peak_bytes += r.peak_bytes;
            for (p, q) in peak_parts.iter_mut().zip(r.peak_parts) {
                *p += q;
            }
        }
        if peak_bytes > t.res.peak_bytes {
            (t.res.peak_bytes, t.res.peak_parts) = (peak_bytes, peak_parts);
        }
        t.res.positions = positions;
        let mut out = None;
        for (end, _, _) in ends {
            match end? {
                None | Some(GroupEnd::Stopped) | Some(GroupEnd::Done(_)) => {}
                Some(GroupEnd::Won { .. }) if lock(&spill).disk_low => {
                    // Won, but the line may lead through seeds that were dropped.
                    out = out.or(Some(Budget::Disk));
                }
                Some(GroupEnd::Won { target, tail, len }) => {
                    // The line to it, found again backwards.
                    let mut res = t.res;
                    res.positions = t.done + len as u64;
                    res.chain = chain_to(&rules, &lock(&spill), target, tail, max_memory)?;
                    return finish(res, LayeredOutcome::Won);
                }
                Some(GroupEnd::Out(b)) => out = out.or(Some(b)),
            }
        }
        if let Some(b) = out {
            return finish(t.res, LayeredOutcome::Undecided(b));
        }
    }
    if lock(&spill).disk_low {
        return finish(t.res, LayeredOutcome::Undecided(Budget::Disk));
    }
    finish(t.res, LayeredOutcome::Unsolvable)
}

/// The counts of a whole search, between its layers.
struct Totals {
    /// Positions of finished groups.
    done: u64,
    expanded: u64,
    res: LayeredResult,
}

/// This thread's share of the groups of the layer in `file` (each group goes to the first thread free
/// for it), each searched with a set of its own and dropped after. `None` when every group was
/// searched through; else how the thread's search of the layer ended: a win, a budget, or
/// [`GroupEnd::Stopped`] when another thread ended first.
fn search_share(cx: &mut Cx, file: &LayerFile) -> Result<Option<GroupEnd>> {
    let mut merge = Merge::open(file)?;
    cx.merge_bytes = merge.memory();
    // The groups are numbered in the merge's order (the same in every thread's merge); each thread
    // claims the next number when it is free, and skips to that group.
    let mut passed = 0u64;
    let mut claim = cx.next_group.fetch_add(1, Ordering::Relaxed);
    while let Some(h) = merge.peek_hash() {
        passed += 1;
        if passed <= claim {
            while merge.next_in_group(h)?.is_some() {}
            continue;
        }
        // The seeds of this hash: the first one's group is searched with them as they come, the seeds
        // of other groups with the same hash (rare) are kept aside and searched after.
        let mut aside: Vec<Key> = Vec::new();
        let mut first = merge.next_in_group(h)?.map(|k| unpack(&k));
        while let Some(seed) = first {
            let sig = signature(&seed);
            let mut rest = std::mem::take(&mut aside).into_iter();
            let mut more = || -> Result<Option<Key>> {
                for k in rest.by_ref() {
                    if signature(&k) == sig {
                        return Ok(Some(k));
                    }
                    aside.push(k);
                }
                while let Some(k) = merge.next_in_group(h)? {
                    let k = unpack(&k);
                    if signature(&k) == sig {
                        return Ok(Some(k));
                    }
                    aside.push(k);
                }
                Ok(None)
            };
            cx.done = cx.before + cx.layer_done.load(Ordering::Relaxed);
            // A group a checkpoint within the layer lists, finished or searched by levels so far.
            let (finished, state) = {
                let s = lock(cx.spill);
                let listed = |g: u64, s: &[u64; 6]| (g, *s) == (claim, sig);
                (
                    s.finished
                        .iter()
                        .find(|f| listed(f.group, &f.sig))
                        .map(|f| f.len),
                    s.by_levels
                        .iter()
                        .find(|g| listed(g.group, &g.sig))
                        .cloned(),
                )
            };
            let end = match (finished, state) {
                (Some(len), _) => {
                    while more()?.is_some() {}
                    GroupEnd::Done(len as usize)
                }
                (None, Some(state)) => resume_by_levels(cx, state, &Frame::of(&seed), &mut more)?,
                (None, None) => search_group(cx, claim, seed, &mut more)?,
            };
            match end {
                GroupEnd::Done(len) => {
                    if finished.is_none() {
                        cx.finished(claim, sig, len)?;
                    }
                    let res = &mut cx.res;
                    res.peak_positions = res.peak_positions.max(len as u64);
                    let done = cx.layer_done.fetch_add(len as u64, Ordering::Relaxed) + len as u64;
                    res.positions = cx.before + done;
                    if res.positions >= cx.limits.max_positions {
                        return Ok(Some(GroupEnd::Out(Budget::Positions)));
                    }
                    if lock(cx.spill).disk_low {
                        return Ok(Some(GroupEnd::Out(Budget::Disk)));
                    }
                    if cx.stop.load(Ordering::Relaxed) {
                        return Ok(Some(GroupEnd::Stopped));
                    }
                    // Tests: killed after a group, its layer's file renamed and later layers' files
                    // grown since the checkpoint.
                    #[cfg(test)]
                    if KILL_AFTER.get() == Some(0) || KILL_ON_FORGET.get() && !lock(cx.spill).keep {
                        cx.seeds.flush(cx.spill)?;
                        return Err(Error::Io("killed (test)".into()));
                    }
                }
                end => return Ok(Some(end)),
            }
            first = (!aside.is_empty()).then(|| aside.remove(0));
        }
        claim = cx.next_group.fetch_add(1, Ordering::Relaxed);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(max_kept: u64) -> Bounds {
        Bounds {
            max_kept,
            max_stack_bytes: usize::MAX,
            max_set_len: usize::MAX,
            level_chunk: 1 << 20,
            min_free_disk: 0,
            threads: 1,
            // Checkpoints at the start of each layer only (and at the end of a level of a group
            // searched by levels).
            save_every_ms: u64::MAX,
        }
    }

    /// Deal 11982's layered proof with 4 cells (its seeds flushed every 500 keys) within `limits`: with
    /// every finished layer's file kept for lines, and with none (the seeds written lean from the start).
    fn with_and_without_kept_files(limits: Limits) -> (LayeredResult, LayeredResult) {
        let deal = Layout::deal(11982).unwrap();
        let with = search(&deal, 4, limits, None, 500, kept(u64::MAX), None).unwrap();
        let without = search(&deal, 4, limits, None, 500, kept(0), None).unwrap();
        (with, without)
    }

    /// Places that differ by a pattern a linear fold of the high word onto the low one cancels (a card's
    /// places in the high word, and the two cards they line up with in the low one, changed together)
    /// get different hashes: with the old fold, all 16,384 of this family shared one.
    #[test]
    fn structured_places_spread_over_the_table() {
        let n = 14;
        let mut hashes: Vec<u64> = (0..1u32 << n)
            .map(|mask| {
                let mut places = 0u128;
                for t in 0..n {
                    if mask >> t & 1 == 1 {
                        places ^= (0b11u128 << (64 + 2 * t)) ^ (0b11u128 << (2 * t + 29));
                    }
                }
                Table::hash(places)
            })
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), 1 << n);
        let mut table = Table::new(104);
        for mask in 0..1u32 << n {
            let mut places = 0u128;
            for t in 0..n {
                if mask >> t & 1 == 1 {
                    places ^= (0b11u128 << (64 + 2 * t)) ^ (0b11u128 << (2 * t + 29));
                }
            }
            assert!(table.insert(places, false));
        }
        assert_eq!(table.len, 1 << n);
    }

    /// A table keeps each position once, through its growth and its split into shards, and a scan
    /// takes every position inserted untaken exactly once, even when the table grows during the scan.
    /// Places of 62 bits (8-byte slots), 80 (11) and 104 (14).
    #[test]
    fn table_scans_take_every_waiting_position_once() {
        for width in [62u32, 80, 104] {
            let mut t = Table::new(width);
            let mut waiting = std::collections::HashSet::new();
            let mut x = 1u64;
            let mut next = move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Few distinct values, so that some come again; spread over the width.
                let v = (x >> 42) as u128;
                (v | v << (width - 22)) & ((1 << width) - 1)
            };
            let put = |t: &mut Table, waiting: &mut std::collections::HashSet<u128>, v: u128| {
                let taken = v % 3 != 0;
                let new = t.insert(v, taken);
                if new && !taken {
                    waiting.insert(v);
                }
                new
            };
            let mut inserted = 0;
            for _ in 0..1_200_000 {
                inserted += put(&mut t, &mut waiting, next()) as usize;
            }
            assert!(inserted > 1_000_000 && inserted < 1_200_000, "{inserted}");
            assert_eq!(t.len, inserted);
            assert!(t.bits > 0, "the table split into shards");
            let mut cursor = (0, 0);
            let mut taken = 0;
            while !waiting.is_empty() {
                match t.take_next(&mut cursor) {
                    Some(v) => {
                        assert!(waiting.remove(&v), "{v:x} taken twice, or never put");
                        taken += 1;
                        // Growth during the scan.
                        if taken % 2 == 0 {
                            inserted += put(&mut t, &mut waiting, next()) as usize;
                            inserted += put(&mut t, &mut waiting, next()) as usize;
                        }
                    }
                    None => cursor = (0, 0),
                }
            }
            assert_eq!(t.len, inserted);
            assert_eq!(t.take_next(&mut (0, 0)), None);
            assert_eq!(t.lens.iter().sum::<usize>(), inserted);
        }
    }

    /// Keys coded a word at a time (BMI2) give the places coded a card at a time, and decode back.
    #[test]
    fn codes_of_words_and_of_cards_agree() {
        let mut kids = Vec::new();
        let mut checked = 0;
        for deal in 1..=40u64 {
            let layout = Layout::deal(deal).unwrap();
            let rules = Rules::new(&layout, 2);
            let (mut p, _) = Position::from_layout(&layout, 2).unwrap();
            p.settle(None);
            // A walk of a few hundred moves, always the last child.
            let mut key = *p.key();
            for _ in 0..200 {
                let f = Frame::of(&key);
                let x = f.encode_cards(&key);
                assert_eq!(f.decode_cards(x), key);
                assert_eq!(f.encode(&key), x);
                assert_eq!(f.decode(x), key);
                checked += 1;
                rules.children(&rules.decode(&key), &mut kids);
                match kids.last() {
                    Some(k) if *k != [0; 3] => key = *k,
                    _ => break,
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// The spill directory of a process that is gone is removed, a live process's is kept. In a
    /// directory of the test's own: a search elsewhere on the machine removes orphans of the system's
    /// temporary directory at any time.
    #[test]
    fn spill_directories_of_gone_processes_are_removed() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let base =
            std::env::temp_dir().join(format!("fcanalyze-test-orphans-{}", std::process::id()));
        let orphan = base.join("fcanalyze-layered-999999999-1");
        let live = base.join(format!("fcanalyze-layered-{}-1", std::process::id()));
        for d in [&orphan, &live] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("layer-001.keys"), [0u8; 20]).unwrap();
        }
        remove_orphans(&base);
        assert!(!orphan.exists());
        assert!(live.join("layer-001.keys").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A stack bounded to one position (the rest wait in the set and are found by scans) gives the
    /// same counts as an unbounded one.
    #[test]
    fn a_bounded_stack_counts_the_same() {
        let limits = Limits {
            max_positions: 300_000,
            max_millis: None,
        };
        let small = Bounds {
            max_kept: u64::MAX,
            max_stack_bytes: 1,
            max_set_len: usize::MAX,
            level_chunk: 1 << 20,
            min_free_disk: 0,
            threads: 1,
            save_every_ms: 0,
        };
        let deal = Layout::deal(11982).unwrap();
        let r = search(&deal, 4, limits, None, 5000, small, None).unwrap();
        assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
        assert_eq!(r.positions, 61_643);
        let mut proofs = 0;
        for deal in 1..=20u64 {
            for k in [0usize, 1] {
                let layout = Layout::deal(deal).unwrap();
                let a = search(&layout, k, limits, None, 5000, kept(u64::MAX), None).unwrap();
                let b = search(&layout, k, limits, None, 5000, small, None).unwrap();
                if a.outcome == LayeredOutcome::Unsolvable {
                    assert_eq!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
                    assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                    proofs += 1;
                } else {
                    assert_ne!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
                }
            }
        }
        assert!(proofs > 10, "{proofs} proofs");
    }

    /// Groups searched by levels once their set passes a few bytes (as when the memory runs out) give
    /// the same counts as groups held in their sets, and the same win with its line.
    #[test]
    fn groups_searched_by_levels_count_the_same() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        for threads in [1, 2] {
            // Two threads search by levels at once, each with files of its own.
            let levels = Bounds {
                max_kept: u64::MAX,
                max_stack_bytes: usize::MAX,
                max_set_len: 50,
                level_chunk: 1000,
                min_free_disk: 0,
                threads,
                save_every_ms: 0,
            };
            let deal = Layout::deal(11982).unwrap();
            let r = search(&deal, 4, limits, None, 5000, levels, None).unwrap();
            assert_eq!(
                (r.outcome, r.positions),
                (LayeredOutcome::Unsolvable, 61_643)
            );
            let mut proofs = 0;
            for deal in 1..=8u64 {
                for k in [0usize, 1, 2] {
                    let layout = Layout::deal(deal).unwrap();
                    let a = search(&layout, k, limits, None, 5000, kept(u64::MAX), None).unwrap();
                    let b = search(&layout, k, limits, None, 5000, levels, None).unwrap();
                    assert_eq!(a.outcome, b.outcome, "deal {deal} k={k}");
                    if a.outcome == LayeredOutcome::Unsolvable {
                        assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                        proofs += 1;
                    }
                }
            }
            assert!(proofs > 8, "{proofs} proofs");
            let mut late = Layout::deal(2).unwrap();
            for col in late.columns.iter_mut() {
                col.retain(|&c| crate::card::rank(c) >= 7);
            }
            late.foundations = [7; 4];
            let r = search(&late, 0, limits, None, 100, levels, None).unwrap();
            assert_eq!(r.outcome, LayeredOutcome::Won);
            assert!(!r.chain.is_empty());
        }
    }

    /// A search whose spill files would leave less free disk space than it must ends undecided for want
    /// of disk, not with an error; with the space, the same search is a proof.
    #[test]
    fn a_search_short_of_disk_is_undecided() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let deal = Layout::deal(11982).unwrap();
        let mut bounds = kept(u64::MAX);
        let r = search(&deal, 4, limits, None, 500, bounds, None).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        bounds.min_free_disk = u64::MAX / 4;
        let r = search(&deal, 4, limits, None, 500, bounds, None).unwrap();
        assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
        assert!(r.positions < 61_643);
    }

    /// A resumable search that runs out of a budget keeps its files: run again with the budget mended (a
    /// larger position budget, a freed disk) it goes on from its last checkpoint to the same proof, and
    /// its files go then.
    #[test]
    fn a_budget_keeps_the_files_of_a_resumable_search() {
        let deal = Layout::deal(11982).unwrap();
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-test-budget-{}", std::process::id()));
        let (few, all) = (
            Limits {
                max_positions: 20_000,
                max_millis: None,
            },
            Limits {
                max_positions: u64::MAX,
                max_millis: None,
            },
        );
        let r = search(&deal, 4, few, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
        let layer = |dir: &Path| {
            let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
            Checkpoint::parse(&text).unwrap().layer
        };
        // Its checkpoint is past the start's layer: a run again does not start over.
        let first = layer(&dir);
        let (mut start, _) = Position::from_layout(&deal, 4).unwrap();
        start.settle(None);
        assert!(first > progress(start.key()), "{first}");
        // Short of disk: undecided, and the files stay.
        DISK_SIZE.set(Some(1 << 16));
        let r = search(&deal, 4, all, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        DISK_SIZE.set(None);
        assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
        assert!(layer(&dir) >= first);
        let r = search(&deal, 4, all, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        assert!(!dir.exists());
    }

    /// A disk too small for the files kept for lines and the later layers' seeds together: the kept files
    /// go, and the search goes on to the same proof; on a disk too small for the seeds alone, it ends
    /// undecided for want of disk.
    #[test]
    fn the_kept_files_go_before_the_disk_runs_out() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let deal = Layout::deal(11982).unwrap();
        let (whole, without) = with_and_without_kept_files(limits);
        assert!(
            whole.peak_disk > without.peak_disk,
            "{} {}",
            whole.peak_disk,
            without.peak_disk
        );
        let run = |size: u64| {
            DISK_SIZE.set(Some(size));
            let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), None).unwrap();
            DISK_SIZE.set(None);
            r
        };
        let r = run(without.peak_disk + (whole.peak_disk - without.peak_disk) / 2);
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        assert!(r.peak_disk < whole.peak_disk);
        let r = run(without.peak_disk / 2);
        assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
        // Killed in the layer in which the kept files went (that layer's file then transient), the
        // resumed search ends with the same proof.
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-test-forget-{}", std::process::id()));
        let size = without.peak_disk + (whole.peak_disk - without.peak_disk) / 2;
        DISK_SIZE.set(Some(size));
        KILL_ON_FORGET.set(true);
        let killed = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir));
        KILL_ON_FORGET.set(false);
        assert!(killed.is_err());
        let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
        let c = Checkpoint::parse(&text).unwrap();
        let sd = SpillDir(dir.clone(), true);
        assert!(c.keep && c.kept_layers.iter().any(|&l| !sd.kept(l).exists()));
        assert!(!sd.file(c.layer).exists() && sd.kept(LAYERS).exists());
        let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        DISK_SIZE.set(None);
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        assert!(!dir.exists());
    }

    /// Past the disk budget for lines the search goes on, with the same count, and a win comes without
    /// a line.
    #[test]
    fn lines_forgotten_past_the_disk_budget() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let deal = Layout::deal(11982).unwrap();
        for max_kept in [0, 1 << 12, u64::MAX] {
            let r = search(&deal, 4, limits, None, 500, kept(max_kept), None).unwrap();
            assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
            assert_eq!(r.positions, 61_643);
        }
        let mut late = Layout::deal(2).unwrap();
        for col in late.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 7);
        }
        late.foundations = [7; 4];
        let with = search(&late, 0, limits, None, 100, kept(u64::MAX), None).unwrap();
        let without = search(&late, 0, limits, None, 100, kept(1 << 12), None).unwrap();
        assert_eq!(with.outcome, LayeredOutcome::Won);
        assert_eq!(without.outcome, LayeredOutcome::Won);
        assert_eq!(with.positions, without.positions);
        assert!(!with.chain.is_empty());
        assert!(without.chain.is_empty());
    }

    /// A resumable search killed at the start of a layer goes on from that layer's checkpoint when run
    /// again with the same directory, and ends as the search run at once does: the same count, and a
    /// line to the win from the files kept before the kill. A checkpoint of another search, or a torn
    /// one, is not resumed.
    #[test]
    fn a_killed_search_goes_on_from_its_checkpoint() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-test-resume-{}", std::process::id()));
        let mut late = Layout::deal(2).unwrap();
        for col in late.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 7);
        }
        late.foundations = [7; 4];
        for (layout, k, flush) in [(Layout::deal(11982).unwrap(), 4, 500), (late, 0, 100)] {
            let whole = search(&layout, k, limits, None, flush, kept(u64::MAX), None).unwrap();
            for (n, at_once) in [
                (1, true),
                (2, true),
                (5, true),
                (1, false),
                (3, false),
                (6, false),
            ] {
                KILL_AFTER.set(Some(n));
                KILL_AT_ONCE.set(at_once);
                let killed = search(&layout, k, limits, None, flush, kept(u64::MAX), Some(&dir));
                KILL_AFTER.set(None);
                KILL_AT_ONCE.set(true);
                assert!(killed.is_err(), "killed at checkpoint {n}");
                assert!(has_checkpoint(&dir));
                let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
                let c = Checkpoint::parse(&text).unwrap();
                assert_eq!(Checkpoint::parse(&c.to_text()), Some(c));
                // Resumed with one thread or two: the checkpoint does not depend on them.
                let threads = 1 + n % 2;
                let b = Bounds {
                    threads,
                    ..kept(u64::MAX)
                };
                let r = search(&layout, k, limits, None, flush, b, Some(&dir)).unwrap();
                assert_eq!(r.outcome, whole.outcome, "killed at checkpoint {n}");
                if threads == 1 || whole.outcome == LayeredOutcome::Unsolvable {
                    // (A win's count depends on the groups the other thread searched by then.)
                    assert_eq!(r.positions, whole.positions, "killed at checkpoint {n}");
                }
                if whole.outcome == LayeredOutcome::Won {
                    assert!(!r.chain.is_empty());
                    assert_eq!(r.chain.first(), whole.chain.first());
                }
                assert!(!dir.exists(), "the files go when the search ends");
            }
        }
        // Killed again after a resumption: the lines still reach the start.
        let mut late = Layout::deal(2).unwrap();
        for col in late.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 7);
        }
        late.foundations = [7; 4];
        let whole = search(&late, 0, limits, None, 100, kept(u64::MAX), None).unwrap();
        for n in [2, 3] {
            KILL_AFTER.set(Some(n));
            assert!(search(&late, 0, limits, None, 100, kept(u64::MAX), Some(&dir)).is_err());
        }
        KILL_AFTER.set(None);
        let r = search(&late, 0, limits, None, 100, kept(u64::MAX), Some(&dir)).unwrap();
        assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
        assert_eq!(r.chain.first(), whole.chain.first());
        assert_eq!(r.chain.len(), whole.chain.len());
        // A checkpoint without its files (brought to another machine alone), or with one cut short,
        // starts afresh, to the same end.
        let deal = Layout::deal(11982).unwrap();
        for cut in [false, true] {
            KILL_AFTER.set(Some(3));
            assert!(search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).is_err());
            KILL_AFTER.set(None);
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.path() != dir.join(CHECKPOINT_FILE) {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(e.path())
                        .unwrap();
                    if cut {
                        f.set_len(f.metadata().unwrap().len() / 2).unwrap();
                    } else {
                        std::fs::remove_file(e.path()).unwrap();
                    }
                }
            }
            assert!(has_checkpoint(&dir));
            let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
            assert_eq!(
                (r.outcome, r.positions),
                (LayeredOutcome::Unsolvable, 61_643)
            );
        }
        // Another search's checkpoint, or a torn one, starts afresh.
        let deal = Layout::deal(11982).unwrap();
        KILL_AFTER.set(Some(3));
        assert!(search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).is_err());
        KILL_AFTER.set(None);
        assert!(has_checkpoint(&dir));
        let other = search(&deal, 3, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        let fresh = search(&deal, 3, limits, None, 500, kept(u64::MAX), None).unwrap();
        assert_eq!(other.positions, fresh.positions);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(CHECKPOINT_FILE),
            "fcanalyze-layered-checkpoint/1\nidentity x\nlay",
        )
        .unwrap();
        assert!(!has_checkpoint(&dir));
        let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        assert_eq!(r.positions, 61_643);
        assert!(!dir.exists());
    }

    /// A resumable search killed within a layer, after a checkpoint saved at the end of a level of a
    /// group searched by levels or after a finished group, goes on from there: killed again after each
    /// such checkpoint it still ends (each run gets further), with the count of the search run at
    /// once, whatever the threads it is resumed with. The checkpoints list the groups, and their files.
    #[test]
    fn a_search_killed_within_a_layer_goes_on_from_its_last_level() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-test-within-{}", std::process::id()));
        let levels = Bounds {
            max_kept: u64::MAX,
            max_stack_bytes: usize::MAX,
            max_set_len: 300,
            level_chunk: 1000,
            min_free_disk: 0,
            threads: 1,
            save_every_ms: 30,
        };
        let mut late = Layout::deal(2).unwrap();
        for col in late.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 7);
        }
        late.foundations = [7; 4];
        for (layout, k) in [(Layout::deal(11982).unwrap(), 4), (late, 0)] {
            let whole = search(&layout, k, limits, None, 5000, levels, None).unwrap();
            for every in [1, 3] {
                let (mut runs, mut listed) = (0, [false; 2]);
                let r = loop {
                    KILL_WITHIN.set(Some(every));
                    let threads = 1 + runs % 2;
                    let b = Bounds { threads, ..levels };
                    let r = search(&layout, k, limits, None, 5000, b, Some(&dir));
                    KILL_WITHIN.set(None);
                    runs += 1;
                    assert!(runs < 2000, "no progress after {runs} runs");
                    match r {
                        Ok(r) => break r,
                        Err(_) => {
                            let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
                            let c = Checkpoint::parse(&text).unwrap();
                            assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
                            listed[0] |= !c.finished.is_empty();
                            listed[1] |= !c.by_levels.is_empty();
                            for g in &c.by_levels {
                                for (name, len) in g.files() {
                                    let bytes = std::fs::metadata(dir.join(name)).unwrap().len();
                                    assert_eq!(bytes, len * CODE as u64);
                                }
                            }
                        }
                    }
                };
                assert!(runs > 3, "{runs} runs");
                assert_eq!(listed, [true, true]);
                assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
                if whole.outcome == LayeredOutcome::Won {
                    assert!(!r.chain.is_empty());
                } else {
                    assert_eq!(r.positions, 61_643);
                }
                assert!(!dir.exists(), "the files go when the search ends");
            }
        }
    }

    /// Once the lines are forgotten (the files kept for them would pass their budget), the seeds are
    /// written lean, keys alone: the same proof on less disk, resumable from checkpoints that list runs
    /// of both kinds in one file.
    #[test]
    fn seeds_are_written_lean_once_the_lines_are_forgotten() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let deal = Layout::deal(11982).unwrap();
        let (full, lean) = with_and_without_kept_files(limits);
        assert_eq!(
            (lean.outcome, lean.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        // Without the kept files, the later layers' seeds alone: at most LEAN / RECORD of the full size
        // (and the full search keeps every finished layer besides).
        assert!(
            lean.peak_disk * RECORD as u64 <= full.peak_disk * LEAN as u64,
            "{} {}",
            lean.peak_disk,
            full.peak_disk
        );
        let dir = std::env::temp_dir().join(format!("fcanalyze-test-lean-{}", std::process::id()));
        let mut kinds = [false; 3];
        for budget in [0, full.peak_disk / 4] {
            for n in 1..12 {
                KILL_AFTER.set(Some(n));
                let r = search(&deal, 4, limits, None, 500, kept(budget), Some(&dir));
                KILL_AFTER.set(None);
                if r.is_ok() {
                    break;
                }
                let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
                let c = Checkpoint::parse(&text).unwrap();
                assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
                for (_, _, runs) in &c.layers {
                    let lean = runs.iter().filter(|r| r.1).count();
                    kinds[0] |= lean > 0 && lean == runs.len();
                    kinds[1] |= lean == 0;
                    kinds[2] |= lean > 0 && lean < runs.len();
                }
                let r = search(&deal, 4, limits, None, 500, kept(budget), Some(&dir)).unwrap();
                assert_eq!(
                    (r.outcome, r.positions),
                    (LayeredOutcome::Unsolvable, 61_643)
                );
                assert!(!dir.exists());
            }
        }
        assert_eq!(kinds, [true, true, true]);
    }
}
