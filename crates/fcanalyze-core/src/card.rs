//! Cards: a card is one byte, `rank * 4 + suit`, with rank 0 = ace … 12 = king and suits in the
//! Microsoft order clubs, diamonds, hearts, spades (so card `i` of the fresh deck is card `i`).

use crate::error::{Error, Result};

/// A card, `rank * 4 + suit` (0..52).
pub type Card = u8;
/// The absence of a card.
pub const NONE: Card = 0xFF;
/// Number of cards in the deck.
pub const DECK: usize = 52;

pub const SUIT_CHARS: &[u8; 4] = b"CDHS";
pub const RANK_CHARS: &[u8; 13] = b"A23456789TJQK";

/// Rank from 0 (ace) to 12 (king).
#[inline(always)]
pub fn rank(c: Card) -> u8 {
    c >> 2
}

/// Suit index: 0 clubs, 1 diamonds, 2 hearts, 3 spades.
#[inline(always)]
pub fn suit(c: Card) -> u8 {
    c & 3
}

/// Diamonds and hearts are red.
#[inline(always)]
pub fn is_red(c: Card) -> bool {
    let s = c & 3;
    (s ^ (s >> 1)) & 1 == 1
}

#[inline(always)]
pub fn make(rank: u8, suit: u8) -> Card {
    (rank << 2) | suit
}

/// True when `c` may be placed on `p` in a column (one rank lower, opposite colour).
#[inline(always)]
pub fn fits_on(c: Card, p: Card) -> bool {
    // One table look-up instead of comparing ranks and colours: this test runs in every inner loop.
    // Entries past the deck (and `NONE`, masked to 63) are empty, as no card fits on them.
    PARENTS[c as usize & 63] >> (p & 63) & 1 != 0
}

/// `PARENTS[c]`: the cards `c` may be placed on in a column, as a bit set (see [`fits_on`]).
const PARENTS: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut c = 0;
    while c < DECK {
        let mut p = 0;
        while p < DECK {
            let (rc, rp) = (c / 4, p / 4);
            let (sc, sp) = (c % 4, p % 4);
            let (red_c, red_p) = (sc == 1 || sc == 2, sp == 1 || sp == 2);
            if rp == rc + 1 && red_p != red_c {
                t[c] |= 1 << p;
            }
            p += 1;
        }
        c += 1;
    }
    t
};

/// The other suit of the same colour (clubs <-> spades, diamonds <-> hearts).
#[inline(always)]
pub fn same_colour_other(s: u8) -> u8 {
    3 - s
}

/// The two suits of the opposite colour, lower index first.
#[inline(always)]
pub fn opposite_suits(s: u8) -> (u8, u8) {
    if s == 0 || s == 3 {
        (1, 2)
    } else {
        (0, 3)
    }
}

/// Parse `AS`, `TD`, `10D`, `kh` (case-insensitive) into a card.
pub fn parse(token: &str) -> Result<Card> {
    let t = token.trim().to_ascii_uppercase();
    let bytes = t.as_bytes();
    let bad = || {
        Error::BadBoard(format!(
            "bad card token {token:?} (expected rank A23456789TJQK and suit CDHS, e.g. TD or 10D)"
        ))
    };
    // Bytes, not string slices: a token such as "é" is two bytes but no char boundary at 1.
    let (rank_ch, suit_ch) = match bytes {
        [r, s] => (*r, *s),
        [b'1', b'0', s] => (b'T', *s),
        _ => return Err(bad()),
    };
    let r = RANK_CHARS
        .iter()
        .position(|&x| x == rank_ch)
        .ok_or_else(bad)?;
    let s = SUIT_CHARS
        .iter()
        .position(|&x| x == suit_ch)
        .ok_or_else(bad)?;
    Ok(make(r as u8, s as u8))
}

/// The card's two-character name, e.g. `TD`.
pub fn name(c: Card) -> String {
    let mut s = String::with_capacity(2);
    s.push(RANK_CHARS[rank(c) as usize] as char);
    s.push(SUIT_CHARS[suit(c) as usize] as char);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in 0..52u8 {
            assert_eq!(parse(&name(c)).unwrap(), c);
        }
        assert_eq!(parse("10d").unwrap(), parse("TD").unwrap());
        assert!(parse("1D").is_err());
        assert!(parse("KX").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn colours_and_fits() {
        assert!(!is_red(parse("AC").unwrap()));
        assert!(is_red(parse("AD").unwrap()));
        assert!(is_red(parse("AH").unwrap()));
        assert!(!is_red(parse("AS").unwrap()));
        assert!(fits_on(parse("9H").unwrap(), parse("TS").unwrap()));
        assert!(!fits_on(parse("9H").unwrap(), parse("TD").unwrap()));
        assert!(!fits_on(parse("8H").unwrap(), parse("TS").unwrap()));
    }

    /// The table agrees with the rule (one rank lower, opposite colour) for every card and `NONE`.
    #[test]
    fn fits_on_table_matches_the_rule() {
        let cards = || (0..DECK as Card).chain([NONE]);
        for c in cards() {
            for p in cards() {
                let rule = rank(p) == rank(c) + 1 && is_red(p) != is_red(c);
                assert_eq!(fits_on(c, p), rule, "{c} on {p}");
            }
        }
    }
}
