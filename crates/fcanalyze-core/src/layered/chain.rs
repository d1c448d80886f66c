//! The line to a won position, found again backwards ([`chain_to`]): each group on the way is searched
//! again breadth first from its kept seeds, in memory ([`group_path`]) or, when it outgrows the memory,
//! by levels on disk ([`group_path_on_disk`]), and the path's first seed names the position of an
//! earlier layer it was reached from.

use std::path::Path;

use crate::error::{Error, Result};
use crate::key::{pack, signature, unpack, Key};
use crate::layer::progress;
use crate::prover::{Rules, NO};

use super::code::{tag, untag, Frame, CODE};
use super::level::{sort_dedup, Level, Levels, Part, OUT_EVERY};
use super::seeds::{Group, Seeds};
use super::spill::io_error;

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

/// Whether `level` holds `code` (a group's code, untagged).
fn holds(level: &Level, code: u128) -> Result<bool> {
    let mut from = level.read_from(Some(tag(code, NO)))?;
    Ok(from.next_code()?.is_some_and(|c| untag(c).0 == code))
}

/// The files of [`group_path_on_disk`], removed with their directory when dropped.
struct OnDisk(Levels);

impl Drop for OnDisk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0.dir);
    }
}

/// A shortest path within one group from its seeds (each one `seeds` gives, in any order and any number
/// of times) to `target`, as [`group_path`] finds it, for groups whose search outgrows the memory: the
/// levels of the breadth-first search are sorted files of codes in `dir` ([`Levels`], removed after),
/// each made as the search by levels makes them ([`super::levels`]): the codes the level before reaches,
/// sorted in chunks of `chunk` and written as runs, merged less the codes of the two levels before (a
/// move within a group is undone by one within it). So the memory holds a chunk, and the disk about 2.5
/// bytes a position. The path is found again from the target's level down: the positions one move
/// from a position are the ones it is one move from, so the position before it is one of its children
/// found in the level before. `None` when `target` is not reached, when a write would leave less than
/// `min_free` of the disk free, or when a stop is asked (the way back is then tried again later).
pub(super) fn group_path_on_disk(
    rules: &Rules,
    seeds: impl FnOnce(&mut dyn FnMut(&Key)) -> Result<()>,
    target: &Key,
    (dir, min_free): (&Path, u64),
    chunk: usize,
) -> Result<Option<Vec<Key>>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let files = OnDisk(Levels::in_dir(dir, min_free));
    let files = &files.0;
    if files.disk_low(0) {
        return Ok(None);
    }
    let layer = progress(target);
    let frame = Frame::of(target);
    let max = chunk.max(1);
    let stop = || crate::interrupt::active();
    // Its room taken at once (untouched until used): grown by doubling, it would hold the old and
    // the new at once.
    let mut codes: Vec<u128> = Vec::with_capacity(max);
    let mut runs: Vec<Part> = Vec::new();
    // The codes gathered in `codes` written as a run when they fill a chunk; false when the disk or a
    // stop says no.
    let spill = |codes: &mut Vec<u128>, runs: &mut Vec<Part>| -> Result<bool> {
        if codes.len() < max {
            return Ok(true);
        }
        if stop() || files.disk_low(codes.len()) {
            return Ok(false);
        }
        runs.push(files.write_run(codes, &mut Vec::new())?);
        Ok(true)
    };
    // The seeds, then each level from the one before, merged less the two before it.
    let mut written = Ok(true);
    seeds(&mut |k| {
        if matches!(written, Ok(true)) {
            codes.push(tag(frame.encode(k), NO));
            written = spill(&mut codes, &mut runs);
        }
    })?;
    let out = |_| (stop() || files.disk_low(0)).then_some(crate::outcome::Budget::Disk);
    let none = Level::default();
    let mut all: Vec<Level> = Vec::new();
    let goal = frame.encode(target);
    let mut kids = Vec::new();
    loop {
        if !written? {
            files.remove(runs);
            return Ok(None);
        }
        sort_dedup(&mut codes, &mut Vec::new());
        let cur = all.last().unwrap_or(&none);
        let prev = all.len().checked_sub(2).map_or(&none, |i| &all[i]);
        let next = files.merge_range((&runs, &[&codes]), cur, prev, (None, None), &out)?;
        files.remove(std::mem::take(&mut runs));
        codes.clear();
        let Ok(next) = next else {
            return Ok(None);
        };
        if next.len == 0 {
            return Ok(None);
        }
        all.push(Level::of([next]));
        let cur = all.last().expect("a level");
        if holds(cur, goal)? {
            break;
        }
        let mut read = cur.read_range(0, cur.len());
        written = Ok(true);
        let mut expanded = 0u64;
        'expand: while let Some(c) = read.next_code()? {
            // A stop asked is seen within some milliseconds, not at the chunk's end.
            expanded += 1;
            if expanded % OUT_EVERY == 0 && stop() {
                written = Ok(false);
                break;
            }
            rules.children(&rules.decode(&frame.decode(untag(c).0)), &mut kids);
            for k in kids.iter().filter(|k| progress(k) == layer) {
                codes.push(tag(frame.encode(k), NO));
                written = spill(&mut codes, &mut runs);
                if !matches!(written, Ok(true)) {
                    break 'expand;
                }
            }
        }
    }
    let mut path = vec![*target];
    let mut near = Vec::new();
    for level in all[..all.len() - 1].iter().rev() {
        let next = *path.last().expect("a key");
        rules.children(&rules.decode(&next), &mut near);
        let mut before = None;
        for k in near.iter().filter(|k| progress(k) == layer) {
            if holds(level, frame.encode(k))? {
                rules.children(&rules.decode(k), &mut kids);
                if kids.contains(&next) {
                    before = Some(*k);
                    break;
                }
            }
        }
        let Some(before) = before else {
            return Err(Error::Internal(format!(
                "a position of layer {layer} has no child in the level before it that leads to it"
            )));
        };
        path.push(before);
    }
    path.reverse();
    Ok(Some(path))
}

/// The codes a chunk of [`group_path_on_disk`] holds within `max_memory`: half of it, between 4,096
/// and 2^28 (4 GB).
fn chunk_within(max_memory: Option<usize>) -> usize {
    max_memory.map_or(1 << 26, |m| (m / 2 / CODE).clamp(1 << 12, 1 << 28))
}

/// The directory of [`group_path_on_disk`]'s files, in the line's spill directory.
const ON_DISK: &str = "way-back-levels";

/// The chain of keys from the start to `target` (a reached position), then `tail` if any: each group on
/// the way is searched again from its kept seeds, in memory when they and the search fit in
/// `max_memory`, else on disk. Empty when the search of a group outgrows the disk too, or a stop is
/// asked, or the seeds were not kept.
pub(super) fn chain_to(
    rules: &Rules,
    seeds: &Seeds,
    target: Key,
    tail: Option<Key>,
    max_memory: Option<usize>,
) -> Result<Vec<Key>> {
    let mut back: Vec<Key> = tail.into_iter().collect();
    let mut target = target;
    // The seeds of a group held in memory take 20 bytes each, twice over while they are read, and its
    // search at least 25 bytes a position.
    let most = max_memory.map(|m| m / 64);
    loop {
        let in_memory = match seeds.group_of(&target, most)? {
            Group::NotKept => return Ok(vec![]),
            Group::Many => None,
            Group::Seeds(group) => group_path(rules, group, &target, max_memory),
        };
        let path = match in_memory {
            Some(path) => path,
            None => {
                let dir = seeds.dir.0.join(ON_DISK);
                if crate::cascade::tracing() {
                    eprintln!(
                        "fcanalyze trace: the line's group in layer {} outgrew the memory: searched \
                         again by levels in {}",
                        progress(&target),
                        dir.display()
                    );
                }
                let each =
                    |f: &mut dyn FnMut(&Key)| seeds.each_of_group(&target, |k, _| f(k)).map(|_| ());
                #[cfg(test)]
                let min_free = super::WAY_BACK_MIN_FREE.get().unwrap_or(seeds.min_free);
                #[cfg(not(test))]
                let min_free = seeds.min_free;
                let room = (dir.as_path(), min_free);
                match group_path_on_disk(rules, each, &target, room, chunk_within(max_memory))? {
                    Some(path) => path,
                    None => {
                        if crate::cascade::tracing() {
                            eprintln!(
                                "fcanalyze trace: the search of the line's group in layer {} \
                                 outgrew the disk or was stopped: a win without a line",
                                progress(&target),
                            );
                        }
                        return Ok(vec![]);
                    }
                }
            }
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
