//! The lean exhaustive search: every position reachable from the start, depth first, in as little memory
//! and time per position as possible. It decides a position either way: it stops at the first won (or
//! provably won, [`Position::is_sorted`]) position and returns the line that leads there, or it proves
//! that none is reachable, with the exact size of the reachable set as its count (SPEC §3).
//!
//! What makes it lean:
//! - the visited set holds the 20-byte canonical keys and nothing else (no parent links): 64-byte buckets
//!   of three keys in 64 independently growing shards, about 24–48 bytes per position ([`KeySet`]);
//! - the line to a won position comes from an explicit depth-first path: the stack of positions being
//!   expanded, each a child of the one below it;
//! - a position is expanded from its key into a compact form ([`Lean`]: links, two card masks, the
//!   foundations and the key, about 110 bytes) whose children are computed without the heuristics'
//!   statistics; the children's slots in the set are prefetched before they are looked up;
//! - on several threads ([`Prover::layered_threads`]), each runs its own depth-first search on the one
//!   set, and the busy ones give work to those out of it ([`parallel`]).
//!
//! The rules are those of [`Position`]: the same moves, the same automatic moves, the same keys (the
//! tests check that both give the same children everywhere). The line found is replayed with
//! [`Position`] from the concrete start and checked by [`crate::replay`].

mod keyset;
mod parallel;
mod rules;
#[cfg(test)]
mod tests;
mod todo;
mod worker;

use std::time::Instant;

use crate::error::Result;
use crate::key::Key;
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::checked_line;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::position::Position;

pub use keyset::KeySet;

use keyset::KEEP_BYTES;
#[cfg(doc)]
use rules::Lean;
pub(crate) use rules::NO;
pub use rules::{Rules, NFEAT};
use worker::{Ctx, End, Worker};

/// A value in a cache line of its own (threads read these often, and write them seldom).
#[repr(align(64))]
pub(super) struct Own<T>(pub(super) T);

/// One depth-first search of the prover's portfolio: how it orders the children it finds new, and how
/// many expansions it makes in each turn. All share the set of stored positions and the stack of
/// nodes; each expands the positions it stored, so that together they expand every reachable position
/// once, whatever their orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Weights of [`Lean::features`] (the lowest score is expanded first); `None`: the order of the
    /// move generator.
    pub weights: Option<[u32; NFEAT]>,
    /// Expansions per turn.
    pub quantum: u32,
}

impl Thread {
    /// The default portfolio: searches with different child orders take turns; on hard solvable
    /// positions one of them often finds a line far sooner than the others.
    pub const PORTFOLIO: [Thread; 3] = [
        Thread {
            weights: Some([3, 1, 3, 3, 1]),
            quantum: 64,
        },
        Thread {
            weights: Some([6, 1, 4, 4, 2]),
            quantum: 64,
        },
        Thread {
            weights: None,
            quantum: 64,
        },
    ];
}

/// The lean exhaustive search, reusable from one search to the next (it keeps its tables).
pub struct Prover {
    set: KeySet,
    /// The search of the calling thread (its stack and buffers are kept from one search to the next).
    work: Worker,
    /// Most bytes the search may hold (set and stack); `None` for no limit. Running out ends the search
    /// as undecided with [`Budget::Positions`] (the memory budget is a budget on positions).
    pub max_memory: Option<usize>,
    /// Statistics of the last search.
    pub stats: ProveStats,
    /// The depth-first searches that take turns (at least one). A proof costs the same number of
    /// positions whatever they are; won positions are found sooner with good orders.
    pub threads: Vec<Thread>,
    /// Past this many stored positions only the first thread goes on, in the move generator's order (a
    /// search this large is most likely a proof: one depth-first search keeps the smallest stack, and
    /// ordering children costs time).
    pub portfolio_positions: u64,
    /// Threads of a proof: of the lean search past its first positions ([`parallel`]) and of the
    /// layered proof that takes over when the memory runs out ([`crate::layered::prove_bounded`]); the
    /// count of a proof is the same whatever they are.
    pub layered_threads: usize,
    /// With more than one thread, the first searches alone until this many positions are stored,
    /// exactly as one thread would: a search decided before gives the same line and count whatever
    /// the threads (past it, a solved search's line and count may vary; a proof's count never does).
    pub parallel_from: u64,
    /// Most positions, in all, of the wide beams the cascade tries for a line before a giant proof
    /// ([`crate::prove_bounded`]): it takes them in order while they fit.
    pub wide_beam_positions: u64,
}

/// What the last search of a [`Prover`] did.
#[derive(Clone, Copy, Debug)]
pub struct ProveStats {
    /// Positions expanded.
    pub expanded: u64,
    /// Children computed.
    pub children: u64,
    /// Children found in the recent-children cache.
    pub recent_hits: u64,
    /// Expansions whose lookups were held up by a shard another thread was growing (tried again later).
    pub held_up: u64,
    /// Most positions on the stack (the sum of each thread's most).
    pub max_stack: usize,
    /// Bytes of the visited set at the end.
    pub set_bytes: usize,
    /// Bytes held at the end (set and the calling thread's stack).
    pub bytes: usize,
    /// Positions stored by number of cards home.
    pub by_home: [u64; 53],
}

impl Default for ProveStats {
    fn default() -> Self {
        ProveStats {
            expanded: 0,
            children: 0,
            recent_hits: 0,
            held_up: 0,
            max_stack: 0,
            set_bytes: 0,
            bytes: 0,
            by_home: [0; 53],
        }
    }
}

impl ProveStats {
    /// Add the statistics of another thread of the same search.
    fn add(&mut self, o: &ProveStats) {
        self.expanded += o.expanded;
        self.children += o.children;
        self.recent_hits += o.recent_hits;
        self.held_up += o.held_up;
        self.max_stack += o.max_stack;
        for (a, b) in self.by_home.iter_mut().zip(&o.by_home) {
            *a += b;
        }
    }
}

impl Default for Prover {
    fn default() -> Self {
        Self::new()
    }
}

impl Prover {
    pub fn new() -> Prover {
        Prover {
            set: KeySet::new(),
            work: Worker::new(),
            max_memory: None,
            stats: ProveStats::default(),
            threads: Thread::PORTFOLIO.to_vec(),
            portfolio_positions: 20_000_000,
            layered_threads: 1,
            parallel_from: 1_000_000,
            wide_beam_positions: crate::cascade::WIDE_BEAM_POSITIONS,
        }
    }

    /// Search every position reachable from `layout` with `ncells` free cells, or until a won position
    /// or a budget. The count of a proof is the exact size of the reachable set.
    pub fn prove(
        &mut self,
        layout: &Layout,
        ncells: usize,
        limits: Limits,
    ) -> Result<SearchResult> {
        let start = Instant::now();
        let (mut p0, _) = Position::from_layout(layout, ncells)?;
        p0.settle(None);
        let rules = Rules::new(layout, ncells);
        self.set.clear();
        self.set.set_budget(self.max_memory);
        self.stats = ProveStats::default();
        let root = *p0.key();
        self.set.insert(&root);
        let end = if rules.is_sorted(&root) {
            End::Won(vec![root])
        } else if limits.max_positions <= 1 {
            End::Budget(Budget::Positions)
        } else {
            self.search(&rules, root, limits, start)
        };
        self.set.recount();
        self.stats.bytes = self.set.memory() + self.work.held();
        self.stats.set_bytes = self.set.memory();
        let positions = self.set.len() as u64;
        if self.stats.bytes > KEEP_BYTES {
            // Give big tables back now rather than at the next search.
            self.set.clear();
            self.work.shrink();
        }
        let (goal, exhausted) = match end {
            End::Won(chain) => (Some(chain), None),
            End::Budget(b) => (None, Some(b)),
            End::Done => (None, None),
        };
        let (outcome, solution) = match (goal, exhausted) {
            (Some(chain), _) => (
                Outcome::Solved,
                checked_line(layout, ncells, &rules, chain, "a prover's line")?,
            ),
            (None, None) => (Outcome::Unsolvable, vec![]),
            (None, Some(_)) => (Outcome::Undecided, vec![]),
        };
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    }

    /// The search from `root` (stored, not sorted), on [`Prover::layered_threads`] threads.
    fn search(&mut self, rules: &Rules, root: Key, limits: Limits, start: Instant) -> End {
        let threads = self.layered_threads.max(1);
        if threads > 1 {
            self.set.share(threads);
        }
        let end = self.search_on(rules, root, limits, start, threads);
        if threads > 1 {
            self.set.unshare();
        }
        end
    }

    /// [`Prover::search`] on `threads` threads, the set shared when more than one.
    fn search_on(
        &mut self,
        rules: &Rules,
        root: Key,
        limits: Limits,
        start: Instant,
        threads: usize,
    ) -> End {
        let ctx = Ctx {
            rules,
            set: &self.set,
            limits,
            start,
            orders: &self.threads,
            portfolio_positions: self.portfolio_positions,
            parallel_from: self.parallel_from,
            max_memory: self.max_memory,
            shared: None,
        };
        if threads == 1 {
            self.work
                .begin(self.threads.len(), Some(root), limits.max_positions - 1);
            let end = self.work.run(&ctx, 0);
            self.stats = self.work.stats;
            end
        } else {
            let (end, stats) = parallel::search(&mut self.work, ctx, threads, root);
            self.stats = stats;
            end
        }
    }
}
