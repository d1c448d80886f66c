//! The search engine: a best-first solver and an exhaustive prover over canonical positions.
//!
//! Both are complete: a search that runs out of positions to expand has examined every reachable
//! position, so it proves the position unsolvable. A budget hit is reported as undecided.
//!
//! [`Strategy::Solve`] runs a portfolio of depth-first dives (children scored by a heuristic, with
//! random noise, started again or resumed elsewhere when they go astray) beside the complete best-first
//! search, all over one store. Dives score children without building them ([`Position::peek`]) and may
//! also take composite moves ([`Position::clear`], [`Position::dig`], [`Position::shift`]): one search
//! edge for a short line of moves, whose intermediate positions are not stored. Every stored position
//! keeps the move that reached it, told by cards, so the solution is rebuilt as a line of single moves
//! (automatic moves included) and replayed independently before it is returned.

mod dive;

use std::time::Instant;

use crate::error::Result;
use crate::heuristic::{peek_features_from, score, weigh, PeekDepths, Weights};
use crate::key::Key;
use crate::layout::Layout;
use crate::limits::Limits;
use crate::line::VIA_ROOT;
use crate::outcome::{Budget, Outcome, SearchResult, SolutionMove};
use crate::position::{Move, Origin, Position};
use crate::queue::BucketQueue;
use crate::store::Store;

pub use dive::Dive;
use dive::{Diver, DiverState, EXPANDED, MAX_DIVERS};

/// How a search orders its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Best-first on a heuristic: finds solutions fast; still complete.
    Solve,
    /// Depth-first over every reachable position: cheapest per position, for proofs.
    Prove,
}

/// Priorities of the best-first queue (higher scores share its last bucket).
const NPRIORITIES: usize = 4096;

/// What a turn of the solver's portfolio ended in.
enum Step {
    Won(u32),
    Budget(Budget),
    Go,
    /// Every reachable position was visited.
    Exhausted,
}

/// A reusable search engine: keeps its tables between searches so that a block of deals costs one
/// allocation, not one per deal.
pub struct Solver {
    store: Store,
    queue: BucketQueue<NPRIORITIES>,
    stack: Vec<u32>,
    moves: Vec<Move>,
    divers: Vec<Diver>,
    /// Per stored position: a bit per dive that visited it, and [`EXPANDED`].
    mark: Vec<u8>,
    /// Per stored position of [`Strategy::Solve`]: the move from its parent, told by cards
    /// ([`Position::describe`], or a composite move), so that the solution is rebuilt without a search.
    via: Vec<u16>,
    /// Expansions of the best-first search in each turn of [`Strategy::Solve`] (at least).
    pub bf_quantum: u32,
    /// The best-first search also expands, in each turn, one position per `bf_share` stored (at most as
    /// many as the dives visit in a turn).
    pub bf_share: u32,
    /// The weights of the complete best-first phase of [`Strategy::Solve`].
    pub weights: Weights,

    /// The dives tried, in order, before the complete phase of [`Strategy::Solve`].
    pub dives: Vec<Dive>,
    /// Work done by the last search, for benchmarks.
    pub work: Work,
}

/// Work done by a search besides storing positions: a dive's visit builds and scores the children of a
/// position, a best-first expansion decodes one and scores its children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Positions visited by dives (a position may be visited more than once).
    pub visits: u64,
    /// Positions expanded by the best-first search (or by [`Strategy::Prove`]).
    pub expansions: u64,
}

impl Default for Solver {
    fn default() -> Self {
        Self::new()
    }
}

impl Solver {
    pub fn new() -> Solver {
        Solver {
            store: Store::new(),
            queue: BucketQueue::new(),
            stack: Vec::new(),
            moves: Vec::with_capacity(256),
            divers: Vec::new(),
            mark: Vec::new(),
            via: Vec::new(),
            bf_quantum: 20,
            bf_share: 32,
            weights: Weights::BEST_FIRST,

            dives: Dive::PORTFOLIO.to_vec(),
            work: Work::default(),
        }
    }

    /// Search `layout` with `ncells` free cells.
    pub fn search(
        &mut self,
        layout: &Layout,
        ncells: usize,
        strategy: Strategy,
        limits: Limits,
    ) -> Result<SearchResult> {
        let start = Instant::now();
        let (mut p0, origin) = Position::from_layout(layout, ncells)?;
        let concrete = p0;
        p0.settle(None);
        self.store.clear();
        self.work = Work::default();
        self.queue.clear();
        self.stack.clear();
        let root = self.store.insert(p0.key(), u32::MAX).expect("empty store");
        let (goal, exhausted) = if p0.is_sorted() {
            (Some(root), None)
        } else if limits.max_positions <= 1 {
            (None, Some(Budget::Positions))
        } else {
            match strategy {
                Strategy::Solve => self.solve(p0, root, &origin, limits, start),
                Strategy::Prove => self.prove(root, &origin, ncells as u8, limits, start),
            }
        };
        let positions = self.store.len() as u64;
        let (outcome, solution) = match (goal, exhausted) {
            (Some(g), _) => {
                let line = self.solution(concrete, &origin, g)?;
                let line = crate::line::replayed(layout, ncells, line, "a solution")?;
                (Outcome::Solved, line)
            }
            (None, None) => (Outcome::Unsolvable, vec![]),
            (None, Some(_)) => (Outcome::Undecided, vec![]),
        };
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    }

    /// [`Strategy::Solve`]: the dives and a complete best-first search take turns, all sharing one store.
    /// Every stored position also waits in the best-first queue, so when that queue runs dry every
    /// reachable position has been expanded: the proof is complete whatever the dives did.
    fn solve(
        &mut self,
        mut p0: Position,
        root: u32,
        origin: &Origin,
        limits: Limits,
        start: Instant,
    ) -> (Option<u32>, Option<Budget>) {
        p0.track_stats();
        let ncells = p0.ncells() as u8;
        self.mark.clear();
        self.mark.push(0);
        self.via.clear();
        self.via.push(VIA_ROOT);
        let w = self.weights;
        self.queue.push(score(&p0, &w), root);
        let n = self.dives.len().min(MAX_DIVERS);
        while self.divers.len() < n {
            self.divers.push(Diver::default());
        }
        for (t, d) in self.dives[..n].iter().enumerate() {
            self.divers[t].start(d, t, &w);
        }
        let mut steps = 0u64;
        loop {
            for t in 0..n {
                if self.divers[t].state == DiverState::Done {
                    continue;
                }
                match self.dive(t, &p0, root, origin, limits) {
                    Step::Won(g) => return (Some(g), None),
                    Step::Budget(b) => return (None, Some(b)),
                    Step::Exhausted => return (None, None),
                    Step::Go => {}
                }
            }
            // The longer the search, the likelier a proof: the best-first search's share grows, up
            // to as many expansions as the dives' visits in a turn.
            let dive_work: u64 = self.divers[..n]
                .iter()
                .filter(|d| d.state != DiverState::Done)
                .map(|d| d.quantum as u64)
                .sum();
            let quantum = (self.store.len() as u64 / self.bf_share.max(1) as u64)
                .min(if dive_work == 0 { u64::MAX } else { dive_work })
                .max(self.bf_quantum as u64)
                .min(u32::MAX as u64) as u32;
            match self.expand_best(quantum, origin, ncells, limits) {
                Step::Won(g) => return (Some(g), None),
                Step::Budget(b) => return (None, Some(b)),
                Step::Go | Step::Exhausted => {}
            }
            if self.queue.len() == 0 {
                return (None, None);
            }
            steps += 1;
            if steps & 15 == 0 && limits.out_of_time(start) {
                return (None, Some(Budget::Time));
            }
        }
    }

    /// Store a position reached from `parent` and queue it for the best-first search; `None` when it was
    /// already stored (then its index is in the `Err`).
    #[inline]
    fn admit(
        &mut self,
        q: &Position,
        parent: u32,
        via: impl FnOnce() -> u16,
        limits: Limits,
    ) -> std::result::Result<u32, (u32, Option<Budget>)> {
        let w = self.weights;
        self.admit_key(q.key(), parent, || score(q, &w), q.is_sorted(), via, limits)
    }

    /// [`Solver::admit`] given the position's key, best-first priority and whether it is sorted. `prio`
    /// and `via` (how the position is reached, see [`Solver::via`]) are asked only of a new position:
    /// most children of a best-first expansion are stored already.
    #[inline]
    fn admit_key(
        &mut self,
        key: &Key,
        parent: u32,
        prio: impl FnOnce() -> u32,
        sorted: bool,
        via: impl FnOnce() -> u16,
        limits: Limits,
    ) -> std::result::Result<u32, (u32, Option<Budget>)> {
        let (idx, new) = self.store.insert_or_get(key, parent);
        if !new {
            return Err((idx, None));
        }
        self.mark.push(0);
        self.via.push(via());
        if self.store.len() as u64 >= limits.max_positions && !sorted {
            return Err((idx, Some(Budget::Positions)));
        }
        self.queue.push(prio(), idx);
        Ok(idx)
    }

    /// Up to `quantum` expansions of the best-first search; stops when its queue is empty.
    fn expand_best(&mut self, quantum: u32, origin: &Origin, ncells: u8, limits: Limits) -> Step {
        let mut moves = std::mem::take(&mut self.moves);
        let mut done = 0;
        let step = 'search: loop {
            if done >= quantum {
                break Step::Go;
            }
            let Some(idx) = self.queue.pop() else {
                break Step::Go;
            };
            if self.mark[idx as usize] & EXPANDED != 0 {
                continue;
            }
            self.mark[idx as usize] |= EXPANDED;
            done += 1;
            self.work.expansions += 1;
            let p = Position::from_key_tracked(&self.store.get(idx).key(), origin, ncells);
            let base = p.moves_with_base(&mut moves);
            let w = self.weights;
            let depths = PeekDepths::new(&p, w.0[12] != 0);
            for &m in &moves {
                let admitted = match p.peek(m, &base, origin) {
                    Some(pk) => {
                        let sorted = pk.stats & 0xFF == 0;
                        let prio = || weigh(&peek_features_from(&p, &pk, &depths), &w);
                        self.admit_key(&pk.key, idx, prio, sorted, || p.describe(m), limits)
                            .map(|c| (c, sorted))
                    }
                    None => {
                        let mut q = p;
                        q.apply(m, origin);
                        q.settle(None);
                        self.admit(&q, idx, || p.describe(m), limits)
                            .map(|c| (c, q.is_sorted()))
                    }
                };
                match admitted {
                    Ok((child, true)) => break 'search Step::Won(child),
                    Err((_, Some(b))) => break 'search Step::Budget(b),
                    _ => {}
                }
            }
        };
        self.moves = moves;
        step
    }

    /// [`Strategy::Prove`]: depth first over every reachable position; returns the goal's index, or the
    /// budget that ran out.
    fn prove(
        &mut self,
        root: u32,
        origin: &Origin,
        ncells: u8,
        limits: Limits,
        start: Instant,
    ) -> (Option<u32>, Option<Budget>) {
        self.stack.push(root);
        let mut expanded = 0u64;
        let mut moves = std::mem::take(&mut self.moves);
        let result = 'search: loop {
            let Some(idx) = self.stack.pop() else {
                break (None, None);
            };
            expanded += 1;
            self.work.expansions += 1;
            if expanded & 1023 == 0 && limits.out_of_time(start) {
                break (None, Some(Budget::Time));
            }
            let p = Position::from_key(&self.store.get(idx).key(), origin, ncells);
            p.moves(&mut moves);
            for &m in &moves {
                // Stored positions are settled.
                let mut q = p;
                q.apply_settled(m, origin);
                let Some(child) = self.store.insert(q.key(), idx) else {
                    continue;
                };
                if q.is_sorted() {
                    break 'search (Some(child), None);
                }
                if self.store.len() as u64 >= limits.max_positions {
                    break 'search (None, Some(Budget::Positions));
                }
                self.stack.push(child);
            }
        };
        self.moves = moves;
        result
    }

    /// Replay the stored line to `goal` from the concrete start, recording real columns, free-cell slots
    /// and automatic moves, then finish the won position by sending the lowest card home.
    fn solution(
        &mut self,
        start: Position,
        origin: &Origin,
        goal: u32,
    ) -> Result<Vec<SolutionMove>> {
        let mut chain: Vec<(Key, u16)> = Vec::new();
        let mut i = goal;
        let vias = self.via.len() == self.store.len();
        while i != u32::MAX {
            let e = self.store.get(i);
            chain.push((e.key(), if vias { self.via[i as usize] } else { VIA_ROOT }));
            i = e.parent;
        }
        chain.reverse();
        crate::line::through_steps(start, origin, &chain)
    }
}
