//! The dives of [`Strategy::Solve`](super::Strategy::Solve): depth-first searches that try children
//! best score first (with noise), give up after a budget of visits and start again from the root or
//! go on from one of their frames. They may also take composite moves (digs, clears, shifts), one
//! search edge for a short line of moves.

use crate::card::NONE;
use crate::heuristic::{
    features_with, peek_features_from, PeekDepths, WeighPair, Weights, NFEATURES,
};
use crate::key::Key;
use crate::layout::NCOLS;
use crate::limits::Limits;
use crate::line::{VIA_CLEAR, VIA_DIG, VIA_SHIFT};
use crate::position::{Move, Origin, Position};

use super::{Solver, Step};

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
    /// Make ready for a new search as dive `t` of the portfolio, configured by `d`; `best_first` is the
    /// best-first search's weighting.
    pub(super) fn start(&mut self, d: &Dive, t: usize, best_first: &Weights) {
        let dv = self;
        dv.frames.clear();
        dv.arena.clear();
        dv.order.clear();
        dv.set_weights(d.weights, best_first);
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

    /// Take weighting `w`, packed with the best-first search's `best_first` once here rather than for
    /// every position the dive visits.
    fn set_weights(&mut self, w: Weights, best_first: &Weights) {
        self.weights = w;
        self.pair = WeighPair::new(&w, best_first);
    }

    /// The dive ran out of its budget of visits (it is dive `t` of the portfolio, `bit` its mark in
    /// `mark`, `best_first` the best-first search's weighting): give up, go on from a frame taken at
    /// random (true: the turn goes on), or start again from the root with the next weighting and the
    /// budget grown (false: the turn ends, as it does when no restart is left).
    fn give_up(&mut self, t: usize, best_first: &Weights, mark: &mut [u8], bit: u8) -> bool {
        let dv = self;
        if dv.restarts == 0 {
            dv.state = DiverState::Done;
            return false;
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
            dv.budget = (dv.budget as u64 * dv.growth as u64 / 100).min(u32::MAX as u64) as u32;
            return true;
        }
        // Start again from the root with the next weighting and twice the budget.
        dv.round += 1;
        dv.budget = (dv.budget as u64 * dv.growth as u64 / 100).min(u32::MAX as u64) as u32;
        dv.set_weights(
            RESTART_WEIGHTS[(t + dv.round as usize * MAX_DIVERS) % RESTART_WEIGHTS.len()],
            best_first,
        );
        dv.visited = 0;
        dv.frames.clear();
        dv.arena.clear();
        dv.order.clear();
        dv.state = DiverState::Fresh;
        dv.complete = true;
        for &i in &dv.touched {
            mark[i as usize] &= !bit;
        }
        dv.touched.clear();
        false
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
            // A mask where the noise is a power of two (the portfolio's 32): the same draw as the
            // remainder, without a 64-bit division for every child (7% of `add_children`'s samples).
            let n = self.noise as u64;
            score += if n.is_power_of_two() {
                (self.rng & (n - 1)) as u32
            } else {
                (self.rng % n) as u32
            };
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
    // The least so far is kept in a register: no load of it and no bounds check per entry.
    let (mut best, mut least) = (0, rest[0]);
    for (i, &v) in rest.iter().enumerate().skip(1) {
        if v < least {
            (best, least) = (i, v);
        }
    }
    rest.swap(0, best);
    least as u32
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
pub(super) const MAX_DIVERS: usize = 7;
pub(super) const EXPANDED: u8 = 1 << 7;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum DiverState {
    #[default]
    Fresh,
    Diving,
    Done,
}

/// A dive in progress.
#[derive(Default)]
pub(super) struct Diver {
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
    pub(super) quantum: u32,
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
    pub(super) state: DiverState,
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

impl Solver {
    /// Run diver `t` for its quantum of visits: depth first from the root, children best score first,
    /// giving up after its budget of visits.
    pub(super) fn dive(
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
                if dv.give_up(t, &self.weights, &mut self.mark, bit) {
                    continue;
                }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heuristic::weigh;

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
