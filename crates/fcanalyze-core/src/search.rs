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

use std::time::Instant;

use crate::card::NONE;
use crate::error::Result;
use crate::line::{VIA_CLEAR, VIA_DIG, VIA_ROOT, VIA_SHIFT};
use crate::outcome::{Budget, Outcome, SearchResult, SolutionMove};
use crate::position::{Key, Layout, Move, Origin, Position, NCOLS};
use crate::queue::BucketQueue;
use crate::store::Store;

use crate::heuristic::{features_with, peek_features_from, PeekDepths, WeighPair};

// compat: removed at integration
pub use crate::heuristic::{features, peek_features, score, weigh, Weights, NFEATURES};
// compat: removed at integration
pub(crate) use crate::heuristic::scored_children;
// compat: removed at integration
pub use crate::limits::Limits;

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

/// One depth-first dive of the solver's first phase: children are tried best score first, and the dive
/// gives up after visiting `budget` positions.
#[derive(Clone, Copy, Debug)]
pub struct Dive {
    pub weights: Weights,
    /// Most positions the dive visits before giving up.
    pub budget: u32,
    /// Positions it visits in each turn.
    pub quantum: u32,
    /// Times it starts again from the root (with another weighting) on giving up.
    pub restarts: u32,
    /// The budget of each new start, in percent of the previous one.
    pub growth: u32,
    /// Random noise added to the dive's child scores, in sixteenths of a score unit (0 for none):
    /// every start of the dive follows another line where the heuristic hesitates.
    pub noise: u32,
    /// Whether the dive also tries composite moves that dig out the next card of a suit and send it
    /// home (see [`Position::dig`]).
    pub digs: bool,
    /// Whether the dive also tries composite moves that empty a column (see [`Position::clear`]).
    pub clears: bool,
    /// Whether the dive also tries composite moves that bring a buried run onto a parent (see
    /// [`Position::shift`]).
    pub shifts: bool,
    /// Whether giving up goes on from a frame of the dive taken at random instead of the root.
    pub jump: bool,
}

impl Dive {
    /// A dive with the default noise, no composite moves, starting again from the root with the same
    /// budget when it gives up.
    pub const fn new(w: [i32; NFEATURES], budget: u32, quantum: u32, restarts: u32) -> Dive {
        Dive {
            weights: Weights(w),
            budget,
            quantum,
            restarts,
            growth: 100,
            noise: 32,
            digs: false,
            clears: false,
            shifts: false,
            jump: false,
        }
    }

    /// The default dives, tuned on a sample of deals 1–32,000 with 4 cells: most deals fall to the first
    /// (which also tries emptying whole columns) within a few hundred positions. The first two give up
    /// every 200 positions: the first starts again from the root with another weighting and new noise,
    /// the second goes on from one of its frames (so it never walks the same line twice). The third
    /// doubles its budget at each start, for the solutions that need long backtracking (they are
    /// common with fewer cells). The complete best-first search takes the rest, and a growing share of
    /// the work as the search grows (long searches are mostly proofs).
    pub const PORTFOLIO: [Dive; 3] = [
        Dive::new(
            [6, 1, 4, -4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            200,
            200,
            u32::MAX,
        )
        .with_clears(),
        Dive::new(
            [6, 0, 4, -4, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0],
            200,
            200,
            u32::MAX,
        )
        .with_jumps(),
        Dive::new([6, 1, 4, -4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0], 500, 50, 20).with_growth(200),
    ];

    /// This dive with the budget of each new start at `percent` of the previous one.
    pub const fn with_growth(mut self, percent: u32) -> Dive {
        self.growth = percent;
        self
    }

    /// This dive with composite moves that empty a column.
    pub const fn with_clears(mut self) -> Dive {
        self.clears = true;
        self
    }

    /// This dive going on from a random frame when it gives up (instead of the root).
    pub const fn with_jumps(mut self) -> Dive {
        self.jump = true;
        self
    }

    /// This dive with composite moves that dig out a card for the foundations.
    pub const fn with_digs(mut self) -> Dive {
        self.digs = true;
        self
    }
}

/// A child waiting in a dive's arena.
#[derive(Clone, Copy)]
struct Child {
    /// Its score for the best-first search.
    prio: u32,
    /// The move (or composite move) that reaches it, its key, and whether it is sorted (won).
    m: Move,
    sorted: bool,
    key: Key,
}

impl Child {
    /// How the child is reached from `parent`, told by cards (see [`Solver::via`]): asked only of a
    /// child the dive visits and the store did not hold yet, far fewer than the children generated.
    #[inline]
    fn via(&self, parent: &Position) -> u16 {
        match self.m.from {
            DIG => VIA_DIG | self.m.to as u16,
            CLEAR => VIA_CLEAR | self.m.to as u16,
            SHIFT => VIA_SHIFT | self.m.to as u16,
            _ => parent.describe(self.m),
        }
    }
}

impl Diver {
    /// Take weighting `w`, packed with the best-first search's `best_first` once here rather than for
    /// every position the dive visits.
    fn set_weights(&mut self, w: Weights, best_first: &Weights) {
        self.weights = w;
        self.pair = WeighPair::new(&w, best_first);
    }

    #[inline(always)]
    fn add(&mut self, m: Move, key: Key, f: &[i32; NFEATURES], w: &WeighPair, sorted: bool) {
        let (score, prio) = w.weigh(f);
        self.add_scored(m, key, score, prio, sorted);
    }

    /// [`Diver::add`] given the child's scores under the dive's weighting and the best-first one's.
    #[inline(always)]
    fn add_scored(&mut self, m: Move, key: Key, score: u32, prio: u32, sorted: bool) {
        let mut score = score * 16;
        if self.noise > 0 {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            score += (self.rng % self.noise as u64) as u32;
        }
        self.order
            .push((score as u64) << 32 | self.arena.len() as u64);
        self.arena.push(Child {
            prio,
            m,
            sorted,
            key,
        });
    }
}

/// The least entry of a frame's children still to try (`rest`, a range of a dive's order), swapped to the
/// front of `rest`; returns its index in the arena. Taking the least each time tries the children in
/// the order of a sort (best score first, ties in the order generated: the entries are distinct), but a
/// dive mostly tries one or two children of a frame before it goes deeper or gives up, so a sort of
/// all of them costs more than these scans.
#[inline(always)]
fn take_least(rest: &mut [u64]) -> u32 {
    let mut best = 0;
    for i in 1..rest.len() {
        if rest[i] < rest[best] {
            best = i;
        }
    }
    rest.swap(0, best);
    rest[0] as u32
}

/// A frame of a dive: a visited position and its children still to try (a range of the dive's order).
#[derive(Clone, Copy)]
struct Frame {
    pos: Position,
    idx: u32,
    begin: u32,
    next: u32,
    end: u32,
}

/// What a turn of the solver's portfolio ended in.
enum Step {
    Won(u32),
    Budget(Budget),
    Go,
    /// Every reachable position was visited.
    Exhausted,
}

/// The `from` of a composite move in a dive's list of children: `to` is the suit whose next card is dug
/// out and sent home (see [`Position::dig`]).
const DIG: u8 = 0xFE;
/// The `from` of a composite move that empties the column whose bottom card is `to` (see
/// [`Position::clear`]).
const CLEAR: u8 = 0xFD;
/// The `from` of a composite move that brings the run starting with card `to` onto a parent (see
/// [`Position::shift`]).
const SHIFT: u8 = 0xFC;

/// Most dives running side by side (one mark bit each; the last bit marks expanded positions).
const MAX_DIVERS: usize = 7;
const EXPANDED: u8 = 1 << 7;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum DiverState {
    #[default]
    Fresh,
    Diving,
    Done,
}

/// A dive in progress.
#[derive(Default)]
struct Diver {
    weights: Weights,
    /// The dive's weighting and the best-first search's, packed (see [`Diver::set_weights`]).
    pair: WeighPair,
    frames: Vec<Frame>,
    /// Children still to try, each frame's in the order they were generated.
    arena: Vec<Child>,
    /// The children, per child its score for this dive (with noise) in the high half and its index in
    /// `arena` in the low half: each frame's tried ones in the order tried, then the rest (see
    /// [`take_least`]).
    order: Vec<u64>,
    visited: u32,
    budget: u32,
    quantum: u32,
    restarts: u32,
    round: u32,
    rng: u64,
    noise: u32,
    growth: u32,
    digs: bool,
    clears: bool,
    shifts: bool,
    jump: bool,
    /// The positions this dive marked since it last started from the root.
    touched: Vec<u32>,
    /// Whether the dive has given up no position half-way since it last started from the root.
    complete: bool,
    state: DiverState,
}

/// The weightings dives take in turn when they start again.
const RESTART_WEIGHTS: [Weights; 10] = [
    Weights([6, 1, 4, -4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    Weights([6, 0, 4, -4, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0]),
    Weights([5, 1, 3, -4, 1, 0, 0, 0, 0, 0, 0, -1, 0, 0]),
    Weights([6, 1, 2, -4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
    Weights([6, 2, 4, -4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
    Weights([6, 1, 4, -4, 1, 0, 0, 0, 0, 0, 0, -1, 0, 0]),
    Weights([6, 1, 4, -4, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0]),
    Weights([3, 1, 2, -2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    Weights([6, 1, 6, -4, 1, 1, 0, 0, 1, -1, 1, 0, 0, 0]),
    Weights([5, 1, 4, -4, 1, 2, 0, 0, 1, 2, 0, 0, 0, 0]),
];

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
            let dv = &mut self.divers[t];
            dv.frames.clear();
            dv.arena.clear();
            dv.order.clear();
            dv.set_weights(d.weights, &w);
            dv.budget = d.budget;
            dv.quantum = d.quantum;
            dv.visited = 0;
            dv.restarts = d.restarts;
            dv.round = 0;
            dv.rng = 0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1);
            dv.noise = d.noise;
            dv.growth = d.growth;
            dv.digs = d.digs;
            dv.clears = d.clears;
            dv.shifts = d.shifts;
            dv.jump = d.jump;
            dv.touched.clear();
            dv.complete = true;
            dv.state = DiverState::Fresh;
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

    /// Run diver `t` for its quantum of visits: depth first from the root, children best score first,
    /// giving up after its budget of visits.
    fn dive(
        &mut self,
        t: usize,
        p0: &Position,
        root: u32,
        origin: &Origin,
        limits: Limits,
    ) -> Step {
        let bit = 1u8 << t;
        let mut dv = std::mem::take(&mut self.divers[t]);
        let mut moves = std::mem::take(&mut self.moves);
        if dv.state == DiverState::Fresh {
            self.mark[root as usize] |= bit;
            dv.touched.push(root);
            dv.frames.push(Frame {
                pos: *p0,
                idx: root,
                begin: 0,
                next: 0,
                end: 0,
            });
            self.expand_frame(&mut dv, origin, &mut moves);
            self.work.visits += 1;
            dv.state = DiverState::Diving;
        }
        let mut left = dv.quantum;
        let step = loop {
            if left == 0 {
                break Step::Go;
            }
            let Some(f) = dv.frames.last_mut() else {
                dv.state = DiverState::Done;
                if !dv.complete {
                    // It gave up some positions half-way: no proof.
                    break Step::Go;
                }
                // The dive went through every position reachable from the root (it tries every child
                // it has not visited) and none was won: a complete proof, with all of them stored.
                break Step::Exhausted;
            };
            if f.next >= f.end {
                let f = dv.frames.pop().expect("a frame");
                dv.arena.truncate(f.begin as usize);
                dv.order.truncate(f.begin as usize);
                continue;
            }
            let c = dv.arena[take_least(&mut dv.order[f.next as usize..f.end as usize]) as usize];
            f.next += 1;
            let parent = f.idx;
            let pos = &f.pos;
            let child =
                match self.admit_key(&c.key, parent, || c.prio, c.sorted, || c.via(pos), limits) {
                    Ok(child) => child,
                    Err((_, Some(b))) => break Step::Budget(b),
                    Err((child, None)) => {
                        if self.mark[child as usize] & bit != 0 {
                            continue;
                        }
                        child
                    }
                };
            self.mark[child as usize] |= bit;
            dv.touched.push(child);
            if c.sorted {
                break Step::Won(child);
            }
            left -= 1;
            dv.visited += 1;
            if dv.visited >= dv.budget {
                if dv.restarts == 0 {
                    dv.state = DiverState::Done;
                    break Step::Go;
                }
                dv.restarts -= 1;
                if dv.jump && dv.frames.len() > 1 {
                    // Give up the lines below a frame taken at random and go on from there with the
                    // next child of that frame (the positions given up stay visited).
                    dv.rng ^= dv.rng << 13;
                    dv.rng ^= dv.rng >> 7;
                    dv.rng ^= dv.rng << 17;
                    // The lesser of two uniform draws: shallow frames are likelier.
                    let len = dv.frames.len() as u64 - 1;
                    let keep = 1 + (dv.rng % len).min(dv.rng.rotate_left(20) % len) as usize;
                    let begin = dv.frames[keep].begin as usize;
                    dv.frames.truncate(keep);
                    dv.arena.truncate(begin);
                    dv.order.truncate(begin);
                    dv.complete = false;
                    dv.visited = 0;
                    dv.budget =
                        (dv.budget as u64 * dv.growth as u64 / 100).min(u32::MAX as u64) as u32;
                    continue;
                }
                // Start again from the root with the next weighting and twice the budget.
                dv.round += 1;
                dv.budget = (dv.budget as u64 * dv.growth as u64 / 100).min(u32::MAX as u64) as u32;
                dv.set_weights(
                    RESTART_WEIGHTS[(t + dv.round as usize * MAX_DIVERS) % RESTART_WEIGHTS.len()],
                    &self.weights,
                );
                dv.visited = 0;
                dv.frames.clear();
                dv.arena.clear();
                dv.order.clear();
                dv.state = DiverState::Fresh;
                dv.complete = true;
                for &i in &dv.touched {
                    self.mark[i as usize] &= !bit;
                }
                dv.touched.clear();
                break Step::Go;
            }
            // The child's frame starts as a copy of its parent's, built in place.
            dv.frames.extend_from_within(dv.frames.len() - 1..);
            let f = dv.frames.last_mut().expect("a frame");
            f.idx = child;
            let q = &mut f.pos;
            let m = c.m;
            if m.from == DIG {
                q.dig(m.to, origin, None);
            } else if m.from == CLEAR {
                q.clear(m.to, origin, None);
            } else if m.from == SHIFT {
                q.shift(m.to, origin, None);
            } else {
                // The frame's position, a copy of its settled parent's.
                q.apply_settled(m, origin);
            }
            debug_assert_eq!(q.key(), &c.key);
            self.expand_frame(&mut dv, origin, &mut moves);
            self.work.visits += 1;
        };
        if dv.state == DiverState::Done {
            dv.frames.clear();
            dv.arena.clear();
            dv.order.clear();
        }
        self.divers[t] = dv;
        self.moves = moves;
        step
    }

    /// Fill in the children of the dive's last frame (whose position and index are set), each with its
    /// score (with the dive's noise) and its key so that children visited already are skipped without
    /// building them. They are tried best score first (see [`take_least`]).
    #[inline]
    fn expand_frame(&self, dv: &mut Diver, origin: &Origin, moves: &mut Vec<Move>) {
        // The frames are set aside while the children are added, so that the position is read in place.
        let mut frames = std::mem::take(&mut dv.frames);
        let frame = frames.last_mut().expect("a frame");
        let begin = dv.arena.len() as u32;
        self.add_children(dv, &frame.pos, origin, moves);
        frame.begin = begin;
        frame.next = begin;
        frame.end = dv.arena.len() as u32;
        dv.frames = frames;
    }

    /// Add the children of position `p` to the dive's arena and order (unsorted). Kept out of line: the
    /// loop compiles to fewer instructions as a function of its own (`p` then provably unaliased).
    #[inline(never)]
    fn add_children(&self, dv: &mut Diver, p: &Position, origin: &Origin, moves: &mut Vec<Move>) {
        let base = p.moves_with_base(moves);
        let depth2 = dv.weights.0[12] != 0 || self.weights.0[12] != 0;
        let depths = PeekDepths::new(p, depth2);
        // The dive's weighting and the best-first search's.
        let w = dv.pair;
        // The part of the scores that the peeked children share, worked out once.
        let shared = w.peek_shared(p);
        for &m in moves.iter() {
            match p.peek(m, &base, origin) {
                Some(pk) => {
                    let (score, prio) = w.weigh_from(shared, &peek_features_from(p, &pk, &depths));
                    dv.add_scored(m, pk.key, score, prio, pk.stats & 0xFF == 0);
                }
                None => {
                    let mut q = *p;
                    q.apply(m, origin);
                    q.settle(None);
                    dv.add(m, *q.key(), &features_with(&q, depth2), &w, q.is_sorted());
                }
            }
        }
        if dv.digs {
            for suit in 0..4u8 {
                if !p.may_dig(suit, &base) {
                    continue;
                }
                let mut q = *p;
                if q.dig(suit, origin, None) {
                    let m = Move {
                        from: DIG,
                        to: suit,
                        count: 0,
                    };
                    dv.add(m, *q.key(), &features_with(&q, depth2), &w, q.is_sorted());
                }
            }
        }
        if dv.shifts {
            for col in 0..NCOLS {
                let p_top = p.top(col);
                if p_top == NONE || crate::card::rank(p_top) == 0 {
                    continue;
                }
                let r = crate::card::rank(p_top) - 1;
                let (lo, hi) = crate::card::opposite_suits(crate::card::suit(p_top));
                for x in [crate::card::make(r, lo), crate::card::make(r, hi)] {
                    if !p.may_shift(x, &base) {
                        continue;
                    }
                    let mut q = *p;
                    if q.shift(x, origin, None) {
                        let m = Move {
                            from: SHIFT,
                            to: x,
                            count: 0,
                        };
                        dv.add(m, *q.key(), &features_with(&q, depth2), &w, q.is_sorted());
                    }
                }
            }
        }
        if dv.clears {
            for col in 0..NCOLS {
                if !p.may_clear(col, &base) {
                    continue;
                }
                let mut b = p.top(col);
                while p.below(b) != NONE {
                    b = p.below(b);
                }
                let mut q = *p;
                if q.clear(b, origin, None) {
                    let m = Move {
                        from: CLEAR,
                        to: b,
                        count: 0,
                    };
                    dv.add(m, *q.key(), &features_with(&q, depth2), &w, q.is_sorted());
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Both scores of a [`WeighPair`] equal [`weigh`] with each weighting, negative sums included.
    #[test]
    fn weigh_pair_matches_weigh() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n) as i32
        };
        let weightings: Vec<Weights> = RESTART_WEIGHTS
            .iter()
            .copied()
            .chain([Weights::BEST_FIRST, Weights([-9_000; NFEATURES])])
            .collect();
        for _ in 0..10_000 {
            let f: [i32; NFEATURES] = std::array::from_fn(|_| next(60));
            let a = &weightings[next(weightings.len() as u64) as usize];
            let b = &weightings[next(weightings.len() as u64) as usize];
            assert_eq!(WeighPair::new(a, b).weigh(&f), (weigh(&f, a), weigh(&f, b)));
        }
    }
}
