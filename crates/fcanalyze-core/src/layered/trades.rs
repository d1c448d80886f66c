//! Trades within a group (docs/reductions.md, "Trades within a group"): a group searched by levels
//! holds one position of each orbit of its trades, and counts each orbit by its size.
//!
//! Within a group no card goes home and no dealt card moves. Take two cards `x`, `y` of one rank and
//! colour, both free (in play, off their dealt cards, no card lying on its dealt card when that card
//! is `x` or `y`), neither of which can go home from the group (their rank is above both foundations'
//! next cards, or both are their foundations' next cards with the foundations equally high). The
//! trade that gives each the other's place, and the cards one rank lower of the other colour each
//! other's parent ([`super::twin::swap`]), takes every move within the group to a move within the
//! group. So when it takes the group's seeds onto its seeds, it takes the group's positions onto its
//! positions ([`Trades::keep`] checks the seeds).
//!
//! The trades a group keeps commute and are each their own inverse. Its search by levels holds the
//! canonical position of each orbit ([`Trades::canonical`]): the positions within the group one move
//! from an orbit are the orbits one move from its canonical position, because the other positions'
//! moves are the images of that position's. A member's children in later layers are the images of
//! the canonical position's children as long as the automatic moves after the move treated the two
//! cards of each trade alike ([`alike`], [`Trades::blocked`]); otherwise the member is expanded
//! itself. So the count and the seeds sent to later layers are those of the search of every
//! position.

use crate::card::{make, opposite_suits, rank, suit, Card};
use crate::key::{loc_of, Key, LOC_DEALT};
use crate::prover::{Rules, NO};

use super::code::Frame;
use super::twin::{dealt_on_either, foundations, swap};

/// Most trades a group keeps (those of the highest ranks): an orbit holds at most 2^12 positions.
const MAX_TRADES: usize = 12;

/// Seeds of the finer sample [`Trades::keep`] takes when more trades than a group keeps pass the first
/// sample and the highest of them do not keep the seeds.
const FINE_SAMPLE: usize = 4096;

/// No place in a code: the card is not free in the group.
const NONE: u32 = u32::MAX;

/// Where a trade's cards lie in a code, as masks: the places are 2-bit fields, and a trade swaps the
/// fields of `x` and `y` and flips the low bit of the fields of the two cards one rank lower of the
/// other colour that lie on a parent (places 2 and 3: the other parent).
#[derive(Clone, Copy, Debug)]
struct Bits {
    /// The lower of the fields of `x` and `y`, and the distance up to the other.
    low: u128,
    shift: u32,
    /// Whether `y`'s field is the higher one.
    y_higher: bool,
    /// The high bits of the fields of the cards one rank lower.
    lower_high: u128,
    /// The fields of `x` and `y`, and both cards at the bottom of columns (place 1) in them.
    both: u128,
    at_bottom: u128,
}

impl Bits {
    /// The masks of the fields at bit offsets `x` and `y`, and of those at `lower` ([`NONE`]: not free).
    fn new(x: u32, y: u32, lower: [u32; 2]) -> Bits {
        let (lo, hi) = (x.min(y), x.max(y));
        let high = |l: u32| if l == NONE { 0 } else { 2u128 << l };
        Bits {
            low: 3 << lo,
            shift: hi - lo,
            y_higher: y > x,
            lower_high: high(lower[0]) | high(lower[1]),
            both: 3 << x | 3 << y,
            at_bottom: 1 << x | 1 << y,
        }
    }

    /// Whether `x`'s place in `code` is a higher number than `y`'s.
    #[inline(always)]
    fn x_above_y(&self, code: u128) -> bool {
        let (low, high) = (code & self.low, code >> self.shift & self.low);
        if self.y_higher {
            low > high
        } else {
            high > low
        }
    }
}

/// The trades that keep a group's seeds and the canonical positions of the seeds' orbits (sorted, each
/// once), as [`Trades::keep`] finds them.
pub(super) type Kept = (Trades, Vec<u128>);

/// The trade of bit `b` of a seed's trades ([`super::code::Rec`]): the two black cards of rank `b / 2`
/// (suits 0 and 3) for an even bit, the two red ones (suits 1 and 2) for an odd one.
pub(super) fn pair_of_bit(b: u32) -> (Card, Card) {
    let (x, y) = if b & 1 == 0 { (0, 3) } else { (1, 2) };
    let r = (b / 2) as u8;
    (make(r, x), make(r, y))
}

/// The bit of the trade of `x` and another card of its rank and colour ([`pair_of_bit`]).
fn bit_of_pair(x: Card) -> u32 {
    2 * rank(x) as u32 + matches!(suit(x), 1 | 2) as u32
}

/// The images of the seed `key` and of its parent `parent` under every product of the trades of
/// `mask` ([`pair_of_bit`]'s bits) into `out`, each image once, `key` first: the seeds a record with
/// those trades stands for ([`super::code::Rec`]). The trades commute and are their own inverses, so a
/// trade takes the images of the trades before it onto themselves or onto keys all outside them (as in
/// [`Trades::orbit`]).
pub(super) fn images(
    key: &Key,
    parent: Option<&Key>,
    mask: u32,
    out: &mut Vec<(Key, Option<Key>)>,
) {
    out.clear();
    out.push((*key, parent.copied()));
    let mut m = mask;
    while m != 0 {
        let (x, y) = pair_of_bit(m.trailing_zeros());
        m &= m - 1;
        let image = swap(key, x, y);
        if out.iter().any(|o| o.0 == image) {
            continue;
        }
        out.push((image, parent.map(|p| swap(p, x, y))));
        for i in 1..out.len() - 1 {
            let (k, p) = out[i];
            out.push((swap(&k, x, y), p.map(|p| swap(&p, x, y))));
        }
    }
}

/// The trades a group keeps, from the kings down, and their places in the group's codes.
#[derive(Clone, Debug)]
pub(super) struct Trades {
    pub(super) pairs: Vec<(Card, Card)>,
    bits: Vec<Bits>,
    /// The group's foundations.
    found: [u8; 4],
}

/// The trades within the group of `key` (a position of it) that the module's argument allows.
pub(super) fn candidates(rules: &Rules, key: &Key) -> Vec<(Card, Card)> {
    let found = foundations(key);
    let mut out = vec![];
    for (a, b) in [(0u8, 3u8), (1, 2)] {
        let (ha, hb) = (found[a as usize], found[b as usize]);
        for r in ha.max(hb)..13 {
            if r == ha.max(hb) && ha != hb {
                continue;
            }
            let (x, y) = (make(r, a), make(r, b));
            if loc_of(key, x) == LOC_DEALT || loc_of(key, y) == LOC_DEALT {
                continue;
            }
            if !dealt_on_either(rules, key, x, y) {
                out.push((x, y));
            }
        }
    }
    out
}

/// Whether the automatic moves after a move from a position of a group (foundations `group`) to a
/// child (foundations `child`) treated `x` and `y` alike, so that the image of the child under their
/// trade is the child of the image. Until one of the two cards can go home, every step of the
/// automatic moves depends only on the foundations' heights and on which cards are exposed, which the
/// trade keeps. So it holds when both foundations stay below the cards' rank. When both cards were
/// already their foundations' next cards (equally high), it holds as long as neither went home: the
/// two foundations stay equal, and a step that could send one home could send the other in the image.
/// Once a foundation reaches the rank from below, or a card goes home, the two sides may part.
pub(super) fn alike(group: &[u8; 4], child: &[u8; 4], x: Card, y: Card) -> bool {
    let (r, a, b) = (rank(x), suit(x) as usize, suit(y) as usize);
    if group[a] == r && group[b] == r {
        child[a] == r && child[b] == r
    } else {
        child[a] < r && child[b] < r
    }
}

impl Trades {
    /// The trades `pairs` of a checkpoint, `None` unless each trades two cards of one rank and colour
    /// free in `frame`'s group.
    pub(super) fn of_saved(frame: &Frame, pairs: Vec<(Card, Card)>) -> Option<Trades> {
        let fits = |&(x, y): &(Card, Card)| {
            let free = |c| frame.free.contains(&c);
            let colour = |c| opposite_suits(suit(c));
            free(x) && free(y) && x != y && rank(x) == rank(y) && colour(x) == colour(y)
        };
        pairs.iter().all(fits).then(|| Trades::new(frame, pairs))
    }

    /// The trades `pairs` (cards free in `frame`'s group), taken from the kings down.
    pub(super) fn new(frame: &Frame, mut pairs: Vec<(Card, Card)>) -> Trades {
        pairs.sort_by_key(|p| std::cmp::Reverse(rank(p.0)));
        let at = |c: Card| {
            frame
                .free
                .iter()
                .position(|&f| f == c)
                .map_or(NONE, |i| 2 * i as u32)
        };
        let bits = pairs
            .iter()
            .map(|&(x, y)| {
                let (a, b) = opposite_suits(suit(x));
                let lower = match rank(x) {
                    0 => [NONE; 2],
                    r => [at(make(r - 1, a)), at(make(r - 1, b))],
                };
                let (x, y) = (at(x), at(y));
                assert!(x != NONE && y != NONE, "a trade of cards not free");
                Bits::new(x, y, lower)
            })
            .collect();
        Trades {
            pairs,
            bits,
            found: foundations(&frame.decode(0)),
        }
    }

    /// The trades of the group of `frame` whose images of its seeds `seeds` (codes, sorted, each once)
    /// are seeds, the [`MAX_TRADES`] highest of them, and the canonical positions of the orbits of the
    /// seeds (sorted, each once: the group's first level); `None` when no trade keeps the seeds.
    pub(super) fn keep(rules: &Rules, frame: &Frame, seeds: &[u128]) -> Option<Kept> {
        let first = seeds.first()?;
        let all = Trades::new(frame, candidates(rules, &frame.decode(*first)));
        // A trade that fails mostly fails on a few seeds spread over the set: those first. The highest
        // trades left nearly always all keep the seeds, which one count of the orbits shows
        // ([`Trades::orbits`]). When they do not, a trade of them takes a seed out of the set only
        // if the seed's orbit is short of seeds (a whole orbit goes onto itself): the seeds of the
        // short orbits tell which trades keep the seeds. Deal 8983 with 1 cell: 92 groups counted
        // their orbits and 9 had short ones; in 3 of them a trade failed on fewer than 1 seed in
        // 4,096, which sorted each trade's images of all the seeds before (0.936 of the time).
        let sample = |of: &[usize], seeds_in: usize| -> Vec<usize> {
            let step = (seeds.len() / seeds_in).max(1);
            let kept = |j: usize| all.keeps(j, seeds.iter().step_by(step), seeds);
            of.iter().copied().filter(|&j| kept(j)).collect()
        };
        let highest = |of: &[usize]| {
            let pairs = of.iter().take(MAX_TRADES).map(|&j| all.pairs[j]);
            Trades::new(frame, pairs.collect())
        };
        let every: Vec<usize> = (0..all.pairs.len()).collect();
        let sampled = sample(&every, 256);
        if sampled.is_empty() {
            return None;
        }
        let trades = highest(&sampled);
        let short = match trades.orbits(seeds) {
            Ok(firsts) => return Some((trades, firsts)),
            Err(short) => short,
        };
        if sampled.len() <= MAX_TRADES {
            let lone = trades.seeds_of(&short, seeds);
            let kept: Vec<(Card, Card)> = (0..trades.pairs.len())
                .filter(|&j| trades.keeps(j, &lone, seeds))
                .map(|j| trades.pairs[j])
                .collect();
            return Trades::with_firsts(frame, kept, seeds);
        }
        // More trades than are kept passed the sample: a trade past the highest may take the place
        // of one that fails. A finer sample drops most trades that fail on few seeds, and the highest
        // left are counted again; only when they do not close the seeds either, each trade's images
        // of all the seeds, sorted, are compared with the seeds (faster than a search for each).
        let sieved = sample(&sampled, FINE_SAMPLE);
        if sieved.is_empty() {
            return None;
        }
        if sieved
            .iter()
            .take(MAX_TRADES)
            .ne(sampled.iter().take(MAX_TRADES))
        {
            let trades = highest(&sieved);
            if let Ok(firsts) = trades.orbits(seeds) {
                return Some((trades, firsts));
            }
        }
        let mut images = Vec::new();
        let kept: Vec<(Card, Card)> = sieved
            .into_iter()
            .filter(|&j| {
                images.clear();
                images.extend(seeds.iter().map(|&c| all.apply(c, j)));
                images.sort_unstable();
                images == seeds
            })
            .map(|j| all.pairs[j])
            .take(MAX_TRADES)
            .collect();
        Trades::with_firsts(frame, kept, seeds)
    }

    /// Whether trade `j` takes each of the codes `some` to one of `seeds` (sorted, each once).
    fn keeps<'a>(
        &self,
        j: usize,
        some: impl IntoIterator<Item = &'a u128>,
        seeds: &[u128],
    ) -> bool {
        let image_is_seed = |c: &u128| seeds.binary_search(&self.apply(*c, j)).is_ok();
        some.into_iter().all(image_is_seed)
    }

    /// The seeds among `seeds` (sorted, each once) of the orbits of the canonical positions `canon`:
    /// the members of those orbits found among the seeds, while they are fewer than the seeds (few
    /// orbits, the common case); otherwise the seeds whose canonical position is one of `canon`.
    fn seeds_of(&self, canon: &[u128], seeds: &[u128]) -> Vec<u128> {
        let (mut orbit, mut out, mut listed) = (Vec::new(), Vec::new(), 0);
        for &c in canon {
            self.orbit(c, &mut orbit);
            listed += orbit.len();
            if listed > seeds.len() {
                let in_canon = |s: &u128| canon.binary_search(&self.canonical(*s).0).is_ok();
                return seeds.iter().copied().filter(in_canon).collect();
            }
            let is_seed = |m: &u128| seeds.binary_search(m).is_ok();
            out.extend(orbit.iter().map(|m| m.0).filter(is_seed));
        }
        out
    }

    /// The trades `kept` (each keeps the seeds `seeds`) and the canonical positions among the seeds;
    /// `None` when none is kept.
    fn with_firsts(frame: &Frame, kept: Vec<(Card, Card)>, seeds: &[u128]) -> Option<Kept> {
        if kept.is_empty() {
            return None;
        }
        let trades = Trades::new(frame, kept);
        let firsts = seeds.iter().copied();
        let firsts = firsts.filter(|&c| trades.canonical(c).0 == c).collect();
        Some((trades, firsts))
    }

    /// The canonical positions of the orbits of the codes `seeds` (each once), sorted, when the trades
    /// take the seeds onto themselves; otherwise those of the orbits short of seeds. The trades take
    /// the seeds onto themselves when as many seeds have each canonical position as its orbit has
    /// positions: the seeds of an orbit are at most its positions, and as many only when they are all
    /// of them.
    fn orbits(&self, seeds: &[u128]) -> Result<Vec<u128>, Vec<u128>> {
        let mut canon: Vec<u128> = seeds.iter().map(|&c| self.canonical(c).0).collect();
        canon.sort_unstable();
        let mut orbit = Vec::new();
        let mut short = Vec::new();
        for run in canon.chunk_by(|a, b| a == b) {
            self.orbit(run[0], &mut orbit);
            if orbit.len() != run.len() {
                short.push(run[0]);
            }
        }
        if !short.is_empty() {
            return Err(short);
        }
        canon.dedup();
        canon.shrink_to_fit();
        Ok(canon)
    }

    /// `code` with trade `j` made: the two fields swapped, and the parents of the cards one rank lower.
    #[inline(always)]
    fn apply(&self, code: u128, j: usize) -> u128 {
        let b = self.bits[j];
        let differ = ((code >> b.shift) ^ code) & b.low;
        code ^ differ ^ differ << b.shift ^ (code & b.lower_high) >> 1
    }

    /// The canonical position of the orbit of `code` (the same for every position of the orbit) and
    /// the trades that lead to it (a mask): the trades are taken from the kings down. A trade at rank
    /// r moves only its two cards and the parents of the cards of rank r - 1, so once the higher ranks
    /// are settled, x and y lie where they lie in every position of the orbit that agrees above, or
    /// each where the other lies: the trade is made when it puts x on the lower place. When both lie
    /// in cells, nothing lies on them and the trade changes nothing. When both lie at the bottom of
    /// columns it changes only the parents of the cards on them: both ways are followed down, and the
    /// least code taken.
    #[inline]
    pub(super) fn canonical(&self, code: u128) -> (u128, u32) {
        self.canonical_from(code, 0, 0)
    }

    fn canonical_from(&self, mut code: u128, mut mask: u32, from: usize) -> (u128, u32) {
        for j in from..self.bits.len() {
            let b = self.bits[j];
            if b.x_above_y(code) {
                code = self.apply(code, j);
                mask ^= 1 << j;
            } else if code & b.both == b.at_bottom {
                let image = self.apply(code, j);
                if image == code {
                    // Nothing lies on either card.
                    continue;
                }
                let kept = self.canonical_from(code, mask, j + 1);
                let made = self.canonical_from(image, mask ^ 1 << j, j + 1);
                return if made.0 < kept.0 { made } else { kept };
            }
        }
        (code, mask)
    }

    /// The positions of the orbit of `code` into `out`, each once with the trades that lead to it from
    /// `code` (a mask), `code` first. The trades commute and are their own inverses, so a trade takes
    /// the orbit of the trades before it onto itself or onto positions all outside it: one look-up a
    /// trade, and the orbit doubles or stays.
    pub(super) fn orbit(&self, code: u128, out: &mut Vec<(u128, u32)>) {
        out.clear();
        out.push((code, 0));
        for j in 0..self.bits.len() {
            let image = self.apply(code, j);
            if out.iter().any(|m| m.0 == image) {
                continue;
            }
            for i in 0..out.len() {
                let (c, m) = out[i];
                out.push((self.apply(c, j), m | 1 << j));
            }
        }
    }

    /// The image of card `c` under the trades of `mask` ([`NO`] stays [`NO`]).
    #[inline]
    pub(super) fn map_card(&self, c: u8, mask: u32) -> u8 {
        if c == NO {
            return c;
        }
        for (j, &(x, y)) in self.pairs.iter().enumerate() {
            if mask >> j & 1 == 1 {
                if c == x {
                    return y;
                }
                if c == y {
                    return x;
                }
            }
        }
        c
    }

    /// The image of `key` under the trades of `mask`.
    #[inline]
    pub(super) fn map_key(&self, key: &Key, mask: u32) -> Key {
        let mut k = *key;
        for (j, &(x, y)) in self.pairs.iter().enumerate() {
            if mask >> j & 1 == 1 {
                k = swap(&k, x, y);
            }
        }
        k
    }

    /// The trades of `mask` as the bits of a seed's record ([`pair_of_bit`]).
    pub(super) fn sent(&self, mask: u32) -> u32 {
        let each = self.pairs.iter().enumerate();
        each.filter(|&(j, _)| mask >> j & 1 == 1)
            .fold(0, |m, (_, &(x, _))| m | 1 << bit_of_pair(x))
    }

    /// The trades (a mask) under which the image of `child`, a position one move from the group, is
    /// not known to be the child of the image ([`alike`]).
    pub(super) fn blocked(&self, child: &Key) -> u32 {
        let found = foundations(child);
        let mut mask = 0;
        for (j, &(x, y)) in self.pairs.iter().enumerate() {
            if !alike(&self.found, &found, x, y) {
                mask |= 1 << j;
            }
        }
        mask
    }

    /// The pairs as a checkpoint saves them: `x.y` joined by `,`.
    pub(super) fn text(pairs: &[(Card, Card)]) -> String {
        let each: Vec<String> = pairs.iter().map(|(x, y)| format!("{x}.{y}")).collect();
        each.join(",")
    }

    /// The pairs of [`Trades::text`].
    pub(super) fn parse(text: &str) -> Option<Vec<(Card, Card)>> {
        text.split(',')
            .map(|p| {
                let (x, y) = p.split_once('.')?;
                let (x, y) = (x.parse::<Card>().ok()?, y.parse::<Card>().ok()?);
                (x < 52 && y < 52).then_some((x, y))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::position::Position;

    /// Deal 9544 with 2 cells: of the groups with three trades or more, the one with the most positions
    /// where two cards of a trade both lie at the bottom of columns (a tie of [`Trades::canonical`]),
    /// and its positions' codes.
    fn group() -> (Frame, Trades, Vec<u128>) {
        let layout = Layout::deal(9544).unwrap();
        let (mut p, _) = Position::from_layout(&layout, 2).unwrap();
        p.settle(None);
        let rules = Rules::new(&layout, 2);
        let mut all = vec![*p.key()];
        let mut seen = std::collections::HashSet::from([*p.key()]);
        let mut i = 0;
        while i < all.len() {
            rules.for_each_child(&rules.decode(&all[i]), |q| {
                if seen.insert(*q.key()) {
                    all.push(*q.key());
                }
            });
            i += 1;
        }
        let mut groups: std::collections::HashMap<_, Vec<Key>> = Default::default();
        for k in all {
            groups.entry(crate::key::signature(&k)).or_default().push(k);
        }
        let ties = |keys: &Vec<Key>| {
            let pairs = candidates(&rules, &keys[0]);
            let at_bottom = |k: &Key, c| loc_of(k, c) == crate::key::LOC_BOTTOM;
            let tie = |k: &Key| {
                pairs
                    .iter()
                    .any(|&(x, y)| at_bottom(k, x) && at_bottom(k, y))
            };
            keys.iter().filter(|k| tie(k)).count()
        };
        let keys = groups
            .into_values()
            .filter(|g| candidates(&rules, &g[0]).len() >= 3)
            .max_by_key(ties)
            .expect("a group with three trades");
        assert!(ties(&keys) > 0, "no tie");
        let frame = Frame::of(&keys[0]);
        let trades = Trades::new(&frame, candidates(&rules, &keys[0]));
        let codes = keys.iter().map(|k| frame.encode(k)).collect();
        (frame, trades, codes)
    }

    /// Every image of a code under the trades, by brute force over the masks.
    fn images(t: &Trades, code: u128) -> Vec<(u128, u32)> {
        (0..1u32 << t.pairs.len())
            .map(|mask| {
                let c = (0..t.pairs.len())
                    .filter(|j| mask >> j & 1 == 1)
                    .fold(code, |c, j| t.apply(c, j));
                (c, mask)
            })
            .collect()
    }

    /// The orbit lists each image once; every image has the same canonical position, which is in the
    /// orbit; the code maps agree with the key maps; each trade is its own inverse.
    #[test]
    fn orbits_and_canonical_positions_agree_with_every_image() {
        let (frame, t, codes) = group();
        assert!(t.pairs.len() >= 3);
        let mut orbit = Vec::new();
        let mut sizes = std::collections::BTreeSet::new();
        for &code in &codes {
            let all = images(&t, code);
            let mut distinct: Vec<u128> = all.iter().map(|i| i.0).collect();
            distinct.sort_unstable();
            distinct.dedup();
            t.orbit(code, &mut orbit);
            let mut listed: Vec<u128> = orbit.iter().map(|m| m.0).collect();
            listed.sort_unstable();
            assert_eq!(listed, distinct, "the orbit of {code:#x}");
            sizes.insert(orbit.len());
            let (canon, mask) = t.canonical(code);
            assert!(distinct.binary_search(&canon).is_ok());
            for &(image, m) in &orbit {
                assert_eq!(t.canonical(image).0, canon);
                let key = frame.decode(code);
                assert_eq!(frame.decode(image), t.map_key(&key, m));
                for c in 0..52u8 {
                    assert_eq!(t.map_card(t.map_card(c, m), m), c);
                }
            }
            assert_eq!(frame.decode(canon), t.map_key(&frame.decode(code), mask));
            for j in 0..t.pairs.len() {
                assert_eq!(t.apply(t.apply(code, j), j), code);
            }
        }
        assert!(sizes.len() > 1 && sizes.iter().any(|&s| s > 2), "{sizes:?}");
    }

    /// [`Trades::keep`] keeps the trades whose images of all the seeds are seeds (the highest
    /// [`MAX_TRADES`]) and gives the canonical seeds, as the comparison of each trade's images does:
    /// for seeds closed under every trade, under all but one, and under all but one but for a few
    /// seeds that the first sample passes over.
    #[test]
    fn kept_trades_are_those_whose_images_are_seeds() {
        let (frame, t, codes) = group();
        let rules = Rules::new(&Layout::deal(9544).unwrap(), 2);
        let by_comparison = |seeds: &[u128]| -> Option<Kept> {
            let all = Trades::new(&frame, candidates(&rules, &frame.decode(seeds[0])));
            let kept: Vec<(Card, Card)> = (0..all.pairs.len())
                .filter(|&j| {
                    let mut images: Vec<u128> = seeds.iter().map(|&c| all.apply(c, j)).collect();
                    images.sort_unstable();
                    images == seeds
                })
                .map(|j| all.pairs[j])
                .take(MAX_TRADES)
                .collect();
            let trades = Trades::new(&frame, kept);
            let firsts = seeds.iter().copied();
            let firsts = firsts.filter(|&c| trades.canonical(c).0 == c).collect();
            (!trades.pairs.is_empty()).then_some((trades, firsts))
        };
        // The seeds of the orbits of `of` under every trade but `but`, sorted, each once.
        let orbits = |of: &mut dyn Iterator<Item = u128>, but: Option<usize>| {
            let pairs = (0..t.pairs.len()).filter(|&i| Some(i) != but);
            let part = Trades::new(&frame, pairs.map(|i| t.pairs[i]).collect());
            let (mut seeds, mut orbit) = (vec![], vec![]);
            for code in of {
                part.orbit(code, &mut orbit);
                seeds.extend(orbit.iter().map(|m| m.0));
            }
            seeds.sort_unstable();
            seeds.dedup();
            seeds
        };
        let mut sets = vec![
            orbits(&mut codes.iter().copied(), None),
            orbits(&mut codes.iter().copied().step_by(3), Some(0)),
        ];
        // Whole orbits of some codes, and the orbit of one more under all trades but the first,
        // whose seeds that the first trade takes out of the set the first sample passes over.
        let some = orbits(&mut codes.iter().copied().step_by(8), None);
        let missed = codes.iter().find_map(|&c| {
            let mut seeds = some.clone();
            seeds.extend(orbits(&mut std::iter::once(c), Some(0)));
            seeds.sort_unstable();
            seeds.dedup();
            let out = |s: &u128| seeds.binary_search(&t.apply(*s, 0)).is_err();
            let step = (seeds.len() / 256).max(1);
            (seeds.iter().any(out) && !seeds.iter().step_by(step).any(out)).then_some(seeds)
        });
        sets.push(missed.expect("seeds the first sample passes over"));
        let mut outcomes = std::collections::BTreeSet::new();
        for seeds in &sets {
            let got = Trades::keep(&rules, &frame, seeds);
            let want = by_comparison(seeds);
            outcomes.insert(want.as_ref().map(|k| k.0.pairs.len()));
            assert_eq!(
                got.as_ref().map(|k| &k.0.pairs),
                want.as_ref().map(|k| &k.0.pairs)
            );
            assert_eq!(got.map(|k| k.1), want.map(|k| k.1));
        }
        assert!(outcomes.len() > 1, "{outcomes:?}");
    }

    /// The seeds of some orbits are those whose canonical positions are the orbits': found by listing
    /// a few orbits, and among all the seeds when the orbits hold more positions than there are seeds.
    #[test]
    fn the_seeds_of_orbits_are_those_of_their_canonical_positions() {
        let (_, t, codes) = group();
        let sorted = |mut v: Vec<u128>| {
            v.sort_unstable();
            v.dedup();
            v
        };
        let canon = sorted(codes.iter().map(|&c| t.canonical(c).0).collect());
        let cases = [
            (
                sorted(codes.clone()),
                canon.iter().copied().step_by(50).collect(),
            ),
            (
                sorted(codes.iter().copied().step_by(2).collect()),
                canon.clone(),
            ),
        ];
        for (seeds, some) in cases {
            let of_some = |c: &u128| some.binary_search(&t.canonical(*c).0).is_ok();
            let want: Vec<u128> = seeds.iter().copied().filter(of_some).collect();
            assert!(!want.is_empty());
            assert_eq!(sorted(t.seeds_of(&some, &seeds)), want);
        }
    }

    /// The orbits of some positions, whole, are closed under the trades, and give their canonical
    /// positions; less one position, they are not.
    #[test]
    fn seeds_are_closed_when_their_orbits_are_whole() {
        let (_, t, codes) = group();
        let (mut seeds, mut canon, mut orbit) = (vec![], vec![], vec![]);
        for &code in codes.iter().step_by(7).take(200) {
            t.orbit(code, &mut orbit);
            seeds.extend(orbit.iter().map(|m| m.0));
            canon.push(t.canonical(code).0);
        }
        for v in [&mut seeds, &mut canon] {
            v.sort_unstable();
            v.dedup();
        }
        assert!(seeds.len() > canon.len());
        assert_eq!(t.orbits(&seeds).ok(), Some(canon.clone()));
        let lone = seeds.iter().position(|c| canon.binary_search(c).is_err());
        seeds.remove(lone.expect("a position not canonical"));
        assert_eq!(t.orbits(&seeds).ok(), None);
    }

    /// The images of a record with trades ([`images`]) are the images of its seed under every product
    /// of the trades (each once), each with its parent's image under the same product (one of them
    /// when several give that image): what the positions of an orbit sent one by one.
    #[test]
    fn the_images_of_a_record_are_those_of_every_product_of_its_trades() {
        let (frame, t, codes) = group();
        let every = (1u32 << t.pairs.len()) - 1;
        let mut out = Vec::new();
        let mut sizes = std::collections::BTreeSet::new();
        for (i, &code) in codes.iter().enumerate().step_by(13).take(300) {
            let key = frame.decode(code);
            let parent = frame.decode(codes[(i * 7 + 1) % codes.len()]);
            for mask in [every, every & 0b101, 1] {
                super::images(&key, Some(&parent), t.sent(mask), &mut out);
                assert_eq!(out[0], (key, Some(parent)));
                let mut want: Vec<Key> = (0..=mask)
                    .filter(|s| s & !mask == 0)
                    .map(|s| t.map_key(&key, s))
                    .collect();
                want.sort_unstable();
                want.dedup();
                let mut got: Vec<Key> = out.iter().map(|o| o.0).collect();
                got.sort_unstable();
                assert_eq!(got, want, "{code:#x} under {mask:#b}");
                for (k, p) in &out {
                    let by = |s: u32| t.map_key(&key, s) == *k && *p == Some(t.map_key(&parent, s));
                    let products = (0..=mask).filter(|s| s & !mask == 0);
                    assert!(products.clone().any(by), "{code:#x} under {mask:#b}");
                }
                sizes.insert(out.len());
            }
        }
        assert!(sizes.iter().any(|&s| s > 2), "{sizes:?}");
    }

    /// The trades a checkpoint lists read back; a torn list does not.
    #[test]
    fn trades_read_back_from_their_text() {
        let pairs = vec![(12u8, 51u8), (0, 39)];
        assert_eq!(Trades::parse(&Trades::text(&pairs)), Some(pairs));
        for torn in ["", "12.", "12.51,", "x.3", "12.52"] {
            assert_eq!(Trades::parse(torn), None, "{torn}");
        }
    }
}
