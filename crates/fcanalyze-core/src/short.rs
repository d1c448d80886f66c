//! A search for SHORT winning lines, counted as players count them: a supermove is one move and the
//! automatic moves of the position's rules ([`Autoplay`]) are free ([`SearchResult::player_moves`]).
//!
//! One search runs in phases that share a budget and the best line so far:
//! 1. Beam passes over layers of equal move count (width 1000, then 2000, 4000): each layer keeps the
//!    positions with the lowest estimate of the moves left, a weighted sum of [`features`]. Their
//!    core is the number of *blocked runs*: a card that lies above a lower card of its own suit, or
//!    (under the safe rules of SPEC §2 only) above an opposite-colour card at least two ranks lower,
//!    can never go home automatically before that card, so it needs a move by hand; a run holding
//!    such cards needs at least one move, and no move takes more than one such run away. So `moves so
//!    far + blocked runs` never exceeds the length of a line through a position: later passes drop
//!    every position that cannot beat the best line found. Under [`Autoplay::Max`] a card goes home as
//!    soon as its own suit's predecessor has, whatever lies below it, so only same-suit blocks count;
//!    the beam weighs the features with weights of their own for those rules ([`Config::max_fw`]).
//! 2. Optionally (off by default), a weighted A*; with `exact` and the admissible estimate it finds
//!    shortest lines and proves lower bounds (used by the tests, too slow for a server: seconds to
//!    minutes per deal).
//! 3. When no line was found (rare with 4 cells; often with fewer), the complete solver of
//!    [`crate::solver`]: its line is shortened by [`ShortSolver::shortcuts`], and its proof of
//!    unsolvability is the only way this search answers `Unsolvable`.
//!
//! A line ends at a sorted position (see [`Position::is_sorted`]), finished by sending the lowest card
//! home each time, counted in its length; under [`Autoplay::Max`] a settled sorted position is won
//! already (its lowest card is exposed and fits, so it went home, and so on), so the finish is free.
//! Every line is rebuilt as concrete moves from the given
//! position, automatic moves included and marked, and checked by [`crate::replay`].

use std::time::Instant;

use crate::autoplay::Autoplay;
use crate::card::{fits_on, is_red, rank, suit, Card, NONE};
use crate::error::Result;
use crate::key::Key;
use crate::layout::{Layout, NCOLS};
use crate::limits::Limits;
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::position::{Move, Origin, Position};
use crate::queue::BucketQueue;
use crate::solver::{Solver, Strategy};
use crate::store::Store;

/// Number of features of the move-count estimate.
pub const NF: usize = 12;

/// Feature index of the runs holding a card that needs a move by hand (feature 0 counts those cards).
pub const F_RUNS: usize = 1;

/// The features of `p` for the move-count estimate, under the position's rules:
/// 0 cards that cannot go home automatically before a card lying below them in their column does (each
///   needs at least one move by hand), 1 runs holding such a card (a lower bound on the moves left),
/// 2 cards not home, 3 occupied free cells, 4 empty columns, 5 free-cell cards at least 3 ranks above
/// their foundation, 6 cards above the next card of each suit, 7 blocked runs longer than one card,
/// 8 occupied free cells beyond two, 9 kings not at the bottom of a column, 10 cards above a lower card
/// of any suit, 11 runs holding such a card (under max autoplay such a card may still go home first,
/// if its own suit gets there in time, so these are no bound, only likely moves).
pub fn features(p: &Position) -> [i32; NF] {
    let mut f = [0i32; NF];
    for col in 0..NCOLS {
        let c = column_features(p, col);
        for i in 0..NF {
            f[i] += c[i];
        }
    }
    global_features(p, &mut f, true);
    f
}

/// The part of the features that depends on column `col` alone (0, 1, 2, 4, 7, 9, 10 and 11).
#[inline]
pub(crate) fn column_features(p: &Position, col: usize) -> [i32; NF] {
    let mut buf = [NONE; 52];
    let n = column_cards(p, col, &mut buf);
    let max = p.autoplay() == Autoplay::Max;
    let mut fold = Fold::EMPTY;
    for &c in buf[..n].iter().rev() {
        fold.add(c, max);
    }
    fold.features()
}

/// Put the cards of column `col` of `p` into `buf`, the exposed one first; their number.
#[inline(always)]
fn column_cards(p: &Position, col: usize, buf: &mut [Card; 52]) -> usize {
    let mut n = 0;
    let mut c = p.top(col);
    while c != NONE {
        buf[n] = c;
        n += 1;
        c = p.below(c);
    }
    n
}

/// The column features of a column's cards from the buried one up to some card: folded one card at a
/// time, bottom to top, so that a column that only gained or lost cards on top is made from the fold of
/// the cards it kept ([`Columns`]). The lowest rank below per suit and per colour says whether a card
/// is blocked; a run starts wherever a card does not fit on the one below it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fold {
    min_suit: [u8; 4],
    min_col: [u8; 2],
    min_any: u8,
    /// The card folded last (the next one lies on it), NONE for none.
    top: Card,
    n: u8,
    /// The run being folded: its length, whether it holds a blocked card (feature 1), a card above a
    /// lower card of any suit (11).
    run_len: u8,
    run_blocked: bool,
    run_above: bool,
    /// Features 0, 1, 7, 9, 10 and 11 of the cards and the runs closed so far.
    f: [u8; 6],
}

impl Fold {
    const EMPTY: Fold = Fold {
        min_suit: [99; 4],
        min_col: [99; 2],
        min_any: 99,
        top: NONE,
        n: 0,
        run_len: 0,
        run_blocked: false,
        run_above: false,
        f: [0; 6],
    };

    /// Fold card `c`, lying on the cards folded so far (`max`: the rules are [`Autoplay::Max`]).
    #[inline(always)]
    fn add(&mut self, c: Card, max: bool) {
        if self.top != NONE && !fits_on(c, self.top) {
            self.close_run();
        }
        let r = rank(c);
        let s = suit(c) as usize;
        let red = is_red(c) as usize;
        let blocked = self.min_suit[s] < r || (!max && self.min_col[1 - red] + 2 <= r);
        self.f[0] += blocked as u8;
        self.run_blocked |= blocked;
        let above = self.min_any < r;
        self.f[4] += above as u8;
        self.run_above |= above;
        self.min_any = self.min_any.min(r);
        self.run_len += 1;
        self.min_suit[s] = self.min_suit[s].min(r);
        self.min_col[red] = self.min_col[red].min(r);
        // A king not at the bottom.
        self.f[3] += (r == 12 && self.top != NONE) as u8;
        self.top = c;
        self.n += 1;
    }

    #[inline(always)]
    fn close_run(&mut self) {
        self.f[1] += self.run_blocked as u8;
        self.f[2] += (self.run_blocked && self.run_len > 1) as u8;
        self.f[5] += self.run_above as u8;
        self.run_blocked = false;
        self.run_above = false;
        self.run_len = 0;
    }

    /// The column's features, its last run closed.
    #[inline(always)]
    fn features(mut self) -> [i32; NF] {
        let mut f = [0i32; NF];
        if self.n == 0 {
            f[4] = 1;
            return f;
        }
        self.close_run();
        f[0] = self.f[0] as i32;
        f[1] = self.f[1] as i32;
        f[2] = self.n as i32;
        f[7] = self.f[2] as i32;
        f[9] = self.f[3] as i32;
        f[10] = self.f[4] as i32;
        f[11] = self.f[5] as i32;
        f
    }
}

/// A beam's parent position, folded: the fold of each of its column cards (the cards from the buried
/// one up to it) and each column's features, from which a child's columns are made by folding only the
/// cards the move put on them.
#[derive(Clone)]
pub(crate) struct Columns {
    fold: [Fold; 52],
    /// Per card: its column in the parent, `NCOLS` for none (a card in a cell or home).
    col: [u8; 52],
    features: [[i32; NF]; NCOLS],
    /// The sum of `features`.
    total: [i32; NF],
}

impl Columns {
    pub(crate) fn new() -> Columns {
        Columns {
            fold: [Fold::EMPTY; 52],
            col: [NCOLS as u8; 52],
            features: [[0; NF]; NCOLS],
            total: [0; NF],
        }
    }

    /// Fold the columns of `p` (a buffer kept from parent to parent: only `col` says which folds hold).
    pub(crate) fn load(&mut self, p: &Position) {
        let max = p.autoplay() == Autoplay::Max;
        self.col = [NCOLS as u8; 52];
        self.total = [0; NF];
        let mut buf = [NONE; 52];
        for col in 0..NCOLS {
            let n = column_cards(p, col, &mut buf);
            let mut fold = Fold::EMPTY;
            for &c in buf[..n].iter().rev() {
                fold.add(c, max);
                self.fold[c as usize] = fold;
                self.col[c as usize] = col as u8;
            }
            self.features[col] = fold.features();
            for (t, x) in self.total.iter_mut().zip(self.features[col]) {
                *t += x;
            }
        }
    }

    /// Make these, the folded columns of `p`, those of `q`, a position reached from `p` by a move and
    /// its automatic moves: the same as [`Columns::load`] of `q` in every part that is read, made from
    /// the columns the move changed alone. A move and the automatic moves take cards off the top of
    /// columns and put cards on top of columns, so a column whose exposed card is the same holds the
    /// same cards, and a changed one keeps its cards up to the highest card that lay in it in `p`
    /// (whose fold holds); above that, `p`'s cards left it and `q`'s were brought. The cards that
    /// left are unmarked first for every changed column, then the brought ones are folded, so a card
    /// moved from one column to another ends marked in the second.
    pub(crate) fn derive(&mut self, p: &Position, q: &Position) {
        let max = q.autoplay() == Autoplay::Max;
        let mut changed = 0u32;
        for col in 0..NCOLS {
            if q.top(col) == p.top(col) {
                continue;
            }
            changed |= 1 << col;
            let (_, _, kept) = self.brought(q, col);
            let mut c = p.top(col);
            while c != kept && c != NONE {
                self.col[c as usize] = NCOLS as u8;
                c = p.below(c);
            }
        }
        for col in (0..NCOLS).filter(|&col| changed >> col & 1 != 0) {
            let (brought, n, kept) = self.brought(q, col);
            let mut fold = self.fold_of(kept);
            for &c in brought[..n].iter().rev() {
                fold.add(c, max);
                self.fold[c as usize] = fold;
                self.col[c as usize] = col as u8;
            }
            let f = fold.features();
            for ((t, x), y) in self.total.iter_mut().zip(f).zip(self.features[col]) {
                *t += x - y;
            }
            self.features[col] = f;
        }
    }

    /// The cards of column `col` of `q` above the highest one marked in that column (top first), how
    /// many, and that card (`NONE` for none): the cards a move brought there, and the card it kept.
    /// A card unmarked or marked in another column is never the one kept, so [`Columns::derive`]
    /// finds the same card kept before and after it unmarks the cards that left.
    #[inline(always)]
    fn brought(&self, q: &Position, col: usize) -> ([Card; 52], usize, Card) {
        let mut brought = [NONE; 52];
        let mut n = 0;
        let mut c = q.top(col);
        while c != NONE && self.col[c as usize] != col as u8 {
            brought[n] = c;
            n += 1;
            c = q.below(c);
        }
        (brought, n, c)
    }

    /// The fold of the cards from the buried one up to `c` (`NONE`: no card).
    #[inline(always)]
    fn fold_of(&self, c: Card) -> Fold {
        if c == NONE {
            Fold::EMPTY
        } else {
            self.fold[c as usize]
        }
    }

    /// Make these, the folded columns of `q`, those of `c`: the same position with its columns in
    /// another order (a position as its key gives it). A column is known by its exposed card; empty
    /// columns are alike.
    pub(crate) fn reorder(&mut self, q: &Position, c: &Position) {
        let mut to = [NCOLS as u8; NCOLS + 1];
        let mut taken = 0u32;
        for (j, to) in to[..NCOLS].iter_mut().enumerate() {
            let t = q.top(j);
            if t == NONE {
                continue;
            }
            let k = (0..NCOLS)
                .find(|&k| c.top(k) == t)
                .expect("the same position holds the same exposed cards");
            *to = k as u8;
            taken |= 1 << k;
        }
        for (j, to) in to[..NCOLS].iter_mut().enumerate() {
            if q.top(j) == NONE {
                let k = (0..NCOLS)
                    .find(|&k| taken >> k & 1 == 0)
                    .expect("as many empty columns");
                *to = k as u8;
                taken |= 1 << k;
            }
        }
        let features = self.features;
        for j in 0..NCOLS {
            self.features[to[j] as usize] = features[j];
        }
        for x in self.col.iter_mut() {
            *x = to[*x as usize];
        }
    }

    /// The features of column `col` of `q`, a child of the parent: the fold of its highest card that
    /// lay in the same column of the parent (a move takes cards off one column and puts them on
    /// another, so that card stayed, and every card under it), then the cards above it, which the move
    /// brought.
    #[inline(always)]
    fn child_column(&self, q: &Position, col: usize) -> [i32; NF] {
        let (brought, n, kept) = self.brought(q, col);
        let mut fold = self.fold_of(kept);
        let max = q.autoplay() == Autoplay::Max;
        for &c in brought[..n].iter().rev() {
            fold.add(c, max);
        }
        fold.features()
    }
}

/// A beam's layer by place in it: each position (as its key gives it) with its folded columns
/// ([`Columns`]). The columns of the next layer's positions are derived from their parents' by their
/// moves ([`Columns::derive`], [`Columns::reorder`]) instead of folding every card again.
#[derive(Default)]
pub(crate) struct Folded {
    pos: Vec<Position>,
    cols: Vec<Columns>,
    next_pos: Vec<Position>,
    next_cols: Vec<Columns>,
    /// The parent (its index in the store) and the move ([`pack`]) of each position of the next layer,
    /// in the order [`fill_layer`] stores them.
    pub(crate) joined: Vec<(u32, u32)>,
}

impl Folded {
    /// A layer of one position, the one of `key`.
    pub(crate) fn start(&mut self, key: &Key, origin: &Origin, ncells: u8) {
        let p = Position::from_key(key, origin, ncells);
        let mut cols = Columns::new();
        cols.load(&p);
        self.pos.clear();
        self.cols.clear();
        self.pos.push(p);
        self.cols.push(cols);
    }

    /// The position at place `i` of the layer, and its folded columns.
    #[inline(always)]
    pub(crate) fn at(&self, i: usize) -> (&Position, &Columns) {
        (&self.pos[i], &self.cols[i])
    }

    /// Make the next layer from [`Folded::joined`]: `first` is the store index of the layer's first
    /// position (a layer's indices follow each other, as [`fill_layer`] stores them).
    pub(crate) fn advance(&mut self, first: u32, origin: &Origin) {
        self.next_pos.clear();
        self.next_cols.clear();
        for &(par, mv) in &self.joined {
            let at = (par - first) as usize;
            let mut q = self.pos[at];
            q.apply(unpack(mv), origin);
            q.settle(None);
            let mut cols = self.cols[at].clone();
            cols.derive(&self.pos[at], &q);
            let c = Position::from_key(q.key(), origin, q.ncells() as u8);
            cols.reorder(&q, &c);
            self.next_pos.push(c);
            self.next_cols.push(cols);
        }
        std::mem::swap(&mut self.pos, &mut self.next_pos);
        std::mem::swap(&mut self.cols, &mut self.next_cols);
    }
}

/// Add the features that do not come from single columns: the free cells (2, 3, 5, 8) and, when
/// `depth`, the depth of the next cards (6).
#[inline]
pub(crate) fn global_features(p: &Position, f: &mut [i32; NF], depth: bool) {
    let found = p.foundations();
    for slot in 0..p.ncells() {
        let c = p.cell(slot);
        if c != NONE {
            f[3] += 1;
            f[2] += 1;
            f[5] += (rank(c) >= found[suit(c) as usize] + 3) as i32;
        }
    }
    f[8] = (f[3] - 2).max(0);
    if !depth {
        return;
    }
    for s in 0..4u8 {
        let r = found[s as usize];
        if r < 13 {
            let d = p
                .cover(crate::card::make(r, s))
                .unwrap_or(0)
                .saturating_sub(1) as i32;
            f[6] += d;
        }
    }
}

/// Tunable parameters of the short search.
#[derive(Clone, Debug)]
pub struct Config {
    /// Weights of the features in the beam's estimate under the safe rules (see [`features`]).
    pub fw: [i32; NF],
    /// The same under [`Autoplay::Max`], where the foundations take cards sooner and the opposite
    /// colours do not block: tuned on their own (lab `short`, `AUTOPLAY=max MFW=...`). They count the
    /// runs above a lower card of any suit (11) rather than the cards that cannot go home first (0),
    /// and the cards above the next card of each suit (6), which go home as soon as they are freed:
    /// 25.53 moves over deals 1-100 against 25.94 with the safe rules' weights.
    pub max_fw: [i32; NF],
    /// Width of the first beam pass (0: no beam, only the A* phase).
    pub beam: usize,
    /// Beam passes, each twice as wide as the one before.
    pub passes: u32,
    /// Depth of the shortcut search on the line found (0: none).
    pub shortcut: u32,
    /// After the beam passes: beams of width `tail_beam` from the positions that cut the best line
    /// into `tails` parts (0 or 1: none).
    pub tails: u32,
    pub tail_beam: usize,
    /// Weighted A* phase after the beam: weights of g and of the estimate in the priority (0: none).
    pub wg: u32,
    pub wh: u32,
    /// Weights of the features in the A* phase's estimate.
    pub afw: [i32; NF],
    /// A* phase: go on after the first line until no shorter one can be found (with `wg == wh` and
    /// the admissible estimate `afw = [0, 1, 0, …]` the line is then a shortest one).
    pub exact: bool,
    /// When no phase found a line: the complete solver of [`crate::solver`], then shortcuts.
    pub fallback: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fw: [1, 4, 1, 2, -3, 3, 0, 0, 0, 2, 0, 0],
            max_fw: [0, 2, 1, 2, -3, 3, 1, 0, 0, 2, 0, 3],
            beam: 1000,
            passes: 3,
            shortcut: 0,
            tails: 0,
            tail_beam: 1000,
            wg: 0,
            wh: 0,
            afw: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            exact: false,
            fallback: true,
        }
    }
}

impl Config {
    /// The search for a shortest line (`fcanalyze solve --short --prove`): the beams of the default,
    /// wider (four passes, 1,000 to 8,000) and then from the eight points that cut the best line into
    /// parts (4,000 each), give the bound; then the A* on the admissible estimate (`afw`: the blocked
    /// runs) goes on until no shorter line can exist, or until the budget, where the least f left is
    /// a lower bound proven on every line ([`ShortSolver::lower_bound`]).
    pub fn shortest() -> Config {
        Config {
            passes: 4,
            tails: 8,
            tail_beam: 4000,
            wg: 1,
            wh: 1,
            exact: true,
            ..Config::default()
        }
    }
}

/// The weighted sum of features `f`, at least 0.
#[inline]
fn estimate(w: &[i32; NF], f: &[i32; NF]) -> u32 {
    let mut v = 0;
    for i in 0..NF {
        v += w[i] * f[i];
    }
    v.max(0) as u32
}

/// The [`features`] of `q`, a child of `p`, made from `cols`, `p` folded ([`Columns::load`]): a column
/// whose exposed card the move left alone has `p`'s features, the others (a move changes two or three
/// columns) fold only the cards the move brought; the depth of the next cards (feature 6, a walk over
/// the columns) only when `depth`.
#[inline(always)]
pub(crate) fn child_features(p: &Position, cols: &Columns, q: &Position, depth: bool) -> [i32; NF] {
    let mut f = cols.total;
    for (col, pf) in cols.features.iter().enumerate() {
        if q.top(col) != p.top(col) {
            let cf = cols.child_column(q, col);
            for ((x, y), z) in f.iter_mut().zip(cf).zip(pf) {
                *x += y - z;
            }
        }
    }
    global_features(q, &mut f, depth);
    f
}

/// Where a beam ranks `q`, a child of `p` reached in `g` moves from the beam's start: its estimate of
/// the moves left under the weights `fw`, or None when even `g` plus its blocked runs (a lower bound,
/// see [`F_RUNS`]) does not beat `bound`, the moves of the best line so far.
///
/// Both beams, [`ShortSolver`]'s and [`crate::shorten::Shortener`]'s, rank children here. It is their
/// hot loop, so the features are made incrementally ([`child_features`]), and the depth of the next
/// cards (feature 6) is skipped when `fw` ignores it.
#[inline(always)]
pub(crate) fn child_estimate(
    p: &Position,
    cols: &Columns,
    q: &Position,
    fw: &[i32; NF],
    g: u32,
    bound: u32,
) -> Option<u32> {
    let f = child_features(p, cols, q, fw[6] != 0);
    // A move takes at most one blocked run away: drop what cannot beat the best.
    if g + f[F_RUNS] as u32 >= bound {
        return None;
    }
    Some(estimate(fw, &f))
}

/// A beam's child: its estimate, its parent's index in the store, its key and the move from the parent
/// ([`pack`]). Sorted as a tuple: the move orders only the moves by which one parent reaches one key,
/// which give the same position up to the order of its columns (the first stored, the others met
/// again).
pub(crate) type Cand = (u32, u32, Key, u32);

/// A move in the last field of a [`Cand`].
#[inline(always)]
pub(crate) fn pack(m: Move) -> u32 {
    (m.from as u32) << 16 | (m.to as u32) << 8 | m.count as u32
}

/// The move [`pack`] made.
#[inline(always)]
pub(crate) fn unpack(x: u32) -> Move {
    Move {
        from: (x >> 16) as u8,
        to: (x >> 8) as u8,
        count: x as u8,
    }
}

/// Make `layer` a beam's next layer: up to `width` new positions from `cand`, the children of the
/// layer before ([`Cand`]), lowest estimate first, stored into `store`, each passed to `on_insert`
/// with its parent and its move; true when the store reached `cap` positions first.
///
/// Only the children taken are stored, so the store sees about `width` keys a layer, and only as much
/// of `cand` is sorted as is needed: chunks of about twice the places left, each picked with
/// `select_nth_unstable` and then sorted (a child already stored leaves its place to the next one).
#[inline]
pub(crate) fn fill_layer(
    cand: &mut [Cand],
    width: usize,
    store: &mut Store,
    cap: u64,
    layer: &mut Vec<u32>,
    mut on_insert: impl FnMut(u32, u32),
) -> bool {
    layer.clear();
    let n = cand.len();
    let mut lo = 0;
    while lo < n && layer.len() < width {
        let chunk = (2 * (width - layer.len())).max(64).min(n - lo);
        if lo + chunk < n {
            cand[lo..].select_nth_unstable(chunk - 1);
        }
        cand[lo..lo + chunk].sort_unstable();
        for &(_, par, key, mv) in &cand[lo..lo + chunk] {
            if store.len() as u64 >= cap {
                return true;
            }
            if let Some(c) = store.insert(&key, par) {
                on_insert(par, mv);
                layer.push(c);
                if layer.len() == width {
                    break;
                }
            }
        }
        lo += chunk;
    }
    false
}

/// Priorities of the best-first queue (higher scores share its last bucket).
const NPRIORITIES: usize = 1 << 16;

/// Player moves that finish a sorted position by sending the lowest card home each time.
pub(crate) fn finish_cost(p: &Position, origin: &Origin) -> u32 {
    let mut q = *p;
    let mut n = 0;
    while !q.is_won() {
        let Some(m) = q.lowest_home_move() else {
            return 1000;
        };
        q.apply(m, origin);
        q.settle(None);
        n += 1;
    }
    n
}

/// What a phase of the search ended in.
enum End {
    /// Every reachable position was examined (or the phase found a shortest line).
    Complete,
    /// Positions were pruned: a line may have been missed.
    Pruned,
    Budget(Budget),
}

/// The state shared by the phases of one search.
struct Ctx<'a> {
    origin: &'a Origin,
    ncells: u8,
    limits: Limits,
    start: Instant,
    /// Positions stored by the phases so far, the current one excepted.
    spent: u64,
    /// For a proof of unsolvability: the number of reachable positions.
    proof: Option<u64>,
    /// For a phase started from a position of a line rather than from the root: the moves and the keys
    /// of the line before that position.
    offset: u32,
    prefix: Vec<Key>,
    /// The shortest line so far: its cost and its canonical keys from the root to a sorted position.
    best: Option<(u32, Vec<Key>)>,
}

impl Ctx<'_> {
    /// The moves a line must beat from the current phase's start.
    fn bound(&self) -> u32 {
        self.best
            .as_ref()
            .map_or(u32::MAX, |b| b.0.saturating_sub(self.offset))
    }
    fn out_of_time(&self) -> bool {
        self.limits.out_of_time(self.start)
    }
}

/// A reusable short-line search: keeps its tables from one search to the next.
pub struct ShortSolver {
    store: Store,
    parent: Vec<u32>,
    g: Vec<u16>,
    closed: Vec<bool>,
    queue: BucketQueue<NPRIORITIES>,
    moves: Vec<Move>,
    /// A beam's layer: its positions and their folded columns.
    folded: Folded,
    solver: Option<Solver>,
    pub config: Config,
    /// After a search: a proven lower bound on the moves of any line: the blocked runs of the start, or
    /// what an exact A* phase proved.
    pub lower_bound: u32,
}

impl Default for ShortSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl ShortSolver {
    pub fn new() -> ShortSolver {
        ShortSolver {
            store: Store::new(),
            parent: Vec::new(),
            g: Vec::new(),
            closed: Vec::new(),
            queue: BucketQueue::new(),
            moves: Vec::with_capacity(256),
            folded: Folded::default(),
            solver: None,
            config: Config::default(),
            lower_bound: 0,
        }
    }

    /// Search `layout` with `ncells` free cells for a short line (see [`solve_short`]).
    pub fn solve(
        &mut self,
        layout: &Layout,
        ncells: usize,
        limits: Limits,
    ) -> Result<SearchResult> {
        let start = Instant::now();
        let (mut p0, origin) = Position::from_layout(layout, ncells)?;
        let concrete = p0;
        p0.settle(None);
        let mut cx = Ctx {
            origin: &origin,
            ncells: ncells as u8,
            limits,
            start,
            spent: 0,
            proof: None,
            offset: 0,
            prefix: Vec::new(),
            best: None,
        };
        // Every line takes at least a move for each blocked run (see [`F_RUNS`]).
        self.lower_bound = features(&p0)[F_RUNS].max(0) as u32;
        let mut complete = false;
        let mut fell_back = false;
        let mut exhausted = None;
        if p0.is_sorted() {
            cx.best = Some((finish_cost(&p0, &origin), vec![*p0.key()]));
            cx.spent = 1;
        } else if limits.max_positions <= 1 {
            exhausted = Some(Budget::Positions);
            cx.spent = 1;
        } else {
            let mut w = self.config.beam;
            for _ in 0..self.config.passes.max(1) {
                if w == 0 {
                    break;
                }
                match self.beam(&p0, w, &mut cx) {
                    End::Complete => {
                        complete = true;
                        break;
                    }
                    End::Pruned => {}
                    End::Budget(b) => {
                        exhausted = Some(b);
                        break;
                    }
                }
                w *= 2;
            }
            if self.config.tails > 1 && !complete && exhausted.is_none() {
                if let Some((_, chain)) = cx.best.clone() {
                    exhausted =
                        self.tail_beams(&chain, self.config.tails, self.config.tail_beam, &mut cx);
                }
            }
            if !complete && exhausted.is_none() && self.config.wg > 0 {
                match self.astar(&p0, &mut cx) {
                    End::Complete => complete = true,
                    End::Pruned => {}
                    End::Budget(b) => exhausted = Some(b),
                }
            }
            if cx.best.is_none() && !complete && exhausted.is_none() && self.config.fallback {
                fell_back = true;
                match self.fallback(layout, &mut cx)? {
                    End::Complete => complete = true,
                    End::Pruned => {}
                    End::Budget(b) => exhausted = Some(b),
                }
            }
        }
        let mut positions = cx.spent;
        let (outcome, solution) = match cx.best.take() {
            Some((_, mut chain)) => {
                // The fallback's lines are long: shorten them at least a little.
                let depth = if fell_back {
                    self.config.shortcut.max(2)
                } else {
                    self.config.shortcut
                };
                if depth > 0 {
                    let deadline = limits
                        .max_millis
                        .map(|ms| start + std::time::Duration::from_millis(ms));
                    chain = self.shortcuts(chain, &origin, ncells as u8, depth, deadline);
                }
                let line = crate::line::through_keys(concrete, &origin, &chain, "short line")?;
                let line = crate::line::replayed(layout, ncells, line, "a short solution")?;
                (Outcome::Solved, line)
            }
            // Only a phase that examined every reachable position proves that there is no line.
            None if complete => {
                positions = cx.proof.unwrap_or(positions);
                (Outcome::Unsolvable, vec![])
            }
            None => (Outcome::Undecided, vec![]),
        };
        let exhausted = if outcome == Outcome::Undecided {
            Some(exhausted.unwrap_or(Budget::Positions))
        } else {
            None
        };
        Ok(SearchResult::since(
            start, outcome, positions, solution, exhausted,
        ))
    }

    /// Start a phase: an empty store holding the root.
    fn reset(&mut self, p0: &Position) {
        self.store.clear();
        self.parent.clear();
        self.g.clear();
        self.closed.clear();
        self.queue.clear();
        self.store.insert(p0.key(), u32::MAX);
        self.parent.push(u32::MAX);
        self.g.push(0);
        self.closed.push(false);
    }

    fn chain(&self, goal: u32) -> Vec<Key> {
        let mut chain = Vec::new();
        let mut i = goal;
        while i != u32::MAX {
            chain.push(self.store.get(i).key());
            i = self.parent[i as usize];
        }
        chain.reverse();
        chain
    }

    /// A sorted position `q` reached in `g` moves from stored position `parent`: keep its line if it
    /// is the shortest so far.
    fn goal(&self, q: &Position, parent: u32, g: u32, cx: &mut Ctx) {
        let cost = g + finish_cost(q, cx.origin);
        if cost < cx.bound() {
            let mut chain = cx.prefix.clone();
            chain.extend(self.chain(parent));
            chain.push(*q.key());
            cx.best = Some((cx.offset + cost, chain));
        }
    }

    /// Whether the positions budget leaves room for one more position.
    fn full(&self, cx: &Ctx) -> bool {
        cx.spent + self.store.len() as u64 >= cx.limits.max_positions
    }

    /// A beam search over layers of equal move count: each layer keeps the `width` positions with the
    /// lowest estimate, and drops those that cannot beat the best line so far.
    fn beam(&mut self, p0: &Position, width: usize, cx: &mut Ctx) -> End {
        if cx.spent + 1 >= cx.limits.max_positions {
            return End::Budget(Budget::Positions);
        }
        self.reset(p0);
        let fw = match p0.autoplay() {
            Autoplay::Safe => self.config.fw,
            Autoplay::Max => self.config.max_fw,
        };
        let mut layer: Vec<u32> = vec![0];
        // Children of the layer ([`Cand`]). Only those taken into the next layer are
        // stored, best estimate first, so the store sees about `width` keys per layer.
        let mut cand: Vec<Cand> = Vec::new();
        let mut moves = std::mem::take(&mut self.moves);
        let mut folded = std::mem::take(&mut self.folded);
        folded.start(p0.key(), cx.origin, cx.ncells);
        let mut end = End::Complete;
        let mut g = 0u32;
        'layers: while !layer.is_empty() {
            if g + 2 > cx.bound() {
                // No line through the next layer can be shorter than the best.
                end = End::Pruned;
                break;
            }
            cand.clear();
            for (i, &idx) in layer.iter().enumerate() {
                if cx.out_of_time() {
                    end = End::Budget(Budget::Time);
                    break 'layers;
                }
                let (p, cols) = folded.at(i);
                p.moves(&mut moves);
                for &m in &moves {
                    let mut q = *p;
                    q.apply(m, cx.origin);
                    q.settle(None);
                    if q.is_sorted() {
                        self.goal(&q, idx, g + 1, cx);
                        continue;
                    }
                    let Some(h) = child_estimate(p, cols, &q, &fw, g + 1, cx.bound()) else {
                        end = End::Pruned;
                        continue;
                    };
                    cand.push((h, idx, *q.key(), pack(m)));
                }
            }
            g += 1;
            // The next layer: the best new positions, within the positions budget.
            let cap = cx.limits.max_positions.saturating_sub(cx.spent);
            let (parent, joined) = (&mut self.parent, &mut folded.joined);
            joined.clear();
            let first = layer[0];
            if fill_layer(
                &mut cand,
                width,
                &mut self.store,
                cap,
                &mut layer,
                |par, mv| {
                    parent.push(par);
                    joined.push((par, mv));
                },
            ) {
                end = End::Budget(Budget::Positions);
                break;
            }
            folded.advance(first, cx.origin);
            if layer.len() == width && cand.len() > width {
                // Some children were not taken (or not even looked up): the search is not complete.
                end = End::Pruned;
            }
        }
        self.moves = moves;
        self.folded = folded;
        cx.spent += self.store.len() as u64;
        if matches!(end, End::Complete) && cx.best.is_none() {
            cx.proof = Some(self.store.len() as u64);
        }
        if matches!(end, End::Complete) && cx.best.is_some() {
            // Complete only in the sense that nothing was pruned; a line exists anyway.
            end = End::Pruned;
        }
        end
    }

    /// When the other phases found no line: the complete solver of [`crate::solver`] with the budget
    /// left, whose line (long) is then shortened; its proof of unsolvability is a proof here too.
    fn fallback(&mut self, layout: &Layout, cx: &mut Ctx) -> Result<End> {
        let left = Limits {
            max_positions: cx.limits.max_positions.saturating_sub(cx.spent).max(1),
            max_millis: cx.limits.max_millis.map(|ms| {
                ms.saturating_sub(cx.start.elapsed().as_millis() as u64)
                    .max(1)
            }),
        };
        let r = self.solver.get_or_insert_with(Solver::new).search(
            layout,
            cx.ncells as usize,
            Strategy::Solve,
            left,
        )?;
        cx.spent += r.positions;
        Ok(match r.outcome {
            Outcome::Unsolvable => {
                // A proof reports the size of the reachable set (SPEC §3).
                cx.proof = Some(r.positions);
                End::Complete
            }
            Outcome::Undecided => End::Budget(r.exhausted.unwrap_or(Budget::Positions)),
            Outcome::Solved => {
                // The canonical keys along the line, from the settled start.
                let (mut p, _) = Position::from_layout(layout, cx.ncells as usize)?;
                p.settle(None);
                let mut chain = vec![*p.key()];
                for m in r.solution.iter().filter(|m| !m.auto) {
                    p.apply(m.mv, cx.origin);
                    p.settle(None);
                    chain.push(*p.key());
                    if p.is_sorted() {
                        break;
                    }
                }
                let cost = (chain.len() - 1) as u32 + finish_cost(&p, cx.origin);
                cx.best = Some((cost, chain.clone()));
                // Beams from later positions of the line, where less is left to find, often succeed
                // where the beam from the start did not.
                self.tail_beams(&chain, 3, self.config.beam.max(1), cx);
                End::Pruned
            }
        })
    }

    /// Beams of width `width` from `parts - 1` positions spread along `chain` (a line's canonical keys
    /// from the root), each looking for a shorter way from there to the end; the budget they hit, if
    /// any. A beam from the middle of a line spends its whole width on what is left of it.
    fn tail_beams(
        &mut self,
        chain: &[Key],
        parts: u32,
        width: usize,
        cx: &mut Ctx,
    ) -> Option<Budget> {
        let n = chain.len() - 1;
        for i in 1..parts as usize {
            let k = n * i / parts as usize;
            if k == 0 || cx.out_of_time() {
                break;
            }
            let pk = Position::from_key(&chain[k], cx.origin, cx.ncells);
            cx.offset = k as u32;
            cx.prefix = chain[..k].to_vec();
            let end = self.beam(&pk, width, cx);
            cx.offset = 0;
            cx.prefix.clear();
            if let End::Budget(b) = end {
                return Some(b);
            }
        }
        None
    }

    /// Weighted A* (priority `wg·g + wh·estimate`), pruned by the best line so far; with `exact`, it
    /// goes on after a line until no shorter one can be found.
    fn astar(&mut self, p0: &Position, cx: &mut Ctx) -> End {
        if cx.spent + 1 >= cx.limits.max_positions {
            return End::Budget(Budget::Positions);
        }
        self.reset(p0);
        let cfg = self.config.clone();
        let h0 = estimate(&cfg.afw, &features(p0));
        let mut cols = Columns::new();
        self.queue.push((cfg.wh * h0) * 64 + h0.min(63), 0);
        let mut moves = std::mem::take(&mut self.moves);
        let mut expanded = 0u64;
        let mut end = End::Complete;
        while let Some(idx) = self.queue.pop() {
            if self.closed[idx as usize] {
                continue;
            }
            let g = self.g[idx as usize] as u32;
            if g + 1 >= cx.bound() {
                continue;
            }
            if cx.best.is_some()
                && (!cfg.exact || (self.queue.min() as u32 >> 6) >= cx.bound() * cfg.wg)
            {
                // With `exact`, every position left has f at least the best cost.
                end = if cfg.exact {
                    End::Complete
                } else {
                    End::Pruned
                };
                break;
            }
            self.closed[idx as usize] = true;
            expanded += 1;
            if expanded & 255 == 0 && cx.out_of_time() {
                end = End::Budget(Budget::Time);
                break;
            }
            let p = Position::from_key(&self.store.get(idx).key(), cx.origin, cx.ncells);
            cols.load(&p);
            p.moves(&mut moves);
            for &m in &moves {
                let mut q = p;
                q.apply(m, cx.origin);
                q.settle(None);
                if q.is_sorted() {
                    self.goal(&q, idx, g + 1, cx);
                    continue;
                }
                if self.full(cx) {
                    end = End::Budget(Budget::Positions);
                    break;
                }
                let (c, new) = self.store.insert_or_get(q.key(), idx);
                if new {
                    self.g.push((g + 1) as u16);
                    self.parent.push(idx);
                    self.closed.push(false);
                } else if self.g[c as usize] as u32 > g + 1 {
                    self.g[c as usize] = (g + 1) as u16;
                    self.parent[c as usize] = idx;
                    self.closed[c as usize] = false;
                } else {
                    continue;
                }
                let h = estimate(&cfg.afw, &child_features(&p, &cols, &q, cfg.afw[6] != 0));
                self.queue
                    .push((cfg.wg * (g + 1) + cfg.wh * h) * 64 + h.min(63), c);
            }
            if matches!(end, End::Budget(_)) {
                break;
            }
        }
        self.moves = moves;
        // Lower bounds hold for the admissible estimate only (`wg == wh`, `afw` counting blocked runs).
        let proven = match end {
            End::Complete => cx.bound(),
            End::Budget(_) if cfg.exact && cfg.wg == cfg.wh => {
                ((self.queue.min() as u32) >> 6) / cfg.wg
            }
            _ => 0,
        };
        self.lower_bound = self.lower_bound.max(proven);
        cx.spent += self.store.len() as u64;
        if matches!(end, End::Complete) && cx.best.is_none() {
            cx.proof = Some(self.store.len() as u64);
        }
        if matches!(end, End::Complete) && cx.best.is_some() {
            end = End::Pruned;
        }
        end
    }

    /// Shorten a line (canonical keys from the root to a sorted position): from each of its positions, a
    /// breadth-first search `depth` moves deep looks for a later position of the line, or a sorted
    /// position, reached in fewer moves; the first such shortcut is taken, until none is left or the
    /// deadline passes.
    pub fn shortcuts(
        &mut self,
        mut chain: Vec<Key>,
        origin: &Origin,
        ncells: u8,
        depth: u32,
        deadline: Option<Instant>,
    ) -> Vec<Key> {
        let mut local = Store::new();
        let mut moves = Vec::new();
        let mut frontier: Vec<u32> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        'again: loop {
            let n = chain.len() - 1;
            let last = Position::from_key(&chain[n], origin, ncells);
            let total = n as u32 + finish_cost(&last, origin);
            let index: std::collections::HashMap<Key, usize> =
                chain.iter().enumerate().map(|(i, k)| (*k, i)).collect();
            for i in 0..n {
                if crate::interrupt::active() || deadline.is_some_and(|d| Instant::now() >= d) {
                    return chain;
                }
                local.clear();
                local.insert(&chain[i], u32::MAX);
                frontier.clear();
                frontier.push(0);
                // (local index of the end, index in the line or None for a sorted end)
                let mut found: Option<(u32, Option<usize>)> = None;
                'bfs: for d in 1..=depth {
                    next.clear();
                    for &idx in &frontier {
                        let p = Position::from_key(&local.get(idx).key(), origin, ncells);
                        p.moves(&mut moves);
                        for &m in &moves {
                            let mut q = p;
                            q.apply(m, origin);
                            q.settle(None);
                            let Some(c) = local.insert(q.key(), idx) else {
                                continue;
                            };
                            if let Some(&j) = index.get(q.key()) {
                                if j > i + d as usize {
                                    found = Some((c, Some(j)));
                                    break 'bfs;
                                }
                            }
                            if q.is_sorted() {
                                if i as u32 + d + finish_cost(&q, origin) < total {
                                    found = Some((c, None));
                                    break 'bfs;
                                }
                                continue;
                            }
                            next.push(c);
                        }
                    }
                    std::mem::swap(&mut frontier, &mut next);
                }
                if let Some((c, j)) = found {
                    let mut path = Vec::new();
                    let mut x = c;
                    while x != 0 {
                        path.push(local.get(x).key());
                        x = local.get(x).parent;
                    }
                    path.reverse();
                    let mut out: Vec<Key> = chain[..=i].to_vec();
                    out.extend(path);
                    if let Some(j) = j {
                        out.extend_from_slice(&chain[j + 1..]);
                    }
                    chain = out;
                    continue 'again;
                }
            }
            return chain;
        }
    }
}

/// Search `layout` with `ncells` free cells for a short winning line, as players count moves.
pub fn solve_short(layout: &Layout, ncells: usize, limits: Limits) -> Result<SearchResult> {
    ShortSolver::new().solve(layout, ncells, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The features a beam makes from its parent's folded columns are those of the child made whole,
    /// for every child of the positions along walks through deals under both rules and cell counts.
    /// So are a child's columns derived from its parent's and put in the order of its key, along
    /// the walk as a beam's layers derive them, each from those derived the step before.
    #[test]
    fn folded_columns_give_the_childrens_features() {
        let mut moves = Vec::new();
        let mut checked = 0;
        for deal in 1..=40u64 {
            for (rules, cells) in [(Autoplay::Safe, 4), (Autoplay::Max, 2), (Autoplay::Safe, 0)] {
                let layout = Layout::deal(deal).unwrap().with_autoplay(rules);
                let (mut p, origin) = Position::from_layout(&layout, cells).unwrap();
                p.settle(None);
                let mut folded = Folded::default();
                folded.start(p.key(), &origin, cells as u8);
                for step in 0..60usize {
                    let p0 = Position::from_key(p.key(), &origin, cells as u8);
                    let mut cols = Columns::new();
                    cols.load(&p0);
                    let (walked, derived) = folded.at(0);
                    assert_eq!(walked.key(), p0.key());
                    assert_same_columns(derived, &cols, &format!("deal {deal} step {step}"));
                    for col in 0..NCOLS {
                        assert_eq!(cols.features[col], column_features(&p0, col));
                    }
                    p0.moves(&mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    for &m in &moves {
                        let mut q = p0;
                        q.apply(m, &origin);
                        q.settle(None);
                        for col in 0..NCOLS {
                            if q.top(col) != p0.top(col) {
                                assert_eq!(
                                    cols.child_column(&q, col),
                                    column_features(&q, col),
                                    "deal {deal} step {step} move {m:?} column {col}"
                                );
                                checked += 1;
                            }
                        }
                        assert_eq!(child_features(&p0, &cols, &q, true), features(&q));
                        let mut child = cols.clone();
                        child.derive(&p0, &q);
                        let c = Position::from_key(q.key(), &origin, cells as u8);
                        child.reorder(&q, &c);
                        let mut whole = Columns::new();
                        whole.load(&c);
                        let what = format!("deal {deal} step {step} move {m:?}");
                        assert_same_columns(&child, &whole, &what);
                    }
                    let m = moves[(deal as usize * 7 + step * 13) % moves.len()];
                    folded.joined.clear();
                    folded.joined.push((0, pack(m)));
                    folded.advance(0, &origin);
                    p = p0;
                    p.apply(m, &origin);
                    p.settle(None);
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// What of [`Columns`] is read (the features, each card's column, the folds of the cards in
    /// columns) is the same in `a` and `b`.
    fn assert_same_columns(a: &Columns, b: &Columns, what: &str) {
        assert_eq!(a.total, b.total, "{what}: total");
        assert_eq!(a.features, b.features, "{what}: features");
        assert_eq!(a.col, b.col, "{what}: columns");
        for c in 0..52 {
            if a.col[c] != NCOLS as u8 {
                assert_eq!(a.fold[c], b.fold[c], "{what}: fold of card {c}");
            }
        }
    }
}
