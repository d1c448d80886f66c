//! Microsoft deal numbering (SPEC §1): deals 1 ..= 8,589,934,591, FreeCell Pro's extension included.

use crate::card::Card;
use crate::error::{Error, Result};

/// The largest supported deal number (2^33 - 1).
pub const MAX_DEAL: u64 = (1u64 << 33) - 1;

/// The dealt columns of deal `n`: 8 columns, each from the buried card to the exposed card.
pub fn deal(n: u64) -> Result<[Vec<Card>; 8]> {
    if n == 0 || n > MAX_DEAL {
        return Err(Error::BadDeal(format!(
            "deal number {n} is out of range (deals are numbered 1 to {MAX_DEAL})"
        )));
    }
    let (mut state, mode) = if n < (1u64 << 31) {
        (n as u32, 0u8)
    } else if n < (1u64 << 32) {
        (n as u32, 1)
    } else {
        ((n - (1u64 << 32)) as u32, 2)
    };
    let mut next = move || -> u32 {
        state = state.wrapping_mul(214013).wrapping_add(2531011);
        match mode {
            0 => (state >> 16) & 0x7fff,
            1 => ((state >> 16) & 0x7fff) | 0x8000,
            _ => ((state >> 16) & 0xffff) + 1,
        }
    };
    let mut deck: [Card; 52] = std::array::from_fn(|i| i as Card);
    let mut cols: [Vec<Card>; 8] = Default::default();
    let mut left = 52usize;
    for i in 0..52 {
        let j = (next() as usize) % left;
        cols[i % 8].push(deck[j]);
        deck[j] = deck[left - 1];
        left -= 1;
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::name;

    fn text(n: u64) -> String {
        deal(n)
            .unwrap()
            .iter()
            .map(|c| c.iter().map(|&x| name(x)).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn shared_vectors() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/deals.txt");
        let data =
            std::fs::read_to_string(path).expect("tests/data/deals.txt (a copy of SPEC's vectors)");
        let mut checked = 0;
        for line in data
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let (n, layout) = line.split_once(':').unwrap();
            assert_eq!(text(n.trim().parse().unwrap()), layout.trim(), "deal {n}");
            checked += 1;
        }
        assert!(checked >= 5);
    }

    #[test]
    fn pinned_layouts() {
        assert!(text(1).starts_with("JD KD 2S 4C 3S 6D 6S | 2D KC KS 5C TD 8S 9C"));
        assert!(text(MAX_DEAL).len() > 100);
        for n in [0, MAX_DEAL + 1] {
            assert!(matches!(deal(n), Err(Error::BadDeal(_))));
        }
        let cols = deal(1).unwrap();
        assert_eq!(
            cols.iter().map(Vec::len).collect::<Vec<_>>(),
            [7, 7, 7, 7, 6, 6, 6, 6]
        );
    }
}
