//! The search of one group of a layer in its set ([`search_group`]): depth first from each seed with a
//! bounded stack, scans of the set for the positions that found the stack full, and the switch to the
//! search by levels when the set outgrows the memory.

use crate::error::Result;
use crate::key::{signature, Key};
use crate::layer::progress;

use super::code::{tag, untag, Frame};
use super::context::{lock_idle, Check, Cx, GroupEnd};
use super::levels::search_by_levels;
use super::table::Table;
use crate::prover::NO;

/// Search the group of `first` (a seed), its other seeds given by `more`: depth first from each seed,
/// with a stack of at most [`Cx::max_stack_bytes`]; positions that find the stack full wait in the set
/// untaken, and scans of the set take them until none is left. When the set outgrows the memory, or
/// passes a quarter of [`Cx::max_set_len`] while other threads wait with no group left, the group is
/// searched again by levels ([`search_by_levels`]) from the seeds taken so far and the rest.
pub(super) fn search_group(
    cx: &mut Cx,
    group: u64,
    first: Key,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let frame = Frame::of(&first);
    let mut g = GroupSet {
        sig: signature(&first),
        table: Table::new(2 * frame.free.len() as u32),
        frame,
        max_stack: (cx.max_stack_bytes / std::mem::size_of::<u128>()).max(1),
        stack: Vec::new(),
        waiting: 0,
        cursor: (0, 0),
        next: Some(first),
        taken: Vec::new(),
    };
    loop {
        let code = match g.next_code(cx, more)? {
            Next::Code(c) => c,
            Next::Again => continue,
            Next::End(end) => return Ok(end),
        };
        if let Some(end) = g.expand(cx, code)? {
            return Ok(end);
        }
        cx.expanded += 1;
        if g.table.len > cx.max_set_len {
            return search_by_levels(cx, (group, g.sig), &g.frame, g.taken, more);
        }
        if cx.expanded & 4095 == 0 {
            if g.table.len > cx.max_set_len / 4 && !lock_idle(cx.idle).is_empty() {
                // Threads wait with no group left: a large group goes over to levels now, which they
                // share. With two threads, a group of G positions switched at S then costs S + G / 2
                // instead of G: a loss for G under 2S (at most S / 2), a gain past it, and for a giant
                // group (past the bound anyway) a gain of the bound's work less S.
                drop(g.table);
                drop(g.stack);
                return search_by_levels(cx, (group, g.sig), &g.frame, g.taken, more);
            }
            let held = (g.stack.capacity() + g.taken.capacity()) * std::mem::size_of::<u128>();
            match cx.check(g.table.len, g.table.memory(), held) {
                Check::Go => {}
                Check::Out(b) => return Ok(GroupEnd::Out(b)),
                Check::Stopped => return Ok(GroupEnd::Stopped),
                Check::OverMemory => {
                    drop(g.table);
                    drop(g.stack);
                    return search_by_levels(cx, (group, g.sig), &g.frame, g.taken, more);
                }
            }
        }
    }
}

/// A group being searched in its set ([`search_group`]).
struct GroupSet {
    frame: Frame,
    sig: [u64; 6],
    table: Table,
    /// Codes the stack holds at most.
    max_stack: usize,
    /// Codes to expand, [`tag`]ged with the run each may leave unmoved.
    stack: Vec<u128>,
    /// Positions in the set not yet taken for expansion.
    waiting: usize,
    /// Where the scan of the set for waiting positions is.
    cursor: (usize, usize),
    /// The first seed, until taken.
    next: Option<Key>,
    /// The seeds taken that were not in the set yet: with the rest, they reach the whole group.
    taken: Vec<u128>,
}

/// What [`GroupSet::next_code`] found.
enum Next {
    /// A position to expand, its code [`tag`]ged.
    Code(u128),
    /// Nothing yet: look again.
    Again,
    /// The group's end.
    End(GroupEnd),
}

impl GroupSet {
    /// The next position to expand: from the stack, else the next seed, else one left waiting.
    #[inline]
    fn next_code(
        &mut self,
        cx: &mut Cx,
        more: &mut dyn FnMut() -> Result<Option<Key>>,
    ) -> Result<Next> {
        if let Some(c) = self.stack.pop() {
            return Ok(Next::Code(c));
        }
        if let Some(seed) = match self.next.take() {
            Some(s) => Some(s),
            None => more()?,
        } {
            debug_assert_eq!(signature(&seed), self.sig, "a seed of another group");
            let code = self.frame.encode(&seed);
            if !self.table.insert(code, true) {
                return Ok(Next::Again);
            }
            self.taken.push(code);
            if cx.rules.is_sorted(&seed) {
                return Ok(Next::End(GroupEnd::Won {
                    target: seed,
                    tail: None,
                    len: self.table.len,
                }));
            }
            return Ok(Next::Code(tag(code, NO)));
        }
        if self.waiting > 0 {
            return Ok(match self.table.take_next(&mut self.cursor) {
                Some(c) => {
                    self.waiting -= 1;
                    Next::Code(tag(c, NO))
                }
                None => {
                    // The table grew behind the cursor: scan again.
                    self.cursor = (0, 0);
                    Next::Again
                }
            });
        }
        Ok(Next::End(GroupEnd::Done(self.table.len)))
    }

    /// Expand the position of `code`: its children in the layer go to the set (and the stack while it
    /// has room), the others to the seeds of their layers. The group's end when a child is won.
    #[inline]
    fn expand(&mut self, cx: &mut Cx, tagged: u128) -> Result<Option<GroupEnd>> {
        let (frame, table) = (&self.frame, &mut self.table);
        let (code, moved) = untag(tagged);
        let key = frame.decode(code);
        let p = cx.rules.decode(&key).with_moved(moved);
        cx.rules
            .children_moved(&p, &mut cx.kids, &mut cx.kids_moved);
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
        let (stack, max_stack) = (&mut self.stack, self.max_stack);
        for ((k, &(l, c, h)), &m) in cx.kids.iter().zip(&cx.codes).zip(&cx.kids_moved) {
            if *k == [0; 3] {
                return Ok(Some(GroupEnd::Won {
                    target: key,
                    tail: Some(*k),
                    len: table.len,
                }));
            }
            debug_assert!(l >= cx.layer, "a move lowered the progress");
            if l > cx.layer {
                cx.seeds.push(l, k, Some(&key), cx.spill)?;
                continue;
            }
            debug_assert_eq!(
                signature(k),
                self.sig,
                "a move within a layer changed the signature"
            );
            let room = stack.len() < max_stack;
            if table.insert_hashed(c, h, room) {
                if cx.rules.is_sorted(k) {
                    return Ok(Some(GroupEnd::Won {
                        target: *k,
                        tail: None,
                        len: table.len,
                    }));
                }
                if room {
                    if stack.len() == stack.capacity() {
                        // Grown within its bound.
                        let more = stack.len().max(64).min(max_stack - stack.len());
                        stack.reserve_exact(more);
                    }
                    stack.push(tag(c, m));
                } else {
                    self.waiting += 1;
                }
            }
        }
        Ok(None)
    }
}
