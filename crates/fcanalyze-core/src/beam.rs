//! Beam search: a heuristic solve that goes breadth first, one move deeper at a time, and keeps at each
//! depth only the `width` new positions the best-first heuristic scores lowest ([`Weights::BEST_FIRST`]).
//!
//! It finds the lines that best-first and depth-first searches miss for hundreds of millions of
//! positions: a best-first search follows its heuristic into one region, a beam keeps a whole front of
//! them. Deals 9499, 13599 and 16322 with one and two cells, which cost the prover 60 to 260 million
//! positions, are won by a beam of 100,000 within 3.3 million.
//!
//! A beam that never had to drop a position is a breadth-first search of the whole reachable set: when
//! it runs dry, that is a proof, with the exact count (SPEC §3). Otherwise a beam that runs dry or out
//! of budget proves nothing and ends undecided. Positions already kept at an earlier depth are not kept
//! again, so the count is of distinct positions. Every choice is deterministic: ties in score go to the
//! lower key.
//!
//! The line comes from the depths kept (each position with its parent's index one depth up), is
//! shortened and made concrete as the prover's lines are ([`crate::line::checked_line`]), and is
//! replayed.

use std::collections::hash_map::Entry;
use std::collections::BTreeMap;
use std::time::Instant;

use crate::error::Result;
use crate::heuristic::{scored_children, Weights};
use crate::key::{hash, Key, KeyMap};
use crate::layer::progress;
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::checked_line;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::position::{Move, Position};
use crate::prover::{KeySet, Rules};

/// A position kept at some depth, with the index of its parent one depth up.
#[derive(Clone, Copy)]
struct Kept {
    key: Key,
    parent: u32,
}

/// Search `layout` with `ncells` free cells by a beam of `width` positions per depth, until won, run dry
/// or out of `limits` (positions kept, milliseconds).
pub fn beam(layout: &Layout, ncells: usize, width: usize, limits: Limits) -> Result<SearchResult> {
    beam_weighted(layout, ncells, width, &Weights::BEST_FIRST, limits)
}

/// Look-ups of a beam's set between the prefetch of a key's bucket and its look-up.
const PREFETCH_AHEAD: usize = 8;

/// [`beam`] with the heuristic's weights `w`.
pub fn beam_weighted(
    layout: &Layout,
    ncells: usize,
    width: usize,
    w: &Weights,
    limits: Limits,
) -> Result<SearchResult> {
    let start = Instant::now();
    let width = width.max(1);
    let (mut p0, origin) = Position::from_layout(layout, ncells)?;
    p0.settle(None);
    let done = |outcome, positions, solution, exhausted| {
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    };
    let root = *p0.key();
    let line = |chain: Vec<Key>| {
        checked_line(
            layout,
            ncells,
            &Rules::new(layout, ncells),
            chain,
            "a beam's line",
        )
    };
    if p0.is_won() || p0.is_sorted() {
        return done(Outcome::Solved, 1, line(vec![root])?, None);
    }
    let mut seen = KeySet::new();
    seen.insert(&root);
    let mut depths: Vec<Vec<Kept>> = vec![vec![Kept {
        key: root,
        parent: 0,
    }]];
    // Whether every new position so far was kept (the beam is then a complete breadth-first search).
    let mut complete = true;
    let mut moves: Vec<Move> = Vec::new();
    let mut kids: Vec<(Key, u32, bool)> = Vec::new();
    let mut next: Vec<(u32, Key, u32)> = Vec::new();
    loop {
        let front = depths.last().expect("the root's depth");
        next.clear();
        for (i, kept) in front.iter().enumerate() {
            let p = Position::from_key_tracked(&kept.key, &origin, ncells as u8);
            scored_children(&p, &origin, w, &mut moves, &mut kids);
            for &(key, score, sorted) in &kids {
                if sorted {
                    let mut chain = vec![key, kept.key];
                    let mut at = kept.parent;
                    for d in depths[..depths.len() - 1].iter().rev() {
                        chain.push(d[at as usize].key);
                        at = d[at as usize].parent;
                    }
                    chain.reverse();
                    let positions = seen.len() as u64 + 1;
                    return done(Outcome::Solved, positions, line(chain)?, None);
                }
                next.push((score, key, i as u32));
            }
        }
        // One entry per position (the first parent found keeps it), then those not seen yet (each
        // bucket of the set asked for a few look-ups ahead: most are misses of the caches), then the
        // best `width`.
        next.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.2.cmp(&b.2)));
        next.dedup_by(|later, first| later.1 == first.1);
        let mut new = 0;
        for j in 0..next.len() {
            if let Some(ahead) = next.get(j + PREFETCH_AHEAD) {
                seen.prefetch(hash(&ahead.1));
            }
            if !seen.contains(&next[j].1) {
                next[new] = next[j];
                new += 1;
            }
        }
        next.truncate(new);
        if next.len() > width {
            next.select_nth_unstable_by(width, |a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            next.truncate(width);
            complete = false;
        }
        if next.is_empty() {
            let outcome = if complete {
                Outcome::Unsolvable
            } else {
                Outcome::Undecided
            };
            return done(outcome, seen.len() as u64, vec![], None);
        }
        let room = limits.max_positions.saturating_sub(seen.len() as u64);
        if next.len() as u64 > room {
            return done(
                Outcome::Undecided,
                seen.len() as u64,
                vec![],
                Some(Budget::Positions),
            );
        }
        for (j, c) in next.iter().enumerate() {
            if let Some(ahead) = next.get(j + PREFETCH_AHEAD) {
                seen.prefetch(hash(&ahead.1));
            }
            seen.insert(&c.1);
        }
        depths.push(
            next.iter()
                .map(|&(_, key, parent)| Kept { key, parent })
                .collect(),
        );
        if limits.out_of_time(start) {
            return done(
                Outcome::Undecided,
                seen.len() as u64,
                vec![],
                Some(Budget::Time),
            );
        }
    }
}

/// Search `layout` with `ncells` free cells by a beam over the layers of [`progress`] (cards home plus
/// cards that left the card they were dealt on; no move lowers it), for the lines that heuristics miss
/// altogether. The lowest layer waiting is searched breadth first from `width` of its seeds (the positions
/// one move into it), each position of the layer it reaches kept, up to `layer_cap` of them; what one move
/// takes to a higher layer waits there as its seeds. Within a layer every move can be undone, so the
/// shuffling of cards is searched whole, and only the choice of what goes home or leaves its dealt card
/// is pruned. The seeds kept are chosen by a hash of their keys, not by the heuristic: spread over the
/// layer instead of where the heuristic points, which is where it went wrong on the deals that need this
/// (deal 17760 with 2 cells: every heuristic search and beam we had ran past 150 million positions
/// without a line, the layered proof past 50 GB of disk; this wins it within 14 million positions). Ties
/// go to the lower key, then the lower parent, so the search is deterministic.
///
/// A layer beam that never dropped a position is a complete search: when it runs dry, that is a proof,
/// with the exact count. Otherwise running dry or out of `limits` is undecided.
pub fn layer_beam(
    layout: &Layout,
    ncells: usize,
    width: usize,
    layer_cap: usize,
    limits: Limits,
) -> Result<SearchResult> {
    let start = Instant::now();
    let width = width.max(1);
    let (mut p0, _) = Position::from_layout(layout, ncells)?;
    p0.settle(None);
    let rules = Rules::new(layout, ncells);
    let root = *p0.key();
    let done = |outcome, positions, solution, exhausted| {
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    };
    let line = |chain: Vec<Key>| checked_line(layout, ncells, &rules, chain, "a layer beam's line");
    if rules.is_sorted(&root) {
        return done(Outcome::Solved, 1, line(vec![root])?, None);
    }
    // Every position kept, with the one it was reached from (the start's is itself).
    let mut parent: KeyMap<Key> = KeyMap::default();
    parent.insert(root, root);
    let chain_to = |parent: &KeyMap<Key>, mut k: Key, tail: Key| {
        let mut chain = vec![tail, k];
        while parent[&k] != k {
            k = parent[&k];
            chain.push(k);
        }
        chain.reverse();
        chain
    };
    // The seeds waiting in each higher layer: (hash, key, parent).
    let mut waiting: BTreeMap<usize, Vec<(u64, Key, Key)>> = BTreeMap::new();
    let mut complete = true;
    let mut kids: Vec<Key> = Vec::new();
    let mut queue: Vec<Key> = vec![root];
    let mut layer = progress(&root);
    loop {
        let mut in_layer = queue.len();
        let mut at = 0;
        while at < queue.len() {
            let key = queue[at];
            at += 1;
            rules.children(&rules.decode(&key), &mut kids);
            for &kid in &kids {
                if kid == [0; 3] || rules.is_sorted(&kid) {
                    let positions = parent.len() as u64 + 1;
                    return done(
                        Outcome::Solved,
                        positions,
                        line(chain_to(&parent, key, kid))?,
                        None,
                    );
                }
                let l = progress(&kid);
                debug_assert!(l >= layer, "a move never leads to an earlier layer");
                if l == layer {
                    if in_layer >= layer_cap {
                        // Dropped unless kept already (looked up only while it matters).
                        complete = complete && parent.contains_key(&kid);
                    } else if let Entry::Vacant(v) = parent.entry(kid) {
                        v.insert(key);
                        queue.push(kid);
                        in_layer += 1;
                    }
                    continue;
                }
                // A later layer's position is not kept yet: `parent` holds this layer and earlier ones.
                let seeds = waiting.entry(l).or_default();
                seeds.push((spread(&kid), kid, key));
                if seeds.len() >= 4 * width.max(1 << 14) {
                    complete &= !keep_best(seeds, 2 * width);
                }
            }
            if parent.len() as u64 >= limits.max_positions {
                let positions = parent.len() as u64;
                return done(
                    Outcome::Undecided,
                    positions,
                    vec![],
                    Some(Budget::Positions),
                );
            }
        }
        if limits.out_of_time(start) {
            let positions = parent.len() as u64;
            return done(Outcome::Undecided, positions, vec![], Some(Budget::Time));
        }
        // The next layer: its best `width` seeds not kept yet.
        let Some((next, mut seeds)) = waiting.pop_first() else {
            let outcome = if complete {
                Outcome::Unsolvable
            } else {
                Outcome::Undecided
            };
            return done(outcome, parent.len() as u64, vec![], None);
        };
        layer = next;
        debug_assert!(seeds.iter().all(|s| !parent.contains_key(&s.1)));
        complete &= !keep_best(&mut seeds, width);
        queue.clear();
        for &(_, key, from) in &seeds {
            parent.insert(key, from);
            queue.push(key);
        }
    }
}

/// A hash of `key` that spreads a layer's positions evenly (splitmix64 of its words).
fn spread(key: &Key) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for &w in key {
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    h
}

/// Keep each key of `seeds` once (with its lowest parent) and then only the `n` of lowest hash (ties to
/// the lower key), sorted; whether any key was dropped.
fn keep_best(seeds: &mut Vec<(u64, Key, Key)>, n: usize) -> bool {
    seeds.sort_unstable();
    seeds.dedup_by(|later, first| later.1 == first.1);
    let dropped = seeds.len() > n;
    seeds.truncate(n);
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::Prover;

    fn limits(max_positions: u64) -> Limits {
        Limits {
            max_positions,
            max_millis: None,
        }
    }

    #[test]
    fn a_beam_wins_and_its_line_replays() {
        for (deal, cells) in [(1, 4), (617, 4), (9499, 1), (13796, 2)] {
            let layout = Layout::deal(deal).unwrap();
            let r = beam(&layout, cells, 10_000, limits(5_000_000)).unwrap();
            assert_eq!(r.outcome, Outcome::Solved, "deal {deal} with {cells} cells");
            crate::replay::replay(&layout, cells, &r.solution).unwrap();
        }
    }

    #[test]
    fn beams_that_kept_everything_are_proofs_with_the_exact_count() {
        // Deal 11982 with 4 cells: 61,643 reachable positions (SPEC §6); 617 with 0 and 1 cells.
        for (deal, cells) in [(11982, 4), (617, 0), (617, 1), (1, 2)] {
            let layout = Layout::deal(deal).unwrap();
            let proof = Prover::new()
                .prove(&layout, cells, limits(10_000_000))
                .unwrap();
            assert_eq!(proof.outcome, Outcome::Unsolvable, "deal {deal}");
            let r = beam(&layout, cells, 1_000_000, limits(10_000_000)).unwrap();
            assert_eq!(
                (r.outcome, r.positions),
                (Outcome::Unsolvable, proof.positions),
                "deal {deal} with {cells} cells"
            );
            // A layer beam too.
            let r = layer_beam(&layout, cells, 1_000_000, 1_000_000, limits(10_000_000)).unwrap();
            assert_eq!(
                (r.outcome, r.positions),
                (Outcome::Unsolvable, proof.positions),
                "deal {deal} with {cells} cells, layer beam"
            );
        }
    }

    #[test]
    fn a_narrow_beam_that_runs_dry_proves_nothing() {
        let layout = Layout::deal(11982).unwrap();
        let r = beam(&layout, 4, 10, limits(10_000_000)).unwrap();
        assert_eq!((r.outcome, r.exhausted), (Outcome::Undecided, None));
        assert!(r.positions < 61_643);
    }

    #[test]
    fn a_layer_beam_wins_and_its_line_replays() {
        // 17760 with 2 cells: no heuristic search or beam of ours found its line (docs/search.md).
        for (deal, cells, width, cap) in [
            (1, 4, 100, 10_000),
            (617, 4, 100, 10_000),
            (17760, 2, 20_000, 1_000_000),
        ] {
            let layout = Layout::deal(deal).unwrap();
            let r = layer_beam(&layout, cells, width, cap, limits(30_000_000)).unwrap();
            assert_eq!(r.outcome, Outcome::Solved, "deal {deal} with {cells} cells");
            crate::replay::replay(&layout, cells, &r.solution).unwrap();
        }
    }

    #[test]
    fn a_narrow_layer_beam_proves_nothing_and_stops_at_its_budget() {
        let layout = Layout::deal(11982).unwrap();
        for (width, cap) in [(10, 1_000_000), (1_000_000, 100)] {
            let r = layer_beam(&layout, 4, width, cap, limits(10_000_000)).unwrap();
            assert_eq!((r.outcome, r.exhausted), (Outcome::Undecided, None));
            assert!(r.positions < 61_643);
        }
        let r = layer_beam(&layout, 4, 1_000, 1_000_000, limits(5_000)).unwrap();
        assert_eq!(
            (r.outcome, r.exhausted),
            (Outcome::Undecided, Some(Budget::Positions))
        );
        assert!(r.positions <= 5_000 + 200);
    }

    #[test]
    fn a_beam_stops_at_its_budget() {
        let layout = Layout::deal(11982).unwrap();
        let r = beam(&layout, 4, 1_000, limits(5_000)).unwrap();
        assert_eq!(
            (r.outcome, r.exhausted),
            (Outcome::Undecided, Some(Budget::Positions))
        );
        assert!(r.positions <= 5_000);
    }
}
