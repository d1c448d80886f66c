//! Position codes and seed records. A seed on disk is a packed 20-byte key, the packed key of the
//! position it was reached from, its group's hash, and the trades whose images of it are seeds too
//! ([`Rec`], [`RECORD`] bytes; [`LEAN`] once the lines are forgotten). Within a group, a position is
//! coded in 2 bits per free card ([`Frame`]).

use std::io::Write;

use crate::key::{
    hash, key_shift, key_word, loc_of, pack, set_loc, signature, unpack, Key, FIELD_LOW,
    LOC_BOTTOM, LOC_CELL, LOC_DEALT, LOC_HOME, LOC_PARENT_HI, LOC_PARENT_LO, PACKED_BYTES,
};

/// A seed: its packed key, the packed key of the position it was reached from ([`NO_PARENT`] for the
/// start), a 64-bit hash of its group's [`signature`] (high word first), and the trades (a mask of
/// [`super::trades::pair_of_bit`]'s bits, 0 for none) whose images of the seed, and of its parent,
/// are seeds and their parents as well: a group searched by orbits sends the children of each orbit's
/// canonical position with the trades of the orbit, and the merge gives every image
/// ([`super::merge::Merge::next_seed`]).
pub(super) type Rec = [u32; 13];

/// Bytes of a seed in a spill file.
pub(super) const RECORD: usize = 52;

/// Bytes of a seed in a spill file once the lines are forgotten ([`Seeds::keep`] false): its key and
/// its trades (the parent would serve no line, and the group hash is computed again from the key).
pub(super) const LEAN: usize = PACKED_BYTES + 4;

/// The word of a [`Rec`] that holds its trades.
pub(super) const MASK: usize = 12;

/// The parent of the start.
pub(super) const NO_PARENT: [u32; 5] = [u32::MAX; 5];

#[inline(always)]
pub(super) fn rec_key(r: &Rec) -> [u32; 5] {
    r[..5].try_into().expect("five words")
}

/// The record of the seed `key`, reached from `parent` (`None`: the start), with its trades `trades`.
#[inline]
pub(super) fn make_rec(key: &Key, parent: Option<&Key>, trades: u32) -> Rec {
    let mut rec = [0u32; 13];
    rec[..5].copy_from_slice(&pack(key));
    rec[5..10].copy_from_slice(&parent.map_or(NO_PARENT, pack));
    let h = group_hash(key);
    rec[10] = (h >> 32) as u32;
    rec[11] = h as u32;
    rec[MASK] = trades;
    rec
}

/// A seed's key and trades: two records with the same are the same seeds (their parents aside).
#[inline(always)]
pub(super) fn rec_seeds(r: &Rec) -> ([u32; 5], u32) {
    (rec_key(r), r[MASK])
}

#[inline(always)]
pub(super) fn rec_parent(r: &Rec) -> [u32; 5] {
    r[5..10].try_into().expect("five words")
}

/// The order of seeds in the spill files: by group (the hash of the signature), then by key, then by
/// trades; as integers (the hash, the key's first four words, its last with the trades), which compare
/// in a few instructions: the words compared one by one made the sorts of the seeds a seventh of a
/// proof's time, and the whole proof 9-11% slower (deal 26063 with 1 cell, its groups by levels).
#[inline(always)]
pub(super) fn rec_order(r: &Rec) -> Order {
    let w = |i: usize| r[i] as u128;
    (
        (r[10] as u64) << 32 | r[11] as u64,
        w(0) << 96 | w(1) << 64 | w(2) << 32 | w(3),
        (r[4] as u64) << 32 | r[MASK] as u64,
    )
}

/// A seed's place in the order of the spill files ([`rec_order`]).
pub(super) type Order = (u64, u128, u64);

/// The packed key and the trades of a seed's [`Order`].
#[inline(always)]
pub(super) fn order_seeds(&(_, k, last): &Order) -> ([u32; 5], u32) {
    let key = [
        (k >> 96) as u32,
        (k >> 64) as u32,
        (k >> 32) as u32,
        k as u32,
        (last >> 32) as u32,
    ];
    (key, last as u32)
}

/// A hash of the group of `key` (equal signatures, equal hashes).
#[inline]
pub(super) fn group_hash(key: &Key) -> u64 {
    let s = signature(key);
    hash(&[
        s[0] ^ s[3].rotate_left(17),
        s[1] ^ s[4].rotate_left(29),
        s[2] ^ s[5].rotate_left(41),
    ])
}

/// The 2-bit place of a free card from its field (1, 2, 4 or 5: [`LOC_CELL`], [`LOC_BOTTOM`],
/// [`LOC_PARENT_LO`], [`LOC_PARENT_HI`]), and back ([`FIELD_OF`]).
#[inline(always)]
pub(super) fn place_of(f: u64) -> u64 {
    debug_assert!(matches!(f, 1 | 2 | 4 | 5), "a free card's place");
    f - 1 - (f > 3) as u64
}

pub(super) const FIELD_OF: [u64; 4] = [LOC_CELL, LOC_BOTTOM, LOC_PARENT_LO, LOC_PARENT_HI];

/// Bits under a code, in a group's stack and a level's files, that carry the run its position's
/// children may leave unmoved ([`tag`]; `Rules::children_moved`). A code of 52 free cards takes 104
/// bits: 110 with the tag.
const TAG_BITS: u32 = 6;
const TAG_MASK: u128 = (1 << TAG_BITS) - 1;

/// `code` shifted up, with `moved` (a card, or [`NO`](crate::prover::NO): none) under it. Tagged codes
/// sort as their codes do; the copies of one code differ only in their tags, and any of them will do
/// (each names a run moved from a position that is expanded whole: docs/reductions.md).
#[inline(always)]
pub(super) fn tag(code: u128, moved: u8) -> u128 {
    code << TAG_BITS | (moved ^ crate::prover::NO) as u128
}

/// The code and the run of a [`tag`]ged code.
#[inline(always)]
pub(super) fn untag(tagged: u128) -> (u128, u8) {
    (
        tagged >> TAG_BITS,
        (tagged & TAG_MASK) as u8 ^ crate::prover::NO,
    )
}

/// A tagged code with its tag cleared: equal for the copies of one code, and ordered as the codes.
#[inline(always)]
pub(super) fn untagged(tagged: u128) -> u128 {
    tagged & !TAG_MASK
}

/// A group's coding of positions: its free cards, in card order, the 2-bit place of card `i` of them at
/// bits `2i, 2i + 1` of the code.
pub(super) struct Frame {
    pub(super) free: Vec<u8>,
    /// The key with the free cards' fields cleared (the group's fixed part).
    pub(super) fixed: Key,
    /// Per key word, the bits `3j, 3j + 1` of the fields of free cards, and their number.
    pub(super) masks: [u64; 3],
    pub(super) bits: [u32; 3],
    /// Whether the processor has BMI2 (`pext`, `pdep`): then a key is coded a word at a time.
    pub(super) bmi2: bool,
}

impl Frame {
    /// The frame of the group of `key`.
    pub(super) fn of(key: &Key) -> Frame {
        let free: Vec<u8> = (0..52u8)
            .filter(|&c| !matches!(loc_of(key, c), LOC_HOME | LOC_DEALT))
            .collect();
        let mut fixed = *key;
        let mut masks = [0u64; 3];
        for &c in &free {
            set_loc(&mut fixed, c, LOC_HOME);
            masks[key_word(c)] |= 3 << key_shift(c);
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
    pub(super) fn encode(&self, key: &Key) -> u128 {
        #[cfg(target_arch = "x86_64")]
        if self.bmi2 {
            // SAFETY: the processor has BMI2.
            return unsafe { self.encode_bmi2(key) };
        }
        self.encode_cards(key)
    }

    /// [`Frame::encode`] a card at a time.
    pub(super) fn encode_cards(&self, key: &Key) -> u128 {
        let mut x = 0u128;
        for (i, &c) in self.free.iter().enumerate() {
            x |= (place_of(loc_of(key, c)) as u128) << (2 * i);
        }
        x
    }

    /// [`Frame::encode`] a word at a time: in each field, the place's low bit is `b1 | (b2 & b0)` and
    /// its high bit `b2` (fields 1, 2, 4, 5 give places 0, 1, 2, 3), gathered by `pext`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    pub(super) unsafe fn encode_bmi2(&self, key: &Key) -> u128 {
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
    pub(super) fn decode(&self, places: u128) -> Key {
        #[cfg(target_arch = "x86_64")]
        if self.bmi2 {
            // SAFETY: the processor has BMI2.
            return unsafe { self.decode_bmi2(places) };
        }
        self.decode_cards(places)
    }

    /// [`Frame::decode`] a card at a time.
    pub(super) fn decode_cards(&self, x: u128) -> Key {
        let mut k = self.fixed;
        for (i, &c) in self.free.iter().enumerate() {
            k[key_word(c)] |= FIELD_OF[((x >> (2 * i)) & 3) as usize] << key_shift(c);
        }
        k
    }

    /// [`Frame::decode`] a word at a time: places 0, 1, 2, 3 (low bit `l`, high bit `h`) give fields with
    /// `b0 = !(l ^ h)`, `b1 = l & !h`, `b2 = h`, spread by `pdep`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    pub(super) unsafe fn decode_bmi2(&self, x: u128) -> Key {
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

/// The seed in `bytes`, a record of [`RECORD`] bytes or a lean one ([`LEAN`]: its key and trades, its
/// group hash computed again, no parent).
pub(super) fn decode_rec(bytes: &[u8]) -> Rec {
    let word = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let mut rec = [0u32; 13];
    if bytes.len() == LEAN {
        for (i, x) in rec.iter_mut().enumerate().take(5) {
            *x = word(i);
        }
        rec[MASK] = word(5);
        rec[5..10].copy_from_slice(&NO_PARENT);
        let h = group_hash(&unpack(&rec_key(&rec)));
        rec[10] = (h >> 32) as u32;
        rec[11] = h as u32;
    } else {
        for (i, x) in rec.iter_mut().enumerate() {
            *x = word(i);
        }
    }
    rec
}

/// `recs` written as records of [`RECORD`] bytes, or lean ones ([`LEAN`]: the key, then the trades).
pub(super) fn write_recs(w: &mut impl Write, recs: &[Rec], lean: bool) -> std::io::Result<()> {
    let mut bytes = [0u8; RECORD];
    for r in recs {
        if lean {
            for (i, x) in r[..5].iter().chain(&r[MASK..]).enumerate() {
                bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
            }
            w.write_all(&bytes[..LEAN])?;
        } else {
            for (i, x) in r.iter().enumerate() {
                bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
            }
            w.write_all(&bytes)?;
        }
    }
    Ok(())
}

/// Bytes of a code in a level's file.
pub(super) const CODE: usize = std::mem::size_of::<u128>();
