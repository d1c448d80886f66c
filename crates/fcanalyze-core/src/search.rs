//! The search engine: a best-first solver and an exhaustive prover over canonical positions.
//!
//! Both are complete: a search that runs out of positions to expand has examined every reachable
//! position, so it proves the position unsolvable. A budget hit is reported as undecided.

use std::time::Instant;

use crate::card::{rank, suit, NONE};
use crate::error::{Error, Result};
use crate::outcome::{Budget, Outcome, SearchResult, SolutionMove};
use crate::position::{Key, Layout, Move, Origin, Position, NCOLS};
use crate::store::Store;

/// How a search orders its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Best-first on a heuristic: finds solutions fast; still complete.
    Solve,
    /// Depth-first over every reachable position: cheapest per position, for proofs.
    Prove,
}

/// The budgets of one search.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most distinct positions to store.
    pub max_positions: u64,
    /// Most milliseconds to run, if any.
    pub max_millis: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_positions: 10_000_000, max_millis: None }
    }
}

/// Number of heuristic features.
pub const NFEATURES: usize = 8;

/// Weights of the best-first heuristic's features (lower scores are expanded first), see [`features`].
#[derive(Clone, Copy, Debug)]
pub struct Weights(pub [i32; NFEATURES]);

impl Default for Weights {
    fn default() -> Self {
        Weights([3, 1, 1, -2, 1, 0, 0, 0])
    }
}

const NBUCKETS: usize = 2048;

/// A priority queue of small integer priorities, LIFO within a priority.
struct Buckets {
    buckets: Vec<Vec<u32>>,
    min: usize,
    len: usize,
}

impl Buckets {
    fn new() -> Self {
        Buckets { buckets: (0..NBUCKETS).map(|_| Vec::new()).collect(), min: NBUCKETS, len: 0 }
    }
    fn clear(&mut self) {
        if self.len > 0 {
            for b in &mut self.buckets[self.min.min(NBUCKETS - 1)..] {
                b.clear();
            }
        }
        self.min = NBUCKETS;
        self.len = 0;
    }
    #[inline]
    fn push(&mut self, prio: u32, idx: u32) {
        let p = (prio as usize).min(NBUCKETS - 1);
        self.buckets[p].push(idx);
        self.min = self.min.min(p);
        self.len += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<u32> {
        while self.min < NBUCKETS {
            if let Some(i) = self.buckets[self.min].pop() {
                self.len -= 1;
                return Some(i);
            }
            self.min += 1;
        }
        None
    }
}

/// The heuristic's features of a position: cards not home, cards lying above a lower card of their
/// column, occupied free cells, empty columns, cards above the next card of each foundation, breaks in
/// the columns' runs, spread between the highest and lowest foundation, the lowest foundation.
#[inline]
pub fn features(p: &Position) -> [i32; NFEATURES] {
    let mut blockers = 0i32;
    let mut empty = 0i32;
    let mut breaks = 0i32;
    let mut depth = 0i32;
    let f = p.foundations();
    let mut buf = [0u8; 52];
    for col in 0..NCOLS {
        let mut c = p.top(col);
        if c == NONE {
            empty += 1;
            continue;
        }
        let mut n = 0;
        let mut above = 0i32;
        while c != NONE {
            buf[n] = rank(c);
            n += 1;
            if f[suit(c) as usize] == rank(c) {
                depth += above;
            }
            above += 1;
            let u = p.below(c);
            if u != NONE && !crate::card::fits_on(c, u) {
                breaks += 1;
            }
            c = u;
        }
        let mut m = 255u8;
        for &r in buf[..n].iter().rev() {
            if r > m {
                blockers += 1;
            } else {
                m = r;
            }
        }
    }
    let mut used = 0i32;
    for slot in 0..p.ncells() {
        if p.cell(slot) != NONE {
            used += 1;
        }
    }
    let out = 52 - p.home() as i32;
    let hi = *f.iter().max().unwrap() as i32;
    let lo = *f.iter().min().unwrap() as i32;
    [out, blockers, used, empty, depth, breaks, hi - lo, lo]
}

/// The heuristic score of a position (lower is closer to won).
#[inline]
pub fn score(p: &Position, w: &Weights) -> u32 {
    let f = features(p);
    let mut s = 256i32;
    for i in 0..NFEATURES {
        s += w.0[i] * f[i];
    }
    s.max(0) as u32
}

/// A reusable search engine: keeps its tables between searches so that a block of deals costs one
/// allocation, not one per deal.
pub struct Solver {
    store: Store,
    queue: Buckets,
    stack: Vec<u32>,
    moves: Vec<Move>,
    pub weights: Weights,
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
            queue: Buckets::new(),
            stack: Vec::new(),
            moves: Vec::with_capacity(256),
            weights: Weights::default(),
        }
    }

    /// Search `layout` with `ncells` free cells.
    pub fn search(&mut self, layout: &Layout, ncells: usize, strategy: Strategy, limits: Limits) -> Result<SearchResult> {
        let start = Instant::now();
        let (mut p0, origin) = Position::from_layout(layout, ncells)?;
        let concrete = p0;
        p0.settle(None);
        self.store.clear();
        self.queue.clear();
        self.stack.clear();
        let root = self.store.insert(p0.key(), u32::MAX).expect("empty store");
        let (goal, exhausted) = if p0.is_sorted() {
            (Some(root), None)
        } else {
            match strategy {
                Strategy::Solve => {
                    let w = self.weights;
                    self.queue.push(score(&p0, &w), root);
                    self.run(&origin, ncells as u8, limits, start, |s, prio, idx| s.queue.push(prio, idx), |s| s.queue.pop(), true)
                }
                Strategy::Prove => {
                    self.stack.push(root);
                    self.run(&origin, ncells as u8, limits, start, |s, _, idx| s.stack.push(idx), |s| s.stack.pop(), false)
                }
            }
        };
        let positions = self.store.len() as u64;
        let (outcome, solution) = match (goal, exhausted) {
            (Some(g), _) => {
                let line = self.solution(concrete, &origin, g)?;
                if let Err(e) = crate::replay::replay(layout, ncells, &line) {
                    return Err(Error::Internal(format!("a solution failed its replay at move {}: {}", e.index, e.reason)));
                }
                (Outcome::Solved, line)
            }
            (None, None) => (Outcome::Unsolvable, vec![]),
            (None, Some(_)) => (Outcome::Undecided, vec![]),
        };
        Ok(SearchResult {
            outcome,
            positions,
            solution,
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
            exhausted,
        })
    }

    /// The main loop shared by both strategies; returns the goal's index, or the budget that ran out.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run(
        &mut self,
        origin: &Origin,
        ncells: u8,
        limits: Limits,
        start: Instant,
        push: impl Fn(&mut Self, u32, u32),
        pop: impl Fn(&mut Self) -> Option<u32>,
        scored: bool,
    ) -> (Option<u32>, Option<Budget>) {
        let w = self.weights;
        let mut expanded = 0u64;
        let mut moves = std::mem::take(&mut self.moves);
        let result = 'search: loop {
            let Some(idx) = pop(self) else { break (None, None) };
            expanded += 1;
            if expanded & 1023 == 0 {
                if let Some(ms) = limits.max_millis {
                    if start.elapsed().as_millis() as u64 >= ms {
                        break (None, Some(Budget::Time));
                    }
                }
            }
            let key = self.store.get(idx).key();
            let p = Position::from_key(&key, origin, ncells);
            p.moves(&mut moves);
            for &m in &moves {
                let mut q = p;
                q.apply(m, origin);
                q.settle(None);
                let Some(child) = self.store.insert(q.key(), idx) else { continue };
                if q.is_sorted() {
                    break 'search (Some(child), None);
                }
                if self.store.len() as u64 >= limits.max_positions {
                    break 'search (None, Some(Budget::Positions));
                }
                let prio = if scored { score(&q, &w) } else { 0 };
                push(self, prio, child);
            }
        };
        self.moves = moves;
        result
    }

    /// Replay the stored line to `goal` from the concrete start, recording real columns, free-cell slots
    /// and automatic moves, then finish the won position by sending the lowest card home.
    fn solution(&mut self, start: Position, origin: &Origin, goal: u32) -> Result<Vec<SolutionMove>> {
        let mut chain: Vec<Key> = Vec::new();
        let mut i = goal;
        while i != u32::MAX {
            let e = self.store.get(i);
            chain.push(e.key());
            i = e.parent;
        }
        chain.reverse();
        let mut out = Vec::new();
        let mut log = Vec::new();
        let mut cur = start;
        cur.settle(Some(&mut log));
        out.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        if cur.key() != &chain[0] {
            return Err(Error::Internal("the settled start is not the stored root".into()));
        }
        let mut moves = Vec::new();
        for target in &chain[1..] {
            cur.moves(&mut moves);
            let found = moves.iter().copied().find(|&m| {
                let mut q = cur;
                q.apply(m, origin);
                q.settle(None);
                q.key() == target
            });
            let Some(m) = found else {
                return Err(Error::Internal("no move reproduces a stored step of the solution".into()));
            };
            cur.apply(m, origin);
            out.push(SolutionMove { mv: m, auto: false });
            cur.settle(Some(&mut log));
            out.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        }
        while !cur.is_won() {
            let Some(m) = cur.lowest_home_move() else {
                return Err(Error::Internal("a sorted position has no card to send home".into()));
            };
            cur.apply(m, origin);
            out.push(SolutionMove { mv: m, auto: false });
            cur.settle(Some(&mut log));
            out.extend(log.drain(..).map(|mv| SolutionMove { mv, auto: true }));
        }
        Ok(out)
    }
}
