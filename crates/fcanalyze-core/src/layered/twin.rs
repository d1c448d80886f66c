//! Twin groups (docs/reductions.md, "Twin groups"): two groups of a layer that differ only in which of
//! two cards of one rank and colour is home. Within a group no card goes home and no dealt card moves,
//! so its moves depend on the ranks and colours of its free cards; the map that gives each of the two
//! cards the other's place, and the cards that may lie on them (one rank lower, the other colour) the
//! other parent ([`Twin::map_key`]), takes the moves within one group to the moves within the other,
//! as long as the automatic moves treat both alike. So when the map also takes the second group's
//! seeds onto the first's, it takes the first group's positions onto the second's: the search of the
//! first (its *owner*) by levels also expands, for each of its positions, the second's image of it
//! (its *follower*), keeping only the children that leave the group, and the follower's positions
//! are counted without being searched. Nothing is pruned: the count and the positions sent to later
//! layers are those of the search of both. An owner whose search ends in its set (a small group), or
//! whose follower's seeds are not the images of its own, leaves the follower to be searched.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::card::{make, opposite_suits, rank, suit, Card};
use crate::error::Result;
use crate::key::{
    loc_of, set_loc, signature, Key, LOC_DEALT, LOC_HOME, LOC_PARENT_HI, LOC_PARENT_LO,
};
use crate::prover::Rules;
#[cfg(test)]
use crate::prover::NO;

use super::merge::{LayerFile, Merge};

/// A follower group and the map from its owner's positions to its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Twin {
    /// The two cards that trade places: `x` is home in the owner, `y` in the follower.
    x: Card,
    y: Card,
    /// The follower's number in the layer (the merge's order of hashes), its hash and signature.
    pub(super) group: u64,
    pub(super) hash: u64,
    pub(super) sig: [u64; 6],
}

impl Twin {
    /// The image of `key` in the other group of the pair (the map is its own inverse).
    #[inline(always)]
    pub(super) fn map_key(&self, key: &Key) -> Key {
        swap(key, self.x, self.y)
    }

    /// The image of card `c` (of the run a position may leave unmoved: [`NO`], none, stays [`NO`]).
    #[inline(always)]
    pub(super) fn map_card(&self, c: u8) -> u8 {
        match c {
            _ if c == self.x => self.y,
            _ if c == self.y => self.x,
            _ => c,
        }
    }
}

/// `key` with cards `x` and `y` (one rank and colour) trading places, and the cards one rank lower of
/// the other colour trading parents.
#[inline(always)]
pub(super) fn swap(key: &Key, x: Card, y: Card) -> Key {
    let mut k = *key;
    let (fx, fy) = (loc_of(key, x), loc_of(key, y));
    set_loc(&mut k, x, fy);
    set_loc(&mut k, y, fx);
    if rank(x) > 0 {
        let (a, b) = opposite_suits(suit(x));
        for s in [a, b] {
            let c = make(rank(x) - 1, s);
            match loc_of(&k, c) {
                LOC_PARENT_LO => set_loc(&mut k, c, LOC_PARENT_HI),
                LOC_PARENT_HI => set_loc(&mut k, c, LOC_PARENT_LO),
                _ => {}
            }
        }
    }
    k
}

/// The cards of each suit home in the position of `key` (each foundation's height).
pub(super) fn foundations(key: &Key) -> [u8; 4] {
    let mut found = [0u8; 4];
    for c in 0..52u8 {
        if loc_of(key, c) == LOC_HOME {
            found[suit(c) as usize] += 1;
        }
    }
    found
}

/// Whether a card lies on its dealt card in the position of `key` when that card is `x` or `y`.
pub(super) fn dealt_on_either(rules: &Rules, key: &Key, x: Card, y: Card) -> bool {
    (0..52u8)
        .any(|c| loc_of(key, c) == LOC_DEALT && matches!(rules.dealt_on(c), d if d == x || d == y))
}

/// The pairs of cards whose trade takes the group of `key` (a position of it) to a twin: the top card
/// `x` of one foundation and the next card `y` of the other foundation of its colour, one rank apart
/// in height, such that `y` is not on its dealt card, no card lies on its dealt card when that is `x`
/// or `y`, and the cards that go home automatically in one group are the images of those in the other.
fn trades(rules: &Rules, key: &Key) -> Vec<(Card, Card)> {
    let found = foundations(key);
    let mut out = Vec::new();
    for (a, b) in [(0u8, 3u8), (3, 0), (1, 2), (2, 1)] {
        if found[a as usize] != found[b as usize] + 1 {
            continue;
        }
        let r = found[b as usize];
        let (x, y) = (make(r, a), make(r, b));
        if loc_of(key, y) == LOC_DEALT {
            continue;
        }
        if dealt_on_either(rules, key, x, y) {
            continue;
        }
        let mut other = found;
        other[a as usize] -= 1;
        other[b as usize] += 1;
        let swap_bits = |m: u64| {
            let (bx, by) = (m >> x & 1, m >> y & 1);
            m & !(1 << x | 1 << y) | bx << y | by << x
        };
        if swap_bits(rules.auto_cards(&found)) != rules.auto_cards(&other) {
            continue;
        }
        out.push((x, y));
    }
    out
}

/// The twin groups of a layer: each pair's owner is the group the merge gives first, and its search
/// decides whether it takes its follower on ([`Twins::decide`]); the thread that reaches the follower
/// waits for that decision ([`Twins::wait`]), then passes over the follower or searches it.
#[derive(Default)]
pub(super) struct Twins {
    /// Each owner with its follower.
    owners: HashMap<GroupId, Twin>,
    /// Each follower with its owner's decision, once made.
    followers: Mutex<HashMap<GroupId, Option<bool>>>,
    decided: Condvar,
}

/// A group of a layer: its number (the merge's order of hashes) and signature.
type GroupId = (u64, [u64; 6]);

/// What the thread that reaches a group does with it ([`Twins::wait`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reached {
    /// Search it: it is no follower, or its owner did not take it on.
    Search,
    /// Pass over it: its owner's search counts it.
    Taken,
    /// Another thread ended the layer first.
    Stopped,
}

impl Twins {
    /// The twins of the layer in `file`: the first seed of each hash names its group (the rare other
    /// groups of a hash are left alone), and each group is paired with the first later group its
    /// [`trades`] lead to, unless one of them is paired already or both share a hash.
    pub(super) fn of(file: &LayerFile, rules: &Rules) -> Result<Twins> {
        let mut merge = Merge::open(file)?;
        let mut groups: Vec<(u64, u64, Key)> = Vec::new();
        let mut by_sig: HashMap<[u64; 6], usize> = HashMap::new();
        let mut number = 0u64;
        while let Some(h) = merge.peek_hash() {
            if let Some(key) = merge.next_seed(h)? {
                by_sig.entry(signature(&key)).or_insert(groups.len());
                groups.push((number, h, key));
            }
            merge.skip_group(h)?;
            number += 1;
        }
        let mut twins = Twins::default();
        let followers = twins.followers.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut paired = vec![false; groups.len()];
        for i in 0..groups.len() {
            if paired[i] {
                continue;
            }
            let (n, h, key) = groups[i];
            for (x, y) in trades(rules, &key) {
                let Some(&j) = by_sig.get(&signature(&swap(&key, x, y))) else {
                    continue;
                };
                let (m, g, other) = groups[j];
                if j <= i || paired[j] || g == h {
                    continue;
                }
                paired[i] = true;
                paired[j] = true;
                let sig = signature(&other);
                let twin = Twin {
                    x,
                    y,
                    group: m,
                    hash: g,
                    sig,
                };
                twins.owners.insert((n, signature(&key)), twin);
                followers.insert((m, sig), None);
                break;
            }
        }
        Ok(twins)
    }

    /// The follower of group `group` of signature `sig`, if it owns one.
    pub(super) fn follower(&self, group: u64, sig: &[u64; 6]) -> Option<Twin> {
        self.owners.get(&(group, *sig)).copied()
    }

    /// The owner of `twin` takes it on (`taken`) or leaves it to be searched; the first decision
    /// holds.
    pub(super) fn decide(&self, twin: &Twin, taken: bool) {
        let mut f = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d @ None) = f.get_mut(&(twin.group, twin.sig)) {
            *d = Some(taken);
            self.decided.notify_all();
        }
    }

    /// What to do with group `group` of signature `sig`, reached by a thread: for a follower, once its
    /// owner has decided (the owner's number is lower, so its thread claimed it first and gets to it
    /// unless the layer ends, `stop`).
    pub(super) fn wait(&self, group: u64, sig: &[u64; 6], stop: &AtomicBool) -> Reached {
        let mut f = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match f.get(&(group, *sig)) {
                None | Some(Some(false)) => return Reached::Search,
                Some(Some(true)) => return Reached::Taken,
                Some(None) if stop.load(Ordering::Relaxed) => return Reached::Stopped,
                Some(None) => {
                    f = self
                        .decided
                        .wait_timeout(f, Duration::from_millis(20))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }
}

/// Whether the seeds of the follower `twin` in `file`, mapped into the owner's group (signature
/// `owner_sig`) and coded by `encode`, are exactly `owner` (the owner's seeds, its first level: sorted
/// codes without duplicates); the seeds read are at most `max` (past it, the answer is no).
pub(super) fn seeds_match(
    file: &LayerFile,
    twin: &Twin,
    owner_sig: &[u64; 6],
    encode: impl Fn(&Key) -> u128,
    owner: &mut dyn Iterator<Item = Result<u128>>,
    max: usize,
) -> Result<bool> {
    let mut merge = Merge::open_at(file, twin.hash)?;
    let mut codes = Vec::new();
    while let Some(key) = merge.next_seed(twin.hash)? {
        if signature(&key) != twin.sig {
            continue;
        }
        let image = twin.map_key(&key);
        if signature(&image) != *owner_sig || codes.len() == max {
            return Ok(false);
        }
        codes.push(encode(&image));
    }
    codes.sort_unstable();
    codes.dedup();
    for c in codes {
        match owner.next().transpose()? {
            Some(o) if o == c => {}
            _ => return Ok(false),
        }
    }
    Ok(owner.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autoplay::Autoplay;
    use crate::key::LOC_CELL;
    use crate::layout::Layout;

    /// A key with the cards of `home` home (by suit, clubs to spades, the lowest first) and every
    /// other card in a free cell (not a position of play: enough for [`trades`]).
    fn with_home(home: [u8; 4]) -> Key {
        let mut key: Key = [0; 3];
        for c in 0..52u8 {
            let loc = if rank(c) < home[suit(c) as usize] {
                LOC_HOME
            } else {
                LOC_CELL
            };
            set_loc(&mut key, c, loc);
        }
        key
    }

    /// Two black 3s trade when the red aces are not home (no black 4 goes home by itself in either
    /// group), not when the red 3s are (4C would in one, 4S in the other), and never when every card
    /// that fits goes home at once.
    #[test]
    fn trades_need_the_automatic_moves_alike() {
        let safe = Rules::new(&Layout::deal(1).unwrap(), 2);
        let max = Rules::new(&Layout::deal(1).unwrap().with_autoplay(Autoplay::Max), 2);
        let (c3, s3) = (make(2, 0), make(2, 3));
        let low = with_home([3, 0, 0, 2]);
        assert_eq!(trades(&safe, &low), vec![(c3, s3)]);
        assert_eq!(trades(&safe, &with_home([2, 0, 0, 3])), vec![(s3, c3)]);
        assert!(trades(&safe, &with_home([3, 3, 3, 2])).is_empty());
        assert!(trades(&max, &low).is_empty());
        assert!(trades(&safe, &with_home([3, 0, 0, 3])).is_empty());
    }

    #[test]
    fn the_map_is_its_own_inverse_and_trades_parents() {
        let (x, y) = (make(2, 0), make(2, 3)); // 3C, 3S
        let mut key: Key = [0; 3];
        for c in 0..52u8 {
            set_loc(&mut key, c, [1, 2, 4, 5][(c as usize * 7) % 4]);
        }
        set_loc(&mut key, x, LOC_HOME);
        set_loc(&mut key, make(1, 1), LOC_PARENT_HI); // 2D on 3S
        set_loc(&mut key, make(1, 2), LOC_PARENT_LO); // 2H on 3C
        let twin = Twin {
            x,
            y,
            group: 0,
            hash: 0,
            sig: [0; 6],
        };
        let image = twin.map_key(&key);
        assert_eq!(loc_of(&image, y), LOC_HOME);
        assert_eq!(loc_of(&image, x), loc_of(&key, y));
        assert_eq!(loc_of(&image, make(1, 1)), LOC_PARENT_LO);
        assert_eq!(loc_of(&image, make(1, 2)), LOC_PARENT_HI);
        assert_eq!(loc_of(&image, make(1, 0)), loc_of(&key, make(1, 0)));
        assert_eq!(twin.map_key(&image), key);
        assert_eq!(
            (twin.map_card(x), twin.map_card(y), twin.map_card(NO)),
            (y, x, NO)
        );
    }
}
