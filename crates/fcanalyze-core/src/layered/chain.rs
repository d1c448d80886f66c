//! The line to a won position, found again backwards ([`chain_to`]): each group on the way is searched
//! again breadth first from its kept seeds ([`group_path`]), and the path's first seed names the
//! position of an earlier layer it was reached from.

use crate::error::Result;
use crate::key::{pack, signature, unpack, Key};
use crate::layer::progress;
use crate::prover::Rules;

use super::code::Frame;
use super::seeds::Seeds;

/// The most the table of [`group_path`] holds: 7/8 of its slots.
fn most(slots: usize) -> usize {
    slots / 8 * 7
}

/// The positions [`group_path`] has reached, as their codes in the group's [`Frame`] (with bit 127
/// set: a code of 0 is a position), in an open-addressing table, and the slot of each in the order
/// found: 16 bytes a slot of the table (at most 7/8 of them taken) and 4 a position in the order.
/// Before 2026-12-07 a map of keys to parent keys took about 100 bytes a position, and the layer-60
/// group of deal 155219 with 1 cell (92 million positions) did not fit in 8 GB: its win came without
/// a line.
struct Reached {
    slots: Vec<u128>,
    order: Vec<u32>,
    /// Bytes the table and the order may take together (`None`: no bound).
    room: Option<usize>,
}

/// The flag that marks a slot as taken.
const TAKEN: u128 = 1 << 127;

impl Reached {
    /// A table for `seeds` positions to start with; `None` when they do not fit in `room` bytes.
    fn new(seeds: usize, room: Option<usize>) -> Option<Reached> {
        let mut r = Reached {
            slots: vec![],
            order: vec![],
            room,
        };
        r.grow((2 * seeds).max(1 << 10))?;
        Some(r)
    }

    fn bytes(slots: usize, order: usize) -> usize {
        slots * std::mem::size_of::<u128>() + order * std::mem::size_of::<u32>()
    }

    /// The table rebuilt with `slots` slots (fewer when the room holds fewer, while it holds more than
    /// now), the order kept; `None` when the room holds no more.
    fn grow(&mut self, slots: usize) -> Option<()> {
        let old = self.slots.len();
        let mut slots = slots;
        if let Some(room) = self.room {
            // The old table and the new one are held together while it is rebuilt, and the order has
            // room for as many positions as the new one holds. Past an eighth of the room, the table
            // grows once more, to as many slots as the room holds beside the old one: some 25 bytes
            // a position (doubling on to the room would leave a third of it to the last table).
            let need = |n: usize| Self::bytes(old + n, most(n));
            if need(slots) > room || Self::bytes(slots, 0) > room / 8 {
                slots = room.saturating_sub(Self::bytes(old, 0)) / Self::bytes(1, 1);
                while slots > 0 && need(slots) > room {
                    slots -= slots / 64 + 1;
                }
                // Rebuilt for a gain of less than an eighth, it would be rebuilt again soon after.
                if most(slots) < self.order.len() + self.order.len() / 8 + 1 {
                    return None;
                }
            }
        }
        // The order holds slots as 32-bit numbers.
        let slots = slots.min(u32::MAX as usize);
        let old_slots = std::mem::replace(&mut self.slots, vec![0; slots]);
        self.order
            .reserve_exact(most(slots).saturating_sub(self.order.len()));
        for i in 0..self.order.len() {
            let code = old_slots[self.order[i] as usize];
            self.order[i] = self.place(code).0 as u32;
        }
        Some(())
    }

    /// The slot of `code` (taken) or of the first free slot where it would go, and whether it is
    /// there.
    #[inline]
    fn place(&mut self, code: u128) -> (usize, bool) {
        let n = self.slots.len();
        let h = ((code as u64) ^ ((code >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut i = ((h as u128 * n as u128) >> 64) as usize;
        loop {
            let c = self.slots[i];
            if c == code {
                return (i, true);
            }
            if c == 0 {
                self.slots[i] = code;
                return (i, false);
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
    }

    /// Adds `code`; whether it was new. `None` when the table is full and the room holds no more.
    fn add(&mut self, code: u128) -> Option<bool> {
        if self.order.len() >= most(self.slots.len()) {
            self.grow(self.slots.len() * 2)?;
        }
        let (slot, there) = self.place(code | TAKEN);
        if !there {
            self.order.push(slot as u32);
        }
        Some(!there)
    }

    /// The code of the `i`-th position found.
    fn code(&self, i: usize) -> u128 {
        self.slots[self.order[i] as usize] & !TAKEN
    }
}

/// A shortest path within one group (one layer, one signature) from the group's seeds `group` (packed,
/// sorted, each once) to `target`: the keys from a seed to `target`. `None` when `target` is not
/// reached, or the search outgrows `max_memory`.
///
/// Breadth first, the positions reached kept as the group's codes of them in the order found, each
/// level of the search a range of that order; the path is found again backwards, level by level, as a
/// position of the level before with the next one as a child. The seeds are given back to the memory
/// once in the table.
pub(super) fn group_path(
    rules: &Rules,
    group: Vec<[u32; 5]>,
    target: &Key,
    max_memory: Option<usize>,
) -> Option<Vec<Key>> {
    let layer = progress(target);
    let frame = Frame::of(target);
    let room = max_memory.map(|m| m.saturating_sub(std::mem::size_of_val(group.as_slice())));
    let mut reached = Reached::new(group.len(), room)?;
    for s in &group {
        reached.add(frame.encode(&unpack(s)))?;
    }
    // Where each level begins in the order, and the target's place in it.
    let mut levels = vec![0, reached.order.len()];
    let mut found = group.binary_search(&pack(target)).ok();
    drop(group);
    reached.room = max_memory;
    let goal = frame.encode(target);
    let mut kids = Vec::new();
    let mut at = 0;
    while found.is_none() {
        if at == reached.order.len() {
            return None;
        }
        if at == *levels.last().expect("a level") {
            levels.push(reached.order.len());
        }
        let key = frame.decode(reached.code(at));
        at += 1;
        rules.children(&rules.decode(&key), &mut kids);
        for k in &kids {
            if progress(k) == layer {
                debug_assert_eq!(signature(k), signature(target));
                let code = frame.encode(k);
                if reached.add(code)? && code == goal {
                    found = Some(reached.order.len() - 1);
                }
            }
        }
    }
    // Backwards: from the target's level down to the seeds, a position of the level before that has
    // the last one found as a child.
    let found = found.expect("the target was reached");
    let mut level = levels.partition_point(|&start| start <= found) - 1;
    let mut path = vec![*target];
    while level > 0 {
        let next = *path.last().expect("a key");
        let before = (levels[level - 1]..levels[level]).find_map(|i| {
            let key = frame.decode(reached.code(i));
            rules.children(&rules.decode(&key), &mut kids);
            kids.contains(&next).then_some(key)
        })?;
        path.push(before);
        level -= 1;
    }
    path.reverse();
    Some(path)
}

/// The chain of keys from the start to `target` (a reached position), then `tail` if any: each group on
/// the way is searched again from its kept seeds. Empty when the search of a group outgrows
/// `max_memory`, or the seeds were not kept.
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
        let n = group.len();
        let Some(path) = group_path(rules, group, &target, max_memory) else {
            if crate::cascade::tracing() {
                eprintln!(
                    "fcanalyze trace: the search of the line's group in layer {} ({n} seeds) outgrew \
                     the memory: a win without a line",
                    progress(&target),
                );
            }
            return Ok(vec![]);
        };
        let Some(parent) = seeds.parent_of(&path[0])? else {
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
