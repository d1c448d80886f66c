//! The search of one group of a layer in its set ([`search_group`]): depth first from each seed with a
//! bounded stack, scans of the set for the positions that found the stack full, and the switch to the
//! search by levels when the set outgrows the memory.

use crate::error::Result;
use crate::layer::progress;
use crate::outcome::Budget;
use crate::position::Key;
use crate::prove::signature;

use super::code::Frame;
use super::levels::search_by_levels;
use super::search::{Check, Cx};
use super::table::Table;

/// How the search of one group ended.
pub(super) enum GroupEnd {
    /// Every position of the group was expanded: their number.
    Done(usize),
    /// A won or sorted position, or one whose child is won (`tail`); the group's positions so far.
    Won {
        target: Key,
        tail: Option<Key>,
        len: usize,
    },
    Out(Budget),
    /// Another thread ended the layer first.
    Stopped,
}

/// Search the group of `first` (a seed), its other seeds given by `more`: depth first from each seed,
/// with a stack of at most [`Cx::max_stack_bytes`]; positions that find the stack full wait in the set
/// untaken, and scans of the set take them until none is left. When the set outgrows the memory, the
/// group is searched again by levels ([`search_by_levels`]) from the seeds taken so far and the rest.
pub(super) fn search_group(
    cx: &mut Cx,
    group: u64,
    first: Key,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let frame = Frame::of(&first);
    let sig = signature(&first);
    let mut table = Table::new(2 * frame.free.len() as u32);
    let max_stack = (cx.max_stack_bytes / std::mem::size_of::<u128>()).max(1);
    let mut stack: Vec<u128> = Vec::new();
    // Positions in the set not yet taken for expansion.
    let mut waiting = 0usize;
    let mut cursor = (0, 0);
    let mut next = Some(first);
    // The seeds taken that were not in the set yet: with the rest, they reach the whole group.
    let mut taken: Vec<u128> = Vec::new();
    loop {
        // The next position to expand: from the stack, else the next seed, else one left waiting.
        let code = if let Some(c) = stack.pop() {
            c
        } else if let Some(seed) = match next.take() {
            Some(s) => Some(s),
            None => more()?,
        } {
            debug_assert_eq!(signature(&seed), sig, "a seed of another group");
            let code = frame.encode(&seed);
            if !table.insert(code, true) {
                continue;
            }
            taken.push(code);
            if cx.rules.is_sorted(&seed) {
                return Ok(GroupEnd::Won {
                    target: seed,
                    tail: None,
                    len: table.len,
                });
            }
            code
        } else if waiting > 0 {
            match table.take_next(&mut cursor) {
                Some(c) => {
                    waiting -= 1;
                    c
                }
                None => {
                    // The table grew behind the cursor: scan again.
                    cursor = (0, 0);
                    continue;
                }
            }
        } else {
            return Ok(GroupEnd::Done(table.len));
        };
        let key = frame.decode(code);
        let p = cx.rules.decode(&key);
        cx.rules.children(&p, &mut cx.kids);
        // The codes of the children in this layer, their home slots prefetched: the lookups below then
        // wait for one cache miss at a time less.
        cx.codes.clear();
        for k in &cx.kids {
            let l = progress(k);
            if l == cx.layer {
                let c = frame.encode(k);
                let h = Table::hash(c);
                table.prefetch(h);
                cx.codes.push((l, c, h));
            } else {
                cx.codes.push((l, 0, 0));
            }
        }
        for (k, &(l, c, h)) in cx.kids.iter().zip(&cx.codes) {
            if *k == [0; 3] {
                return Ok(GroupEnd::Won {
                    target: key,
                    tail: Some(*k),
                    len: table.len,
                });
            }
            debug_assert!(l >= cx.layer, "a move lowered the progress");
            if l > cx.layer {
                cx.seeds.push(l, k, Some(&key), cx.spill)?;
                continue;
            }
            debug_assert_eq!(
                signature(k),
                sig,
                "a move within a layer changed the signature"
            );
            let room = stack.len() < max_stack;
            if table.insert_hashed(c, h, room) {
                if cx.rules.is_sorted(k) {
                    return Ok(GroupEnd::Won {
                        target: *k,
                        tail: None,
                        len: table.len,
                    });
                }
                if room {
                    if stack.len() == stack.capacity() {
                        // Grown within its bound.
                        let more = stack.len().max(64).min(max_stack - stack.len());
                        stack.reserve_exact(more);
                    }
                    stack.push(c);
                } else {
                    waiting += 1;
                }
            }
        }
        cx.expanded += 1;
        if table.len > cx.max_set_len {
            return search_by_levels(cx, (group, sig), &frame, taken, more);
        }
        if cx.expanded & 4095 == 0 {
            let held = (stack.capacity() + taken.capacity()) * std::mem::size_of::<u128>();
            match cx.check(table.len, table.memory(), held) {
                Check::Go => {}
                Check::Out(b) => return Ok(GroupEnd::Out(b)),
                Check::Stopped => return Ok(GroupEnd::Stopped),
                Check::OverMemory => {
                    drop(table);
                    drop(stack);
                    return search_by_levels(cx, (group, sig), &frame, taken, more);
                }
            }
        }
    }
}
