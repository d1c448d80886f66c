//! The lean exhaustive search: every position reachable from the start, depth first, in as little memory
//! and time per position as possible. It decides a position either way: it stops at the first won (or
//! provably won, [`Position::is_sorted`]) position and returns the line that leads there, or it proves
//! that none is reachable, with the exact size of the reachable set as its count (SPEC §3).
//!
//! What makes it lean:
//! - the visited set holds the 20-byte canonical keys and nothing else (no parent links): 64-byte buckets
//!   of three keys in 256 independently growing shards, about 26–30 bytes per position ([`KeySet`]);
//! - the line to a won position comes from an explicit depth-first path: the stack of positions being
//!   expanded, each a child of the one below it;
//! - a position is expanded from its key into a compact form ([`Lean`]: links, two card masks, the
//!   foundations and the key, about 110 bytes) whose children are computed without the heuristics'
//!   statistics; the children's slots in the set are prefetched before they are looked up.
//!
//! The rules are those of [`Position`]: the same moves, the same automatic moves, the same keys (the
//! tests check that both give the same children everywhere). The line found is replayed with
//! [`Position`] from the concrete start and checked by [`crate::replay`].

mod keyset;
mod rules;
mod todo;

use std::time::Instant;

use crate::error::Result;
use crate::key::{cards_dealt, cards_home, hash, Key};
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::checked_line;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::position::Position;

pub use keyset::KeySet;
use keyset::KEEP_BYTES;
pub use rules::{Lean, Rules, NFEAT};
use todo::{Batch, Node, Todo, DONE, IN_FLIGHT, WAITING};

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

/// Expansions whose lookups overlap: the children of a position are looked up this many expansions
/// after they were computed and their slots prefetched, so that memory latency is hidden.
const PIPELINE: usize = 6;

/// Entries of the cache of recently seen children (a direct-mapped cache of keys known to be stored:
/// a hit spares a lookup in the large table, and most children were seen a moment ago).
const RECENT: usize = 1 << 15;
/// The recent-children cache is used once the set holds this many positions.
const RECENT_FROM: usize = 1 << 15;

/// The lean exhaustive search, reusable from one search to the next (it keeps its tables).
pub struct Prover {
    set: KeySet,
    /// Positions still to expand, and the expanded ones whose descendants are still being searched
    /// (a stack: a position's descendants lie above it).
    nodes: Vec<Node>,
    /// Per thread: stack indices of the positions still to expand (last in, first out: depth first).
    todo: Vec<Todo>,
    flight: std::collections::VecDeque<Batch>,
    spare: Vec<Batch>,
    /// The new children of the batch being looked up when they are to be ordered: their index in the
    /// batch (then their sort key), and their stack index (reused from batch to batch).
    fresh: Vec<(u32, u32)>,
    /// The children of the position being expanded, and the same whole when they are kept (reused).
    kids: Vec<Key>,
    leans: Vec<Lean>,
    recent: Vec<Key>,
    recent_on: bool,
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
    /// Threads of the layered proof that takes over when the memory runs out
    /// ([`crate::layered::prove_bounded`]; the count is the same whatever they are).
    pub layered_threads: usize,
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
    /// Most positions on the stack.
    pub max_stack: usize,
    /// Bytes of the visited set at the end.
    pub set_bytes: usize,
    /// Bytes held at the end (set and stack).
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
            max_stack: 0,
            set_bytes: 0,
            bytes: 0,
            by_home: [0; 53],
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
            nodes: Vec::new(),
            todo: Vec::new(),
            flight: std::collections::VecDeque::with_capacity(PIPELINE),
            spare: Vec::new(),
            fresh: Vec::new(),
            kids: Vec::with_capacity(128),
            leans: Vec::with_capacity(128),
            recent: Vec::new(),
            recent_on: false,
            max_memory: None,
            stats: ProveStats::default(),
            threads: Thread::PORTFOLIO.to_vec(),
            portfolio_positions: 20_000_000,
            layered_threads: 1,
        }
    }

    fn held(&self) -> usize {
        self.set.memory()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.todo.iter().map(|t| t.v.capacity() * 4).sum::<usize>()
            + self.recent.capacity() * std::mem::size_of::<Key>()
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
        self.nodes.clear();
        self.todo
            .resize_with(self.threads.len().max(1), Todo::default);
        for t in &mut self.todo {
            t.clear();
        }
        while let Some(b) = self.flight.pop_front() {
            self.spare.push(b);
        }
        self.recent_on = false;
        self.stats = ProveStats::default();
        let root = *p0.key();
        self.set.insert(&root);
        let (goal, exhausted) = if rules.is_sorted(&root) {
            (Some(vec![root]), None)
        } else if limits.max_positions <= 1 {
            (None, Some(Budget::Positions))
        } else {
            self.run(&rules, root, limits, start)
        };
        self.stats.bytes = self.held();
        self.stats.set_bytes = self.set.memory();
        let positions = self.set.len() as u64;
        if self.stats.bytes > KEEP_BYTES {
            // Give big tables back now rather than at the next search.
            self.set.clear();
            self.nodes = Vec::new();
            self.todo = Vec::new();
        }
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

    fn quantum(&self, t: usize) -> u32 {
        self.threads.get(t).map_or(u32::MAX, |t| t.quantum.max(1))
    }

    /// The line of keys from the root to stack node `i`, then `last`.
    fn chain(&self, mut i: u32, last: Key) -> Vec<Key> {
        let mut chain = vec![last];
        while i != u32::MAX {
            let n = &self.nodes[i as usize];
            chain.push(n.key);
            i = n.parent;
        }
        chain.reverse();
        chain
    }

    /// The search from `root` (stored, not sorted): depth first, the lookups of each expansion overlapped
    /// with the next expansions. Returns the line to a sorted position, or the budget that ran out, or
    /// neither (a proof).
    fn run(
        &mut self,
        rules: &Rules,
        root: Key,
        limits: Limits,
        start: Instant,
    ) -> (Option<Vec<Key>>, Option<Budget>) {
        self.nodes.push(Node {
            key: root,
            parent: u32::MAX,
            state: WAITING,
        });
        self.todo[0].push(0);
        let mut nthreads = self.todo.len();
        // Whether the threads still order their children (not once the search is past the portfolio).
        let mut portfolio = true;
        let (mut cur, mut left) = (0usize, self.quantum(0));
        let mut resolved = 0u64;
        loop {
            if let Some(line) = self.fill_pipeline(rules, nthreads, portfolio, &mut cur, &mut left)
            {
                return (Some(line), None);
            }
            // Look up the children of the oldest expansion.
            let Some(batch) = self.flight.pop_front() else {
                return (None, None);
            };
            let node = batch.node;
            let thread = if (batch.thread as usize) < nthreads {
                batch.thread as usize
            } else {
                0
            };
            let first_new = self.todo[thread].v.len();
            // Whether this thread orders its new children, by their score.
            let weights = self
                .threads
                .get(thread)
                .and_then(|t| t.weights)
                .filter(|_| portfolio);
            self.fresh.clear();
            for (j, &(k, h)) in batch.kids.iter().enumerate() {
                if self.recent_on {
                    self.recent[(h >> 24) as usize & (RECENT - 1)] = k;
                }
                if !self.set.insert_hashed(&k, h) {
                    continue;
                }
                if rules.is_sorted(&k) {
                    self.spare.push(batch);
                    return (Some(self.chain(node, k)), None);
                }
                if self.set.len() as u64 >= limits.max_positions {
                    self.spare.push(batch);
                    return (None, Some(Budget::Positions));
                }
                self.stats.by_home[(cards_home(&k) + 52 - cards_dealt(&k)) as usize / 2] += 1;
                if weights.is_some() {
                    self.fresh.push((j as u32, self.nodes.len() as u32));
                }
                self.todo[thread].push(self.nodes.len() as u32);
                self.nodes.push(Node {
                    key: k,
                    parent: node,
                    state: WAITING,
                });
            }
            if let (Some(w), true) = (&weights, self.fresh.len() > 1) {
                self.order_fresh(&batch.leans, w, thread, first_new);
            }
            self.spare.push(batch);
            self.nodes[node as usize].state = DONE;
            while self.nodes.last().is_some_and(|n| n.state == DONE) {
                self.nodes.pop();
            }
            self.stats.max_stack = self.stats.max_stack.max(self.nodes.len());
            if portfolio && self.set.len() as u64 >= self.portfolio_positions {
                self.end_portfolio(nthreads);
                nthreads = 1;
                portfolio = false;
                cur = 0;
                left = self.quantum(0);
            }
            if !self.recent_on && self.set.len() >= RECENT_FROM {
                self.recent_on = true;
                self.recent.clear();
                self.recent.resize(RECENT, [u64::MAX; 3]);
            }
            resolved += 1;
            if resolved & 1023 == 0 {
                if limits.out_of_time(start) {
                    return (None, Some(Budget::Time));
                }
                if let Some(m) = self.max_memory {
                    if self.held() > m {
                        return (None, Some(Budget::Positions));
                    }
                }
            }
        }
    }

    /// Expand positions until the pipeline is full, the threads taking turns (`cur` the thread whose
    /// turn it is, with `left` expansions left in its turn; the first `nthreads` take part, ordering
    /// their children while `portfolio`). Returns the line to a won child, if one is found.
    fn fill_pipeline(
        &mut self,
        rules: &Rules,
        nthreads: usize,
        portfolio: bool,
        cur: &mut usize,
        left: &mut u32,
    ) -> Option<Vec<Key>> {
        while self.flight.len() < PIPELINE {
            if *left == 0 {
                *cur = (*cur + 1) % nthreads;
                *left = self.quantum(*cur);
            }
            if self.todo[*cur].is_empty() {
                // Take over the oldest waiting position of the busiest other thread (near the
                // root: a part of the search far from where that thread is).
                let victim = (0..nthreads)
                    .max_by_key(|&t| self.todo[t].len())
                    .expect("a thread");
                if self.todo[victim].is_empty() {
                    return None;
                }
                let i = self.todo[victim].steal().expect("a waiting position");
                self.todo[*cur].push(i);
            }
            let i = self.todo[*cur].pop().expect("a waiting position");
            *left -= 1;
            let keep = portfolio && self.threads.get(*cur).is_some_and(|t| t.weights.is_some());
            if let Some(won) = self.expand(rules, i, *cur as u32, keep) {
                return Some(self.chain(i, won));
            }
        }
        None
    }

    /// Order the new children of a batch that thread `thread` pushed on its stack from `first_new` on
    /// ([`Prover::fresh`]), by their score under `w` (`leans` the batch's children whole).
    fn order_fresh(&mut self, leans: &[Lean], w: &[u32; NFEAT], thread: usize, first_new: usize) {
        // The most promising child last, to be expanded first: sorted by the complement of
        // the score (highest score first), stably (equal scores keep the generator's order).
        for f in &mut self.fresh {
            f.0 = !leans[f.0 as usize].score(w);
        }
        self.fresh.sort_by_key(|&(key, _)| key);
        let todo = &mut self.todo[thread].v[first_new..];
        for (t, &(_, i)) in todo.iter_mut().zip(&self.fresh) {
            *t = i;
        }
    }

    /// Past the portfolio: the first thread takes every waiting position of the first `nthreads`.
    fn end_portfolio(&mut self, nthreads: usize) {
        // A large search is most likely a proof: the first thread goes on alone with every
        // waiting position (its own on top), so that finished positions leave the stack again.
        let mut all = Vec::new();
        for t in (1..nthreads).chain([0]) {
            let todo = &mut self.todo[t];
            all.extend_from_slice(&todo.v[todo.start..]);
            todo.clear();
        }
        self.todo[0].v = all;
    }

    /// Expand stack node `i`: compute its children, drop those seen a moment ago, prefetch the slots of
    /// the others and queue them for lookup (with the children whole when `keep`: [`Batch::leans`]).
    /// Returns a child with every card home, if any.
    #[inline(always)]
    fn expand(&mut self, rules: &Rules, i: u32, thread: u32, keep: bool) -> Option<Key> {
        let node = &mut self.nodes[i as usize];
        node.state = IN_FLIGHT;
        let p = rules.decode(&node.key);
        let mut batch = self.spare.pop().unwrap_or_default();
        batch.node = i;
        batch.thread = thread;
        batch.kids.clear();
        batch.leans.clear();
        self.stats.expanded += 1;
        // The children first, then their lookups prepared: two short loops run faster than one.
        if keep {
            let (kids, leans) = (&mut self.kids, &mut self.leans);
            kids.clear();
            leans.clear();
            rules.for_each_child(&p, |q| {
                kids.push(*q.key());
                leans.push(*q);
            });
        } else {
            rules.children(&p, &mut self.kids);
        }
        self.stats.children += self.kids.len() as u64;
        for (j, k) in self.kids.iter().enumerate() {
            if *k == [0; 3] {
                self.spare.push(batch);
                return Some(*k);
            }
            let h = hash(k);
            if self.recent_on && self.recent[(h >> 24) as usize & (RECENT - 1)] == *k {
                self.stats.recent_hits += 1;
                continue;
            }
            self.set.prefetch(h);
            batch.kids.push((*k, h));
            if keep {
                batch.leans.push(self.leans[j]);
            }
        }
        self.flight.push_back(batch);
        None
    }
}
