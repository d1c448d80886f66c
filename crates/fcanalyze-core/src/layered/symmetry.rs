//! Trades within a group (docs/reductions.md, "Trades within a group"): the lemma a symmetry
//! reduction of the layered proof would rest on, checked on whole reachable sets, and the share of a
//! proof's positions such a reduction would leave to search, measured. Not used by the search yet.
//!
//! Within a group no card goes home and no dealt card moves. When two cards `x`, `y` of one rank and
//! colour are both free (in play, off their dealt cards, no card on them lying on its dealt card) and
//! neither can go home from the group (their rank is above both foundations' next cards, or both are
//! their foundations' next cards with the foundations equally high), the trade that gives each the
//! other's place, and the cards one rank lower of the other colour each other's parent
//! ([`super::twin::swap`]), takes every move within the group to a move within the group. So when it
//! takes the group's seeds onto its seeds, it takes the group's positions onto its positions: the
//! group could be searched by orbits, one position of each, its count the orbits' sizes.

use std::collections::{HashMap, HashSet};

use crate::autoplay::Autoplay;
use crate::card::{rank, Card};
use crate::key::{loc_of, set_loc, signature, Key, LOC_BOTTOM};
use crate::layout::Layout;
use crate::position::Position;
use crate::prover::Rules;

use super::trades::{alike, candidates};
use super::twin::{foundations, swap};

/// A map of keys that trades two cards.
type Trade = fn(&Key, Card, Card) -> Key;

/// One position of the orbit of `key` under `trades` (commuting, each its own inverse), the same for
/// every position of the orbit, without listing the orbit: the trades are taken from the kings down
/// (`trades` in decreasing rank). A trade at rank r moves only its two cards and the parents of the cards
/// of rank r - 1, so once the higher ranks are settled, x and y lie where they lie in every position of the
/// orbit that agrees above, or each where the other lies: the trade is made when it puts x on the lower
/// place. When both lie in cells, nothing lies on them and the trade changes nothing. When both lie at
/// the bottom of columns it changes only the parents of the cards on them: both ways are followed
/// down, and the least result taken.
fn canonical(key: &Key, trades: &[(Card, Card)]) -> Key {
    let mut k = *key;
    for (i, &(x, y)) in trades.iter().enumerate() {
        let (lx, ly) = (loc_of(&k, x), loc_of(&k, y));
        if lx > ly {
            k = swap(&k, x, y);
        } else if lx == ly && lx == LOC_BOTTOM {
            let rest = &trades[i + 1..];
            return canonical(&k, rest).min(canonical(&swap(&k, x, y), rest));
        }
    }
    k
}

/// What [`examine`] finds in one reachable set.
#[derive(Debug, Default)]
struct Findings {
    positions: u64,
    /// Trades that take their group's seeds onto its seeds, over all groups.
    kept: u64,
    /// Positions whose image under such a trade of their group is not reachable (the lemma says 0).
    broken: u64,
    /// Orbits of the reachable set under the kept trades of each group: what a search by orbits holds.
    orbits: u64,
    /// Positions whose [`canonical`] position differs from that of an image (0: it is canonical).
    uncanonical: u64,
}

/// The reachable set of `deal` with `ncells` cells, breadth first, its groups' seeds (positions one
/// move from another group, and the start), and each group's trades (made by `trade`) checked; with
/// `canon`, [`canonical`] too, on every image (the orbits then counted at their least keys; without,
/// at their canonical positions).
fn examine(layout: &Layout, ncells: usize, trade: Trade, canon: bool) -> Findings {
    let (mut p0, _) = Position::from_layout(layout, ncells).unwrap();
    p0.settle(None);
    let rules = Rules::new(layout, ncells);
    let root = *p0.key();
    let (mut all, mut set, mut seeds) = (vec![root], HashSet::from([root]), HashSet::from([root]));
    let mut i = 0;
    while i < all.len() {
        let (p, sig) = (rules.decode(&all[i]), signature(&all[i]));
        rules.for_each_child(&p, |q| {
            let k = *q.key();
            if signature(&k) != sig {
                seeds.insert(k);
            }
            if set.insert(k) {
                all.push(k);
            }
        });
        i += 1;
    }
    // Each group's candidate trades, kept while every seed's image is a seed.
    let mut groups: HashMap<[u64; 6], Vec<(Card, Card, bool)>> = HashMap::new();
    for key in &all {
        let trades = groups.entry(signature(key)).or_insert_with(|| {
            let c = candidates(&rules, key);
            c.into_iter().map(|(x, y)| (x, y, true)).collect()
        });
        if seeds.contains(key) {
            for t in trades.iter_mut().filter(|t| t.2) {
                t.2 = seeds.contains(&trade(key, t.0, t.1));
            }
        }
    }
    let mut f = Findings {
        positions: all.len() as u64,
        kept: groups.values().flatten().filter(|t| t.2).count() as u64,
        ..Findings::default()
    };
    for key in &all {
        let mut kept: Vec<_> = groups[&signature(key)].iter().filter(|t| t.2).collect();
        kept.sort_by_key(|t| std::cmp::Reverse(rank(t.0)));
        let pairs: Vec<_> = kept.iter().map(|t| (t.0, t.1)).collect();
        let least_of = |k: &Key| canon.then(|| canonical(k, &pairs));
        let own = least_of(key);
        f.broken += kept
            .iter()
            .filter(|t| !set.contains(&trade(key, t.0, t.1)))
            .count() as u64;
        let Some(own) = own else {
            // Each orbit counted at its canonical position (the test below checks `canonical`).
            f.orbits += (canonical(key, &pairs) == *key) as u64;
            continue;
        };
        // Every image listed (the trades commute and are their own inverses): the orbit counted at its
        // least key, and every image's canonical position compared with this one's.
        let mut image = *key;
        let mut least = true;
        for n in 1u32..1 << kept.len() {
            let t = kept[n.trailing_zeros() as usize];
            image = trade(&image, t.0, t.1);
            least &= *key <= image;
            f.uncanonical += (least_of(&image) != Some(own)) as u64;
        }
        f.orbits += least as u64;
    }
    f
}

/// The positions of `key`'s orbit under `trades`, each once, with the trades that lead to it from
/// `key` (a mask of `trades`).
fn orbit(key: &Key, trades: &[(Card, Card)]) -> Vec<(Key, u32)> {
    let mut out = vec![(*key, 0)];
    let (mut image, mut mask) = (*key, 0u32);
    for n in 1u32..1 << trades.len() {
        let j = n.trailing_zeros() as usize;
        image = swap(&image, trades[j].0, trades[j].1);
        mask ^= 1 << j;
        out.push((image, mask));
    }
    out.sort_unstable_by_key(|m| m.0);
    out.dedup_by_key(|m| m.0);
    out
}

/// What [`by_orbits`] counts.
#[derive(Debug, Default, PartialEq)]
struct OrbitSearch {
    /// Positions, each orbit counted by its size.
    positions: u64,
    /// Orbits searched: the positions a search by orbits holds.
    orbits: u64,
    /// Children leaving a group that were found as images of the representative's.
    mapped: u64,
}

/// A reference search by orbits, in memory: groups in the order of their layers, each from its seeds
/// (all of them, as today's search sends them on), with the trades whose images of the seeds are
/// seeds; within a group only canonical positions, each counted with its orbit; children in later
/// layers from every member of an orbit. A child of a member is checked to be the image of the
/// representative's child whenever both foundations of the trades' cards are below their rank in it
/// (docs/reductions.md), the way a search would make it without expanding the member.
fn by_orbits(layout: &Layout, ncells: usize) -> OrbitSearch {
    let (mut p0, _) = Position::from_layout(layout, ncells).unwrap();
    p0.settle(None);
    let rules = Rules::new(layout, ncells);
    let group_of = |k: &Key| (crate::layer::progress(k), signature(k));
    let mut pending: std::collections::BTreeMap<_, HashSet<Key>> = Default::default();
    pending
        .entry(group_of(p0.key()))
        .or_default()
        .insert(*p0.key());
    let mut out = OrbitSearch::default();
    while let Some((group, seeds)) = pending.pop_first() {
        let any = *seeds.iter().next().unwrap();
        let mut trades: Vec<_> = candidates(&rules, &any)
            .into_iter()
            .filter(|&(x, y)| seeds.iter().all(|s| seeds.contains(&swap(s, x, y))))
            .collect();
        trades.sort_by_key(|t| std::cmp::Reverse(rank(t.0)));
        let group_found = foundations(&any);
        let mut reps: HashSet<Key> = seeds.iter().map(|s| canonical(s, &trades)).collect();
        let mut queue: Vec<Key> = reps.iter().copied().collect();
        while let Some(r) = queue.pop() {
            let members = orbit(&r, &trades);
            out.positions += members.len() as u64;
            out.orbits += 1;
            let mut leaving = vec![];
            rules.for_each_child(&rules.decode(&r), |q| {
                let k = *q.key();
                if group_of(&k) == group {
                    let c = canonical(&k, &trades);
                    if reps.insert(c) {
                        queue.push(c);
                    }
                } else {
                    leaving.push(k);
                }
            });
            for (m, mask) in &members {
                let mut own = HashSet::new();
                rules.for_each_child(&rules.decode(m), |q| {
                    if group_of(q.key()) != group {
                        own.insert(*q.key());
                    }
                });
                // The trades that take the representative to this member, and the children of the
                // representative whose images are children of the member.
                let h: Vec<_> = (0..trades.len())
                    .filter(|j| mask >> j & 1 == 1)
                    .map(|j| trades[j])
                    .collect();
                for q in &leaving {
                    let found = foundations(q);
                    let below = h.iter().all(|&(x, y)| alike(&group_found, &found, x, y));
                    if below && *mask != 0 {
                        let image = h.iter().fold(*q, |k, &(x, y)| swap(&k, x, y));
                        assert!(own.contains(&image), "a mapped child that is not a child");
                        out.mapped += 1;
                    }
                }
                for k in own {
                    pending.entry(group_of(&k)).or_default().insert(k);
                }
            }
        }
    }
    out
}

/// The trade with the cards on `x` and `y` left on the parent they had: wrong, for the test below.
fn trade_without_parents(key: &Key, x: Card, y: Card) -> Key {
    let mut k = *key;
    let (fx, fy) = (loc_of(key, x), loc_of(key, y));
    set_loc(&mut k, x, fy);
    set_loc(&mut k, y, fx);
    k
}

/// The lemma holds on the whole reachable sets of small proofs under both rules of automatic moves:
/// a trade that keeps a group's seeds keeps its positions. Trades are found, they make orbits, and
/// [`canonical`] gives every position of an orbit the same one.
#[test]
fn trades_that_keep_the_seeds_keep_the_group() {
    for autoplay in [Autoplay::Safe, Autoplay::Max] {
        for (deal, ncells) in [(11982, 4), (11982, 3), (9544, 2), (200, 1)] {
            let layout = Layout::deal(deal).unwrap().with_autoplay(autoplay);
            let f = examine(&layout, ncells, swap, true);
            let what = format!("deal {deal} with {ncells} cells, {autoplay:?}: {f:?}");
            assert_eq!((f.broken, f.uncanonical), (0, 0), "{what}");
            assert!(f.kept > 0 && f.orbits < f.positions, "{what}");
            // Orbits counted at their canonical positions: as many as at their least keys.
            assert_eq!(
                examine(&layout, ncells, swap, false).orbits,
                f.orbits,
                "{what}"
            );
        }
    }
    let f = examine(&Layout::deal(11982).unwrap(), 4, swap, false);
    assert_eq!((f.positions, f.orbits), (61_643, 30_028), "{f:?}");
}

/// A search by orbits counts every position of the reachable set, holding fewer.
#[test]
fn a_search_by_orbits_counts_every_position() {
    for autoplay in [Autoplay::Safe, Autoplay::Max] {
        for (deal, ncells) in [(11982, 4), (11982, 3), (9544, 2), (200, 1)] {
            let layout = Layout::deal(deal).unwrap().with_autoplay(autoplay);
            let (f, o) = (
                examine(&layout, ncells, swap, false),
                by_orbits(&layout, ncells),
            );
            let what = format!("deal {deal} with {ncells} cells, {autoplay:?}: {o:?}");
            assert_eq!(o.positions, f.positions, "{what}");
            assert!(o.orbits < f.positions && o.mapped > 0, "{what}");
        }
    }
}

/// The check has teeth: a trade that leaves the cards on `x` and `y` on their old parents passes
/// the seeds of some groups and breaks the lemma.
#[test]
fn a_trade_that_keeps_the_parents_breaks_the_lemma() {
    let layout = Layout::deal(9544).unwrap();
    let f = examine(&layout, 2, trade_without_parents, false);
    assert!(f.broken > 0, "{f:?}");
}

/// The share of positions a search by orbits would hold: `SYM=D:K,...` (default 12038:2), run with
/// `cargo test --release -p fcanalyze-core --lib symmetry::share -- --ignored --nocapture`.
#[test]
#[ignore]
fn share() {
    let spec = std::env::var("SYM").unwrap_or_else(|_| "12038:2".into());
    for s in spec.split(',') {
        let (d, k) = s.split_once(':').expect("D:K");
        let (deal, ncells) = (d.parse().unwrap(), k.parse().unwrap());
        let f = examine(&Layout::deal(deal).unwrap(), ncells, swap, false);
        eprintln!(
            "deal {deal} with {ncells} cells: {} positions, {} orbits ({:.3}), {} trades kept, lemma broken {}",
            f.positions,
            f.orbits,
            f.orbits as f64 / f.positions as f64,
            f.kept,
            f.broken
        );
    }
}
