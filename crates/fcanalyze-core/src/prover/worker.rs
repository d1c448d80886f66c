//! One depth-first search over the prover's set ([`Worker`]): alone, it is the whole lean search; with
//! others ([`super::parallel`]), each runs its own on the shared set, and work passes between them
//! through a pool. Its stack holds the positions being searched, each with the stack index of the
//! position it was reached from, so that a won position comes back with its line.

use std::collections::VecDeque;
use std::time::Instant;

use crate::key::{cards_dealt, cards_home, hash, Key};
use crate::limits::Limits;
use crate::outcome::Budget;

use super::keyset::{KeySet, Tally};
use super::parallel::{Shared, Work};
use super::rules::{Lean, Rules, NFEAT, NO};
use super::todo::{Batch, Node, Todo, DONE, IN_FLIGHT, WAITING};
use super::{ProveStats, Thread};

/// Expansions whose lookups overlap: the children of a position are looked up this many expansions
/// after they were computed and their slots prefetched, so that memory latency is hidden.
const PIPELINE: usize = 6;

/// Entries of the cache of recently seen children (a direct-mapped cache of keys known to be stored:
/// a hit spares a lookup in the large table, and most children were seen a moment ago).
const RECENT: usize = 1 << 15;
/// The recent-children cache is used once the set holds this many positions.
const RECENT_FROM: u64 = 1 << 15;

/// [`Node::parent`] of the search's root.
const NO_PARENT: u32 = u32::MAX;
/// [`Node::parent`] of a position given by another thread: this plus the index of its line in
/// [`Worker::given`].
const GIVEN: u32 = 0xC000_0000;

/// What one search runs on: the rules, the set, the budgets and how it orders children.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) rules: &'a Rules,
    pub(super) set: &'a KeySet,
    pub(super) limits: Limits,
    pub(super) start: Instant,
    /// The portfolio's child orders ([`super::Prover::threads`]).
    pub(super) orders: &'a [Thread],
    pub(super) portfolio_positions: u64,
    /// Positions the first thread stores alone before it gives work to others.
    pub(super) parallel_from: u64,
    pub(super) max_memory: Option<usize>,
    /// The threads' common state, when the search has company.
    pub(super) shared: Option<&'a Shared>,
}

/// How a worker's search ended.
pub(super) enum End {
    /// The line of keys to a won (or sorted) position.
    Won(Vec<Key>),
    /// A budget ran out.
    Budget(Budget),
    /// No position left to expand (alone: a proof), or another thread ended the search.
    Done,
}

/// One depth-first search's stack, work in flight and reusable buffers.
pub(super) struct Worker {
    /// Positions still to expand, and the expanded ones whose descendants are still being searched
    /// (a stack: a position's descendants lie above it).
    nodes: Vec<Node>,
    /// Per child order of the portfolio: stack indices of the positions still to expand (last in,
    /// first out: depth first).
    todo: Vec<Todo>,
    flight: VecDeque<Batch>,
    /// Expansions whose lookups were held up by a shard another thread held (growing it): they go on
    /// from [`Batch::done`] a few turns later, the thread searching meanwhile.
    stuck: VecDeque<Batch>,
    spare: Vec<Batch>,
    /// The new children of the batch being looked up when they are to be ordered: their index in the
    /// batch (then their sort key), and their stack index (reused from batch to batch).
    fresh: Vec<(u32, u32)>,
    /// The children of the position being expanded, the run each may leave unmoved, and the same
    /// whole when they are kept (reused).
    kids: Vec<Key>,
    kids_moved: Vec<u8>,
    leans: Vec<Lean>,
    recent: Vec<Key>,
    recent_on: bool,
    /// The lines from the root to the positions given by other threads (each ends with the position).
    given: Vec<Vec<Key>>,
    /// New positions this worker stored, and how many it may store (the rest of the budget is with
    /// the other threads, given out in chunks: [`Worker::grant`]).
    stored: u64,
    granted: u64,
    /// This thread's part in the shared set ([`KeySet::insert_shared`]).
    tally: Tally,
    pub(super) stats: ProveStats,
}

impl Worker {
    pub(super) fn new() -> Worker {
        Worker {
            nodes: Vec::new(),
            todo: Vec::new(),
            flight: VecDeque::with_capacity(PIPELINE),
            stuck: VecDeque::new(),
            spare: Vec::new(),
            fresh: Vec::new(),
            kids: Vec::with_capacity(128),
            kids_moved: Vec::with_capacity(128),
            leans: Vec::with_capacity(128),
            recent: Vec::new(),
            recent_on: false,
            given: Vec::new(),
            stored: 0,
            granted: 0,
            tally: Tally::new(0),
            stats: ProveStats::default(),
        }
    }

    /// Get ready for a search with `orders` child orders, starting from `root` if given, allowed to
    /// store `granted` new positions before it asks for more.
    pub(super) fn begin(&mut self, orders: usize, root: Option<Key>, granted: u64) {
        self.nodes.clear();
        self.todo.resize_with(orders.max(1), Todo::default);
        for t in &mut self.todo {
            t.clear();
        }
        while let Some(b) = self.flight.pop_front().or_else(|| self.stuck.pop_front()) {
            self.spare.push(b);
        }
        self.recent_on = false;
        self.given.clear();
        self.stored = 0;
        self.granted = granted;
        self.stats = ProveStats::default();
        if let Some(key) = root {
            self.nodes.push(Node {
                key,
                parent: NO_PARENT,
                state: WAITING,
                moved: NO,
            });
            self.todo[0].push(0);
        }
    }

    /// Give the big buffers back.
    pub(super) fn shrink(&mut self) {
        self.nodes = Vec::new();
        self.todo = Vec::new();
        self.given = Vec::new();
    }

    /// Bytes held by the stack and buffers.
    pub(super) fn held(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.todo.iter().map(|t| t.v.capacity() * 4).sum::<usize>()
            + self.recent.capacity() * std::mem::size_of::<Key>()
            + self.given.iter().map(|g| g.capacity() * 20).sum::<usize>()
    }

    fn quantum(ctx: &Ctx, t: usize) -> u32 {
        ctx.orders.get(t).map_or(u32::MAX, |t| t.quantum.max(1))
    }

    /// Positions stored so far: exact alone, otherwise those granted to all threads (at most a chunk
    /// per thread more).
    #[inline]
    fn positions(&self, ctx: &Ctx) -> u64 {
        match ctx.shared {
            None => 1 + self.stored,
            Some(sh) => sh.reserved(),
        }
    }

    /// Insert a child: whether it is new, or `None` when its shard is being grown by another thread
    /// and not `wait`.
    #[inline(always)]
    fn insert(&mut self, ctx: &Ctx, k: &Key, h: u64, wait: bool) -> Option<bool> {
        match ctx.shared {
            // SAFETY: alone, this worker is the set's only user (the prover holds it exclusively, not
            // shared).
            None => Some(unsafe { ctx.set.insert_alone(k, h) }),
            Some(_) => ctx.set.insert_shared(k, h, wait, &mut self.tally),
        }
    }

    /// Done with a shared set: this thread's new keys counted in it, and it reads it no more.
    pub(super) fn leave(&mut self, ctx: &Ctx) {
        if ctx.shared.is_some() {
            ctx.set.leave(&mut self.tally);
        }
    }

    /// More of the position budget, from the other threads' common count; false when it is spent.
    fn grant(&mut self, ctx: &Ctx) -> bool {
        match ctx.shared {
            None => false,
            Some(sh) => {
                let got = sh.grant(ctx.limits.max_positions);
                self.granted += got;
                got > 0
            }
        }
    }

    /// The line of keys from the root to stack node `i`, then `last` if given.
    fn line(&self, mut i: u32, last: Option<Key>) -> Vec<Key> {
        let mut chain: Vec<Key> = last.into_iter().collect();
        loop {
            let n = &self.nodes[i as usize];
            chain.push(n.key);
            if n.parent == NO_PARENT {
                break;
            }
            if n.parent >= GIVEN {
                let g = &self.given[(n.parent - GIVEN) as usize];
                chain.extend(g[..g.len() - 1].iter().rev());
                break;
            }
            i = n.parent;
        }
        chain.reverse();
        chain
    }

    /// The search: depth first, the lookups of each expansion overlapped with the next expansions.
    /// `id` is the worker's index among the threads.
    pub(super) fn run(&mut self, ctx: &Ctx, id: usize) -> End {
        self.tally = Tally::new(id);
        let mut norders = self.todo.len();
        // Whether the orders still take turns (not once the search is past the portfolio).
        let mut portfolio = true;
        let (mut cur, mut left) = (0usize, Self::quantum(ctx, 0));
        let (mut resolved, mut turn) = (0u64, 0u32);
        loop {
            if let Some(line) = self.fill_pipeline(ctx, norders, portfolio, &mut cur, &mut left) {
                return End::Won(line);
            }
            // Look up the children of the oldest expansion, or (every eighth turn, or when nothing else
            // is left, then waiting for the lock) of one held up by a growing shard.
            turn = turn.wrapping_add(1);
            let retry = !self.stuck.is_empty() && (turn & 7 == 0 || self.flight.is_empty());
            let (mut batch, wait) = if retry {
                let b = self.stuck.pop_front().expect("a held-up batch");
                (b, self.flight.is_empty())
            } else if let Some(b) = self.flight.pop_front() {
                (b, false)
            } else {
                match ctx.shared {
                    Some(sh) if self.fetch(ctx, sh, norders) => continue,
                    _ => return End::Done,
                }
            };
            // Hold a position of the budget before any is stored (a thread starts with none).
            if self.stored >= self.granted && !self.grant(ctx) {
                self.spare.push(batch);
                return End::Budget(Budget::Positions);
            }
            let node = batch.node;
            let order = if (batch.thread as usize) < norders {
                batch.thread as usize
            } else {
                0
            };
            let first_new = self.todo[order].v.len();
            // Whether this order sorts its new children, by their score.
            let weights = ctx
                .orders
                .get(order)
                .and_then(|t| t.weights)
                .filter(|_| portfolio);
            self.fresh.clear();
            let mut held_up = false;
            for j in batch.done..batch.kids.len() {
                let (k, h) = batch.kids[j];
                let Some(new) = self.insert(ctx, &k, h, wait) else {
                    batch.done = j;
                    held_up = true;
                    break;
                };
                if self.recent_on {
                    self.recent[(h >> 24) as usize & (RECENT - 1)] = k;
                }
                if !new {
                    continue;
                }
                if ctx.rules.is_sorted(&k) {
                    self.spare.push(batch);
                    return End::Won(self.line(node, Some(k)));
                }
                self.stored += 1;
                if self.stored >= self.granted && !self.grant(ctx) {
                    self.spare.push(batch);
                    return End::Budget(Budget::Positions);
                }
                self.stats.by_home[(cards_home(&k) + 52 - cards_dealt(&k)) as usize / 2] += 1;
                if weights.is_some() {
                    self.fresh.push((j as u32, self.nodes.len() as u32));
                }
                self.todo[order].push(self.nodes.len() as u32);
                self.nodes.push(Node {
                    key: k,
                    parent: node,
                    state: WAITING,
                    moved: batch.moved[j],
                });
            }
            if let (Some(w), true) = (&weights, self.fresh.len() > 1) {
                self.order_fresh(&batch.leans, w, order, first_new);
            }
            if held_up {
                // The rest of its children later: the thread goes on meanwhile.
                self.stats.held_up += 1;
                self.stuck.push_back(batch);
                continue;
            }
            self.spare.push(batch);
            self.nodes[node as usize].state = DONE;
            while self.nodes.last().is_some_and(|n| n.state == DONE) {
                self.nodes.pop();
            }
            self.stats.max_stack = self.stats.max_stack.max(self.nodes.len());
            if portfolio && self.positions(ctx) >= ctx.portfolio_positions {
                self.end_portfolio(norders);
                norders = 1;
                portfolio = false;
                cur = 0;
                left = Self::quantum(ctx, 0);
            }
            if !self.recent_on && self.positions(ctx) >= RECENT_FROM {
                self.recent_on = true;
                self.recent.clear();
                self.recent.resize(RECENT, [u64::MAX; 3]);
            }
            if let Some(sh) = ctx.shared {
                if sh.stopped() {
                    return End::Done;
                }
                if sh.hungry() && self.positions(ctx) >= ctx.parallel_from {
                    self.donate(sh, norders);
                }
            }
            resolved += 1;
            if resolved & 63 == 0 && ctx.shared.is_some() {
                ctx.set.quiescent(&self.tally);
            }
            if resolved & 1023 == 0 {
                if ctx.limits.out_of_time(ctx.start) {
                    return End::Budget(Budget::Time);
                }
                if let Some(m) = ctx.max_memory {
                    let held = match ctx.shared {
                        None => self.held(),
                        Some(sh) => sh.held(id, self.held()),
                    };
                    if ctx.set.memory() + held > m {
                        return End::Budget(Budget::Positions);
                    }
                }
            }
        }
    }

    /// Expand positions until the pipeline is full, the orders taking turns (`cur` the order whose
    /// turn it is, with `left` expansions left in its turn; the first `norders` take part, sorting
    /// their children while `portfolio`). Returns the line to a won child, if one is found.
    fn fill_pipeline(
        &mut self,
        ctx: &Ctx,
        norders: usize,
        portfolio: bool,
        cur: &mut usize,
        left: &mut u32,
    ) -> Option<Vec<Key>> {
        while self.flight.len() < PIPELINE {
            if *left == 0 {
                *cur = (*cur + 1) % norders;
                *left = Self::quantum(ctx, *cur);
            }
            if self.todo[*cur].is_empty() {
                // Take over the oldest waiting position of the busiest other order (near the
                // root: a part of the search far from where that order is).
                let victim = (0..norders)
                    .max_by_key(|&t| self.todo[t].len())
                    .expect("an order");
                if self.todo[victim].is_empty() {
                    return None;
                }
                let i = self.todo[victim].steal().expect("a waiting position");
                self.todo[*cur].push(i);
            }
            let i = self.todo[*cur].pop().expect("a waiting position");
            *left -= 1;
            let keep = portfolio && ctx.orders.get(*cur).is_some_and(|t| t.weights.is_some());
            if let Some(won) = self.expand(ctx, i, *cur as u32, keep) {
                return Some(self.line(i, Some(won)));
            }
        }
        None
    }

    /// Order the new children of a batch that order `order` pushed on its stack from `first_new` on
    /// ([`Worker::fresh`]), by their score under `w` (`leans` the batch's children whole).
    fn order_fresh(&mut self, leans: &[Lean], w: &[u32; NFEAT], order: usize, first_new: usize) {
        // The most promising child last, to be expanded first: sorted by the complement of
        // the score (highest score first), stably (equal scores keep the generator's order).
        for f in &mut self.fresh {
            f.0 = !leans[f.0 as usize].score(w);
        }
        self.fresh.sort_by_key(|&(key, _)| key);
        let todo = &mut self.todo[order].v[first_new..];
        for (t, &(_, i)) in todo.iter_mut().zip(&self.fresh) {
            *t = i;
        }
    }

    /// Past the portfolio: the first order takes every waiting position of the first `norders`.
    fn end_portfolio(&mut self, norders: usize) {
        // A large search is most likely a proof: the first order goes on alone with every
        // waiting position (its own on top), so that finished positions leave the stack again.
        let mut all = Vec::new();
        for t in (1..norders).chain([0]) {
            let todo = &mut self.todo[t];
            all.extend_from_slice(&todo.v[todo.start..]);
            todo.clear();
        }
        self.todo[0].v = all;
    }

    /// Out of work: wait for work given by another thread (true), or for the end of the search.
    fn fetch(&mut self, ctx: &Ctx, sh: &Shared, norders: usize) -> bool {
        ctx.set.waiting(&self.tally, true);
        let work = sh.fetch();
        ctx.set.waiting(&self.tally, false);
        let Some(work) = work else {
            return false;
        };
        if self.nodes.is_empty() {
            self.given.clear();
        }
        let i = self.nodes.len() as u32;
        self.nodes.push(Node {
            key: *work.line.last().expect("a line"),
            parent: GIVEN + self.given.len() as u32,
            state: WAITING,
            // How the giver reached it is not known here: every run moves.
            moved: NO,
        });
        self.given.push(work.line);
        let order = if (work.order as usize) < norders {
            work.order as usize
        } else {
            0
        };
        self.todo[order].push(i);
        true
    }

    /// Another thread is out of work: give it the oldest waiting positions of the busiest orders
    /// (near the root, so most likely large parts of the search), keeping at least one.
    fn donate(&mut self, sh: &Shared, norders: usize) {
        sh.give(|| {
            let t = (0..norders)
                .max_by_key(|&t| self.todo[t].len())
                .expect("an order");
            if self.todo[t].len() < 2 {
                return None;
            }
            let i = self.todo[t].steal().expect("a waiting position");
            self.nodes[i as usize].state = DONE;
            Some(Work {
                line: self.line(i, None),
                order: t as u32,
            })
        });
    }

    /// Expand stack node `i`: compute its children, drop those seen a moment ago, prefetch the slots of
    /// the others and queue them for lookup (with the children whole when `keep`: [`Batch::leans`]).
    /// Returns a child with every card home, if any.
    #[inline(always)]
    fn expand(&mut self, ctx: &Ctx, i: u32, order: u32, keep: bool) -> Option<Key> {
        let node = &mut self.nodes[i as usize];
        node.state = IN_FLIGHT;
        let p = ctx.rules.decode(&node.key).with_moved(node.moved);
        let mut batch = self.spare.pop().unwrap_or_default();
        batch.node = i;
        batch.thread = order;
        batch.kids.clear();
        batch.moved.clear();
        batch.leans.clear();
        batch.done = 0;
        self.stats.expanded += 1;
        // The children first, then their lookups prepared: two short loops run faster than one.
        if keep {
            let (kids, kids_moved, leans) = (&mut self.kids, &mut self.kids_moved, &mut self.leans);
            kids.clear();
            kids_moved.clear();
            leans.clear();
            ctx.rules.for_each_child(&p, |q| {
                kids.push(*q.key());
                kids_moved.push(q.moved());
                leans.push(*q);
            });
        } else {
            ctx.rules
                .children_moved(&p, &mut self.kids, &mut self.kids_moved);
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
            ctx.set.prefetch(h);
            batch.kids.push((*k, h));
            batch.moved.push(self.kids_moved[j]);
            if keep {
                batch.leans.push(self.leans[j]);
            }
        }
        self.flight.push_back(batch);
        None
    }
}
