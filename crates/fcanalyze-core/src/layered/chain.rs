//! The line to a won position, found again backwards ([`chain_to`]): each group on the way is searched
//! again breadth first from its kept seeds, with parent links ([`group_path`]).

use std::collections::hash_map::Entry;
use std::collections::VecDeque;

use crate::error::Result;
use crate::key::{pack, unpack, Key, KeyMap};
use crate::layer::progress;
use crate::prover::Rules;

use super::code::{rec_key, rec_parent, Rec, NO_PARENT};
use super::seeds::Seeds;

/// Bytes a position costs in [`group_path`]'s map (key, parent key, hash table overhead).
pub(super) const PATH_BYTES: usize = 100;

/// A shortest path within one group (one layer, one signature) from the group's seeds `group` (sorted by
/// key) to `target`: the keys from a seed to `target`, and the position that seed was reached from
/// (`None` for the start). `None` when `target` is not reached, or the map outgrows `max_memory`.
pub(super) fn group_path(
    rules: &Rules,
    group: &[Rec],
    target: &Key,
    max_memory: Option<usize>,
) -> Option<(Vec<Key>, Option<Key>)> {
    let layer = progress(target);
    // Each position found, with the one it was found from (the seeds from themselves).
    let mut from: KeyMap<Key> = KeyMap::default();
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
            if progress(k) == layer {
                if let Entry::Vacant(v) = from.entry(*k) {
                    v.insert(key);
                    queue.push_back(*k);
                }
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
pub(super) fn chain_to(
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
