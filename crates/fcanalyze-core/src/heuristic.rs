//! The heuristic of the solver and the beams: the features of a position ([`features`]), read from the
//! column statistics a position keeps and from the depth of the next cards of each suit, and their
//! weighted score ([`weigh`], lower is closer to won). A child seen by [`Position::peek`] gets the
//! features it will have once built ([`peek_features`]) without being built.

use crate::card::NONE;
use crate::key::Key;
use crate::layout::NCOLS;
use crate::position::{DepthPlace, Move, Origin, Peek, PeekBase, Position};

/// Number of heuristic features.
pub const NFEATURES: usize = 14;

/// Weights of the best-first heuristic's features (lower scores are expanded first), see [`features`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Weights(pub [i32; NFEATURES]);

impl Weights {
    /// The weights of the complete best-first phase.
    pub const BEST_FIRST: Weights = Weights([3, 1, 3, -3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

/// The heuristic's features of a position: cards not home, cards lying above a lower card of their
/// column, occupied free cells, empty columns, cards above the next card of each foundation, breaks in
/// the columns' runs, spread between the highest and lowest foundation, the lowest foundation,
/// cards above a lower card of their own suit, the least depth of a next foundation card, cards above
/// the ordered run at the bottom of their column, the supermove capacity, cards above the next two
/// cards of each foundation, kings not at the bottom of a column.
#[inline]
pub fn features(p: &Position) -> [i32; NFEATURES] {
    features_with(p, true)
}

/// [`features`], the depth of the second next card of each suit left at 0 unless `depth2`.
#[inline(always)]
pub(crate) fn features_with(p: &Position, depth2_wanted: bool) -> [i32; NFEATURES] {
    debug_assert!(p.tracks_stats());
    let mut empty = 0;
    for col in 0..NCOLS {
        empty += (p.top(col) == NONE) as u32;
    }
    let mut free = 0;
    for slot in 0..p.ncells() {
        free += (p.cell(slot) == NONE) as u32;
    }
    let d = depths(p, depth2_wanted, |c| p.cover(c));
    assemble(p, p.stats_sum(), free, empty, d)
}

/// The features of the child of `p` seen by `pk` (a [`Position::peek`] of `p`): equal to [`features`] of
/// the child once built.
#[inline]
pub fn peek_features(p: &Position, pk: &Peek, depth2_wanted: bool) -> [i32; NFEATURES] {
    peek_features_from(p, pk, &PeekDepths::new(p, depth2_wanted))
}

/// [`peek_features`] given the [`PeekDepths`] of `p`.
#[inline(always)]
pub(crate) fn peek_features_from(p: &Position, pk: &Peek, base: &PeekDepths) -> [i32; NFEATURES] {
    let d = if pk.may_cover(base.cards, base.cols) {
        base.child_depths(pk)
    } else {
        base.depths
    };
    assemble(p, pk.stats, pk.free, pk.empty, d)
}

/// The child of `p` by move `m`: its key, its features and whether it is sorted (won included), peeked
/// where the move allows it (`base` is `p`'s [`Position::peek_base`], `depths` its [`PeekDepths`] with
/// or without the second depth, as `depth2`), else built and settled.
#[inline(always)]
fn child(
    p: &Position,
    m: Move,
    base: &PeekBase,
    origin: &Origin,
    depths: &PeekDepths,
    depth2: bool,
) -> (Key, [i32; NFEATURES], bool) {
    match p.peek(m, base, origin) {
        Some(pk) => (
            pk.key,
            peek_features_from(p, &pk, depths),
            pk.stats & 0xFF == 0,
        ),
        None => {
            let mut q = *p;
            q.apply(m, origin);
            q.settle(None);
            (*q.key(), features_with(&q, depth2), q.is_sorted())
        }
    }
}

/// The children of `p` (which keeps its statistics), each with its key, its score under `w` and
/// whether it is sorted (won included), into `out`; `moves` is scratch space.
pub(crate) fn scored_children(
    p: &Position,
    origin: &Origin,
    w: &Weights,
    moves: &mut Vec<Move>,
    out: &mut Vec<(Key, u32, bool)>,
) {
    out.clear();
    let base = p.moves_with_base(moves);
    let depth2 = w.0[12] != 0;
    let depths = PeekDepths::new(p, depth2);
    for &m in moves.iter() {
        let (key, f, sorted) = child(p, m, &base, origin, &depths, depth2);
        out.push((key, weigh(&f, w), sorted));
    }
}

/// The depth features of a position, which its children peeked by most moves share: those that take
/// no card from or put no card on a column holding one of the cards the depths count (and move none of
/// them from a free cell), see [`Peek::may_cover`]. For the other children the places of those cards
/// are kept, so that each child's depths follow from the move alone ([`Peek::depth`]).
pub(crate) struct PeekDepths {
    /// The cards counted, as a bit set, and the columns holding them, as a bit set.
    cards: u64,
    cols: u32,
    /// The depth, least depth and second depth of the position (see [`depths`]).
    depths: (i32, i32, i32),
    /// The places of the next card of each suit not all home (the first `nnext`), and of the second
    /// next card of each suit when the second depth is counted (the first `nsecond`).
    next: [DepthPlace; 4],
    nnext: usize,
    second: [DepthPlace; 4],
    nsecond: usize,
}

impl PeekDepths {
    /// The depth features of `p` (which must keep its statistics), the second depth only if wanted.
    #[inline(always)]
    pub(crate) fn new(p: &Position, depth2_wanted: bool) -> PeekDepths {
        let f = p.foundations();
        let mut d = PeekDepths {
            cards: 0,
            cols: 0,
            depths: (0, 0, 0),
            next: [DepthPlace::default(); 4],
            nnext: 0,
            second: [DepthPlace::default(); 4],
            nsecond: 0,
        };
        let (mut total, mut least, mut second) = (0i32, 99i32, 0i32);
        for s in 0..4u8 {
            let r = f[s as usize];
            if r < 13 {
                let c = crate::card::make(r, s);
                let place = p.depth_place(c);
                d.cards |= 1 << c;
                d.cols |= ((place.col != DepthPlace::CELL) as u32) << (place.col & 31);
                total += place.depth;
                least = least.min(place.depth);
                d.next[d.nnext] = place;
                d.nnext += 1;
                if depth2_wanted && r < 12 {
                    let c = crate::card::make(r + 1, s);
                    let place = p.depth_place(c);
                    d.cards |= 1 << c;
                    d.cols |= ((place.col != DepthPlace::CELL) as u32) << (place.col & 31);
                    second += place.depth;
                    d.second[d.nsecond] = place;
                    d.nsecond += 1;
                }
            }
        }
        if least == 99 {
            least = 0;
        }
        d.depths = (total, least, second);
        d
    }

    /// The depths of the child seen by `pk` (equal to [`depths`] of the child).
    #[inline(always)]
    fn child_depths(&self, pk: &Peek) -> (i32, i32, i32) {
        self.sum(|place| pk.depth(place))
    }

    /// The depth, least depth and second depth given the depth of each card counted.
    #[inline(always)]
    fn sum(&self, depth: impl Fn(DepthPlace) -> i32) -> (i32, i32, i32) {
        let (mut total, mut least, mut second) = (0i32, 99i32, 0i32);
        for &place in &self.next[..self.nnext] {
            let d = depth(place);
            total += d;
            least = least.min(d);
        }
        for &place in &self.second[..self.nsecond] {
            second += depth(place);
        }
        if least == 99 {
            least = 0;
        }
        (total, least, second)
    }
}

/// The depth features of a position given the [`Position::cover`] of its cards: cards above the next
/// card of each foundation, the least of those depths, and cards above the second next card of each
/// foundation (0 unless `depth2_wanted`).
#[inline(always)]
fn depths(
    p: &Position,
    depth2_wanted: bool,
    cover: impl Fn(crate::card::Card) -> Option<u32>,
) -> (i32, i32, i32) {
    let f = p.foundations();
    let (mut depth, mut depth2, mut min_depth) = (0i32, 0i32, 99i32);
    for s in 0..4u8 {
        let r = f[s as usize];
        if r < 13 {
            let d = cover(crate::card::make(r, s))
                .unwrap_or(0)
                .saturating_sub(1) as i32;
            depth += d;
            min_depth = min_depth.min(d);
            if depth2_wanted && r < 12 {
                depth2 += cover(crate::card::make(r + 1, s))
                    .unwrap_or(0)
                    .saturating_sub(1) as i32;
            }
        }
    }
    if min_depth == 99 {
        min_depth = 0;
    }
    (depth, min_depth, depth2)
}

/// The features of a position given its [`Position::stats_sum`], empty free cells and columns, and
/// [`depths`].
#[inline(always)]
fn assemble(
    p: &Position,
    sum: u64,
    free: u32,
    empty: u32,
    (depth, min_depth, depth2): (i32, i32, i32),
) -> [i32; NFEATURES] {
    let blockers = (sum & 0xFF) as i32;
    let same_blockers = ((sum >> 8) & 0xFF) as i32;
    let breaks = ((sum >> 16) & 0xFF) as i32;
    let misplaced = ((sum >> 24) & 0xFF) as i32;
    let kings = ((sum >> 32) & 0xFF) as i32;
    let empty = empty as i32;
    let f = p.foundations();
    let free = free as i32;
    let used = p.ncells() as i32 - free;
    let out = 52 - p.home() as i32;
    let hi = f[0].max(f[1]).max(f[2]).max(f[3]) as i32;
    let lo = f[0].min(f[1]).min(f[2]).min(f[3]) as i32;
    let cap = ((free + 1) << empty).min(32);
    [
        out,
        blockers,
        used,
        empty,
        depth,
        breaks,
        hi - lo,
        lo,
        same_blockers,
        min_depth,
        misplaced,
        cap,
        depth2,
        kings,
    ]
}

/// The heuristic score of a position (lower is closer to won); the position must keep its statistics.
#[inline]
pub fn score(p: &Position, w: &Weights) -> u32 {
    weigh(&features_with(p, w.0[12] != 0), w)
}

/// The score of a position with features `f`.
#[inline(always)]
pub fn weigh(f: &[i32; NFEATURES], w: &Weights) -> u32 {
    let mut s = 512i32;
    for (wi, fi) in w.0.iter().zip(f) {
        s += wi * fi;
    }
    s.max(0) as u32
}

/// The features that a child seen by [`Position::peek`] has as its parent, the foundations being the
/// same (see [`assemble`]): cards not home, spread between the highest and lowest foundation, the lowest
/// foundation.
const PEEK_KEEPS: [usize; 3] = [0, 6, 7];

/// Two weightings packed for one pass over the features: per feature the first weight plus the second
/// times 2^32, so that the sum of the products holds the first score's sum in its low half and the
/// second's in its high half.
#[derive(Clone, Copy, Default)]
pub(crate) struct WeighPair([i64; NFEATURES]);

impl WeighPair {
    pub(crate) fn new(a: &Weights, b: &Weights) -> WeighPair {
        WeighPair(std::array::from_fn(|i| {
            a.0[i] as i64 + ((b.0[i] as i64) << 32)
        }))
    }

    /// [`weigh`] of `f` with each weighting: the same scores while the first sum fits an i32 (features
    /// add up to less than 2^10, so any weights below 2^20 in magnitude).
    #[inline(always)]
    pub(crate) fn weigh(&self, f: &[i32; NFEATURES]) -> (u32, u32) {
        let mut s = 512i64 + (512i64 << 32);
        for i in PEEK_KEEPS {
            s = s.wrapping_add(self.0[i].wrapping_mul(f[i] as i64));
        }
        self.weigh_from(s, f)
    }

    /// The part of both sums that the children of `p` seen by [`Position::peek`] share: the constant
    /// and the features in [`PEEK_KEEPS`]. The sums wrap, so any order of the terms gives the same.
    #[inline(always)]
    pub(crate) fn peek_shared(&self, p: &Position) -> i64 {
        let f = assemble(p, 0, 0, 0, (0, 0, 0));
        let mut s = 512i64 + (512i64 << 32);
        for i in PEEK_KEEPS {
            s = s.wrapping_add(self.0[i].wrapping_mul(f[i] as i64));
        }
        s
    }

    /// [`WeighPair::weigh`] of `f` given the part `s` of the sums from the features in [`PEEK_KEEPS`].
    #[inline(always)]
    pub(crate) fn weigh_from(&self, mut s: i64, f: &[i32; NFEATURES]) -> (u32, u32) {
        for (i, (wi, &fi)) in self.0.iter().zip(f).enumerate() {
            if !PEEK_KEEPS.contains(&i) {
                s = s.wrapping_add(wi.wrapping_mul(fi as i64));
            }
        }
        let a = s as i32;
        let b = (s.wrapping_sub(a as i64) >> 32) as i32;
        (a.max(0) as u32, b.max(0) as u32)
    }
}
