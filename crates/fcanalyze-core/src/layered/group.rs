//! The search of one group of a layer in its set ([`search_group`]): depth first from each seed with a
//! bounded stack, scans of the set for the positions that found the stack full, and the switch to the
//! search by levels when the set outgrows the memory.

use crate::error::Result;
use crate::key::{signature, Key};
use crate::layer::progress;

use super::code::{tag, untag, Frame};
use super::context::{Check, Cx, GroupEnd};
use super::levels::search_by_levels;
use super::table::Table;
use super::trades::{candidates, Kept, Trades};
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
    // A group whose cards could trade keeps all its seeds, and past [`ORBIT_SET_LEN`] positions looks
    // whether trades keep them: then it goes over to levels, searched by orbits.
    let mut trades = cx.trades && !candidates(cx.rules, &first).is_empty();
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
        every_seed: trades,
        drained: Vec::new(),
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
        if trades && g.table.len > ORBIT_SET_LEN.min(cx.max_set_len) {
            // Checked once: past it, the seeds already in the set need not be kept again.
            (trades, g.every_seed) = (false, false);
            if let Some(t) = g.trades_keep(cx, more)? {
                let seeds = (g.seeds(), Some(t));
                return search_by_levels(cx, (group, g.sig), &g.frame, seeds, more);
            }
        }
        if g.table.len > cx.max_set_len {
            let seeds = (g.seeds(), None);
            return search_by_levels(cx, (group, g.sig), &g.frame, seeds, more);
        }
        if cx.expanded & 4095 == 0 {
            if g.table.len > cx.max_set_len / 4 && cx.idle.any() {
                // Threads wait with no group left: a large group goes over to levels now, which they
                // share. With two threads, a group of G positions switched at S then costs S + G / 2
                // instead of G: a loss for G under 2S (at most S / 2), a gain past it, and for a giant
                // group (past the bound anyway) a gain of the bound's work less S.
                let seeds = (g.seeds(), None);
                drop(g.table);
                drop(g.stack);
                return search_by_levels(cx, (group, g.sig), &g.frame, seeds, more);
            }
            let codes = g.stack.capacity() + g.taken.capacity() + g.drained.capacity();
            let held = codes * std::mem::size_of::<u128>();
            match cx.check((g.table.len as u64, g.table.len), g.table.memory(), held) {
                Check::Go => {}
                Check::Out(b) => return Ok(GroupEnd::Out(b)),
                Check::Stopped => return Ok(GroupEnd::Stopped),
                Check::OverMemory => {
                    let seeds = (g.seeds(), None);
                    drop(g.table);
                    drop(g.stack);
                    return search_by_levels(cx, (group, g.sig), &g.frame, seeds, more);
                }
            }
        }
    }
}

/// Positions of a group's set past which the group goes over to levels when trades of two of its cards
/// keep its seeds ([`super::trades`]): on deal 8983 with 1 cell (two threads), 43.6 s at 8,192, 58.4 s
/// at 2^18 and 62.0 s at 2^21 (without trades, 101 s).
const ORBIT_SET_LEN: usize = 1 << 13;

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
    /// The seeds taken that were not in the set yet (every seed taken with `every_seed`): with the
    /// rest, they reach the whole group.
    taken: Vec<u128>,
    every_seed: bool,
    /// Seeds read ahead of the search ([`GroupSet::trades_keep`]), taken before the rest.
    drained: Vec<u128>,
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
        if let Some(seed) = match (self.next.take(), self.drained.pop()) {
            (Some(s), _) => Some(s),
            (None, Some(c)) => Some(self.frame.decode(c)),
            (None, None) => more()?,
        } {
            debug_assert_eq!(signature(&seed), self.sig, "a seed of another group");
            let code = self.frame.encode(&seed);
            let new = self.table.insert(code, true);
            if new || self.every_seed {
                self.taken.push(code);
            }
            if !new {
                return Ok(Next::Again);
            }
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

    /// The group's seeds read to the end (within a chunk of a search by levels: none past it, the seeds
    /// read so far taken before the rest), and the trades that keep them (all of them: every seed taken
    /// is kept with `every_seed`).
    fn trades_keep(
        &mut self,
        cx: &Cx,
        more: &mut dyn FnMut() -> Result<Option<Key>>,
    ) -> Result<Option<Kept>> {
        while self.drained.len() < cx.level_chunk {
            match more()? {
                Some(seed) => self.drained.push(self.frame.encode(&seed)),
                None => {
                    let mut seeds: Vec<u128> =
                        self.taken.iter().chain(&self.drained).copied().collect();
                    seeds.sort_unstable();
                    seeds.dedup();
                    return Ok(Trades::keep(cx.rules, &self.frame, &seeds));
                }
            }
        }
        Ok(None)
    }

    /// The seeds taken and read ahead: with the rest, they reach the whole group.
    fn seeds(&mut self) -> Vec<u128> {
        let mut seeds = std::mem::take(&mut self.taken);
        seeds.append(&mut self.drained);
        seeds
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
        if let Some(cone) = &cx.cone {
            cone.keep(&mut cx.kids, &mut cx.kids_moved);
        }
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
                cx.seeds.push(l, k, Some(&key), 0, cx.spill)?;
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
