//! The positions that may lie on a line to a given position ([`Cone`]): a win the layered proof reaches
//! after it has forgotten the lines (its files kept for them past their disk budget) is found again by
//! a second search that keeps to them, and keeps its lines.
//!
//! Two sets change one way only along a line of play ([`signature`]): the cards home grow, the cards
//! lying on the (non-parent) card they were dealt on shrink. So a position on a line to `target` has its
//! cards home among `target`'s, and lies on its dealt cards wherever `target` does; a child that does
//! not can never lead there, and the second search drops it.

use crate::key::{signature, Key};

/// The positions whose home and dealt cards allow a line to a target ([`Cone::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cone {
    /// The target's [`signature`]: its home cards, then its dealt cards, per key word.
    sig: [u64; 6],
}

/// The key the rules give a won child (every card home).
const WON: Key = [0; 3];

impl Cone {
    /// The positions that may lie on a line to `target`.
    pub(super) fn of(target: &Key) -> Cone {
        Cone {
            sig: signature(target),
        }
    }

    /// The cone as text (its target's signature), for a search's identity.
    pub(super) fn text(&self) -> String {
        self.sig
            .iter()
            .map(|w| format!("{w:x}"))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// Whether `key` may lie on a line to the target (a won child always may: it ends a line).
    #[inline]
    pub(super) fn holds(&self, key: &Key) -> bool {
        if *key == WON {
            return true;
        }
        let s = signature(key);
        (0..3).all(|w| s[w] & !self.sig[w] == 0 && self.sig[3 + w] & !s[3 + w] == 0)
    }

    /// The children `kids` (with their runs `moved`, in step) that may lie on a line to the target.
    #[inline]
    pub(super) fn keep(&self, kids: &mut Vec<Key>, moved: &mut Vec<u8>) {
        let mut n = 0;
        for i in 0..kids.len() {
            if self.holds(&kids[i]) {
                kids[n] = kids[i];
                moved[n] = moved[i];
                n += 1;
            }
        }
        kids.truncate(n);
        moved.truncate(n);
    }
}
