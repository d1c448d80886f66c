//! The canonical key of a position (SPEC §3): 3 bits per card saying where it lies, 156 bits in all,
//! kept in three 64-bit words in memory and packed into 20 bytes (`[u32; 5]`) in the stores.
//!
//! A card lies home, in a free cell, at the bottom of a column, on the card it was dealt on, or on one
//! of its two possible parents (one rank higher, the other colour). Column and cell order follow from
//! that, so positions that differ only by permuting columns or cells share one key. Everything that
//! reads or writes a key's fields lives here: the place codes, the field of a card, packing, hashing,
//! and the queries the layered proof and the prover ask of a key alone.

use crate::card::Card;

/// The card is home.
pub(crate) const LOC_HOME: u64 = 0;
/// The card is in a free cell.
pub(crate) const LOC_CELL: u64 = 1;
/// The card is at the bottom of a column.
pub(crate) const LOC_BOTTOM: u64 = 2;
/// The card lies on the card it was dealt on (which is not its parent).
pub(crate) const LOC_DEALT: u64 = 3;
/// The card lies on its parent of the lower-numbered suit (clubs or diamonds).
pub(crate) const LOC_PARENT_LO: u64 = 4;
/// The card lies on its parent of the higher-numbered suit (hearts or spades).
pub(crate) const LOC_PARENT_HI: u64 = 5;

/// The canonical key: 3 bits per card, cards 0–20 in word 0, 21–41 in word 1, 42–51 in word 2.
pub type Key = [u64; 3];

/// Low bit of every 3-bit field of a key word.
pub(crate) const FIELD_LOW: u64 = 0x1249_2492_4924_9249 & ((1 << 63) - 1);

const KEY_WORD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut c = 0;
    while c < 64 {
        t[c] = (c / 21) as u8;
        c += 1;
    }
    t
};
const KEY_SHIFT: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut c = 0;
    while c < 64 {
        t[c] = ((c % 21) * 3) as u8;
        c += 1;
    }
    t
};

/// The key word holding card `c`'s field.
#[inline(always)]
pub(crate) const fn key_word(c: Card) -> usize {
    KEY_WORD[c as usize & 63] as usize
}

/// The position of card `c`'s field in its key word.
#[inline(always)]
pub(crate) const fn key_shift(c: Card) -> u32 {
    KEY_SHIFT[c as usize & 63] as u32
}

/// The place code of card `c` in `key`.
#[inline(always)]
pub(crate) fn loc_of(key: &Key, c: Card) -> u64 {
    (key[key_word(c)] >> key_shift(c)) & 7
}

/// Set the place code of card `c` in `key` to `loc`.
#[inline(always)]
pub(crate) fn set_loc(key: &mut Key, c: Card, loc: u64) {
    let w = key_word(c);
    let sh = key_shift(c);
    key[w] = (key[w] & !(7u64 << sh)) | (loc << sh);
}

/// `key` with the 3 bits of card `c` set to `loc`. Every word is rewritten, the two others with a zero
/// mask, rather than one word stored by index: a key built in memory word by word and then read whole
/// (copied, hashed, compared) stalls the processor, whose store forwarding cannot serve a wide load
/// from a narrower store, while this keeps the key in registers.
#[inline(always)]
pub(crate) fn with_loc(key: &Key, c: Card, loc: u64) -> Key {
    let w = key_word(c);
    let sh = key_shift(c);
    let delta = (((key[w] >> sh) & 7) ^ loc) << sh;
    let word = |i: usize| key[i] ^ (delta & 0u64.wrapping_sub((w == i) as u64));
    [word(0), word(1), word(2)]
}

/// Bytes of a packed key ([`pack`]).
pub(crate) const PACKED_BYTES: usize = std::mem::size_of::<[u32; 5]>();

/// The key in its 20 bytes, as the stores keep it.
#[inline(always)]
pub fn pack(k: &Key) -> [u32; 5] {
    [
        k[0] as u32,
        (k[0] >> 32) as u32,
        k[1] as u32,
        (k[1] >> 32) as u32,
        k[2] as u32,
    ]
}

/// The key of its 20 bytes ([`pack`]).
#[inline(always)]
pub fn unpack(k: &[u32; 5]) -> Key {
    [
        k[0] as u64 | (k[1] as u64) << 32,
        k[2] as u64 | (k[3] as u64) << 32,
        k[4] as u64,
    ]
}

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A 64-bit hash of a key.
#[inline(always)]
pub fn hash(k: &Key) -> u64 {
    let a = fold_mul(k[0] ^ 0x243F_6A88_85A3_08D3, k[1] ^ 0x1319_8A2E_0370_7344);
    fold_mul(a ^ k[2] ^ 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89)
}

/// A map keyed by positions, hashed by their words ([`KeyHasher`]) rather than by SipHash: SipHash and
/// its second probe took 15% of the layer beam's time, and positions need no defence against chosen
/// collisions.
pub type KeyMap<V> = std::collections::HashMap<Key, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`]: each 8 bytes written folded in by a 128-bit multiply.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    #[inline(always)]
    fn mix(&mut self, x: u64) {
        self.0 = fold_mul(self.0 ^ x, 0x9E37_79B9_7F4A_7C15);
    }
}

impl std::hash::Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.mix(x);
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.mix(x as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The low bits of the 21 fields of a key word (bits `3i`) gathered into bits `i` (the bits of
/// the fields' cards, less the word's first card), by the usual halving shifts (a portable `pext`).
#[inline(always)]
pub(crate) fn gather_fields(x: u64) -> u64 {
    let mut x = x & FIELD_LOW;
    x = (x | (x >> 2)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x >> 4)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x >> 8)) & 0x001f_0000_ff00_00ff;
    x = (x | (x >> 16)) & 0x001f_0000_0000_ffff;
    (x | (x >> 32)) & 0x1f_ffff
}

/// The low bits of each key word's fields: the third word holds 10 fields where the others hold 21.
const WORD_FIELDS: [u64; 3] = [FIELD_LOW, FIELD_LOW, FIELD_LOW & ((1 << 30) - 1)];

/// Cards lying on the card they were dealt on, which is not their parent (they never return there).
#[inline(always)]
pub fn cards_dealt(key: &Key) -> u32 {
    let mut n = 0;
    for (w, &x) in key.iter().enumerate() {
        let fields = WORD_FIELDS[w];
        n += (x & (x >> 1) & !(x >> 2) & fields).count_ones();
    }
    n
}

/// Which cards are home and which lie on the (non-parent) card they were dealt on: per key word, the
/// home fields' low bits, then the dealt fields' low bits. Both sets only change one way along a line of
/// play (home grows, dealt shrinks), so positions with different signatures and the same
/// [`cards_home`]` + 52 − `[`cards_dealt`] cannot reach each other.
#[inline(always)]
pub fn signature(key: &Key) -> [u64; 6] {
    let mut s = [0u64; 6];
    for (w, &x) in key.iter().enumerate() {
        let fields = WORD_FIELDS[w];
        s[w] = !(x | (x >> 1) | (x >> 2)) & fields;
        s[3 + w] = x & (x >> 1) & !(x >> 2) & fields;
    }
    s
}

/// Cards home in the position of `key`.
#[inline(always)]
pub fn cards_home(key: &Key) -> u32 {
    let mut n = 0;
    for (w, &x) in key.iter().enumerate() {
        let fields = WORD_FIELDS[w];
        n += (!(x | (x >> 1) | (x >> 2)) & fields).count_ones();
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_fields_is_pext() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ 0x94D0_49BB_1331_11EB;
            let want = (0..21).fold(0, |m, i| m | ((x >> (3 * i)) & 1) << i);
            assert_eq!(gather_fields(x), want);
        }
    }

    #[test]
    fn pack_unpack_round_trip_and_fields() {
        let mut key: Key = [0; 3];
        for c in 0..52u8 {
            set_loc(&mut key, c, (c as u64 * 5) % 6);
        }
        assert_eq!(unpack(&pack(&key)), key);
        for c in 0..52u8 {
            assert_eq!(loc_of(&key, c), (c as u64 * 5) % 6);
            assert_eq!(with_loc(&key, c, LOC_CELL), {
                let mut k = key;
                set_loc(&mut k, c, LOC_CELL);
                k
            });
        }
    }
}
