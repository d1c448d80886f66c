//! The prover's work in flight: each thread's stack of positions to expand ([`Todo`]), the nodes of
//! the shared depth-first stack ([`Node`]) and the expansions whose children are being looked up
//! ([`Batch`]).

use crate::key::Key;

use super::rules::Lean;

/// The positions a thread has still to expand: a stack (depth first), from whose bottom other threads
/// may take work.
#[derive(Default)]
pub(super) struct Todo {
    pub(super) v: Vec<u32>,
    /// Entries before this one were taken by other threads.
    pub(super) start: usize,
}

impl Todo {
    pub(super) fn len(&self) -> usize {
        self.v.len() - self.start
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn clear(&mut self) {
        self.v.clear();
        self.start = 0;
    }

    pub(super) fn push(&mut self, i: u32) {
        self.v.push(i);
    }

    pub(super) fn pop(&mut self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let i = self.v.pop();
        if self.is_empty() {
            self.clear();
        }
        i
    }

    /// The oldest entry.
    pub(super) fn steal(&mut self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let i = self.v[self.start];
        self.start += 1;
        if self.is_empty() {
            self.clear();
        } else if self.start >= 4096 && self.start * 2 >= self.v.len() {
            self.v.drain(..self.start);
            self.start = 0;
        }
        Some(i)
    }
}

/// A position waiting on the search's stack: its key, the stack index of the position it was first
/// reached from, whether it was expanded, and the run its children need not move (`Lean::moved`).
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) key: Key,
    pub(super) parent: u32,
    pub(super) state: u8,
    pub(super) moved: u8,
}

pub(super) const WAITING: u8 = 0;
pub(super) const IN_FLIGHT: u8 = 1;
pub(super) const DONE: u8 = 2;

/// An expanded position whose children are still to be looked up (their slots are being fetched).
#[derive(Default)]
pub(super) struct Batch {
    pub(super) node: u32,
    pub(super) thread: u32,
    pub(super) kids: Vec<(Key, u64)>,
    /// Per child, the run its own children need not move (`Lean::moved`).
    pub(super) moved: Vec<u8>,
    /// Children already looked up (the others were held up: [`super::worker`]).
    pub(super) done: usize,
    /// The children whole, in the order of `kids`, when the thread orders its new children: it scores
    /// them without decoding their keys again (empty otherwise, as copying them costs time too).
    pub(super) leans: Vec<Lean>,
}
