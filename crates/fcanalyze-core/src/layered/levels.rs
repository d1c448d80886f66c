//! The search of a group by levels ([`search_by_levels`]), breadth first with its levels on disk as
//! sorted files of codes ([`Level`]): for the groups whose set does not fit in memory. The threads of
//! the layer that find no group left to claim ([`Idle`]) join it at its next level: each expands a
//! share of the level, then each merges a range of codes into a part of the next.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;
use crate::key::Key;
use crate::layer::progress;
use crate::outcome::Budget;

use super::checkpoint::{Finished, LevelState};
use super::code::{tag, untag, untagged, Frame};
use super::context::{lock_idle, Check, Cx, GroupEnd};
use super::level::{
    sort_dedup, split_points, Level, Levels, Out, Part, Sample, Stopped, OUT_EVERY,
};
use super::seeds::{lock, SeedBuf};
use super::table::Table;
use super::trades::{Kept, Trades};
use super::twin::{seeds_match, Twin};
use crate::error::Error;
use crate::prover::NO;

/// Tests: the codes expanded by groups searched by orbits, the positions they counted, the records
/// with trades they sent, and the seeds those records stand for, in the whole process.
#[cfg(test)]
pub(super) static BY_ORBITS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
/// Tests: the levels expanded and merged by more than one thread, in the whole process.
#[cfg(test)]
pub(super) static SHARED_LEVELS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
/// Tests: the first levels merged by more than one thread, in the whole process.
#[cfg(test)]
pub(super) static SHARED_FIRSTS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
/// Tests: the threads that joined a layer after its start, in the whole process.
#[cfg(test)]
pub(super) static JOINED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Tests: the followers counted by their owners' searches, in the whole process.
#[cfg(test)]
pub(super) static TWINS_REPLAYED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Search a group breadth first from its seeds (`seeds`, the rest given by `more`), level by level: the
/// positions one move from level `t` lie in levels `t - 1`, `t` and `t + 1`, because every move within a
/// group can be undone by a move within the group (no card goes home or leaves its dealt card there; a
/// card or run goes back where it came from, the free cells and empty columns allowing as many cards back
/// as forth). So level `t + 1` is what level `t` reaches, less levels `t` and `t - 1`, and the group's
/// count is the sum of its levels. The levels live on disk as sorted files ([`Level`]): level `t` is read
/// in order, the codes it reaches are sorted in chunks of [`Cx::level_chunk`] and written as runs, and
/// the runs are merged into level `t + 1`, less the codes of levels `t` and `t - 1`, read alongside. So
/// the memory holds one chunk (a thread) whatever the size of the group, and the disk three levels and
/// the runs. Slower than the set, for the groups the set does not hold in memory.
pub(super) fn search_by_levels(
    cx: &mut Cx,
    (group, sig): (u64, [u64; 6]),
    frame: &Frame,
    (mut chunk, known): (Vec<u128>, Option<Kept>),
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let levels = files_of(cx);
    let max_chunk = cx.level_chunk.max(1);
    let none = Level::default();
    // A group whose seeds trades keep is searched by orbits, and its follower on its own: both then
    // search a fraction of their positions, where the owner of a twin searches all of its own.
    let (cur, trades) = match known {
        // The check in the group's set read every seed and gave the canonical positions of their
        // orbits: they are the first level, and the seeds taken need not be written.
        Some((trades, firsts)) => {
            debug_assert!(more()?.is_none(), "seeds left after the check");
            if levels.disk_low(firsts.len()) {
                return Ok(GroupEnd::Out(Budget::Disk));
            }
            chunk = Vec::new();
            (orbits_level(&levels, firsts)?, Some(trades))
        }
        None => {
            // The seeds taken so far, then the others, searched from with every run moved.
            for c in chunk.iter_mut() {
                *c = tag(*c, NO);
            }
            let found = Found::from(cx, 1.0);
            let out = out_of(cx, &levels, &found);
            let mut next =
                || -> Result<Option<u128>> { Ok(more()?.map(|seed| tag(frame.encode(&seed), NO))) };
            let seeds = seed_runs(&levels, &mut chunk, &mut next, max_chunk, &out)?;
            let (runs, samples) = match seeds {
                Ok(seeds) => seeds,
                Err(b) => return Ok(GroupEnd::Out(found.ended(cx, b))),
            };
            let first = first_level(cx, &levels, (&runs, samples), &chunk, &out);
            levels.remove(runs);
            chunk.clear();
            let cur = match first? {
                Ok(cur) => cur,
                Err(b) => return Ok(GroupEnd::Out(found.ended(cx, b))),
            };
            match cx.trades {
                true => with_trades(cx, frame, &levels, cur, max_chunk)?,
                false => (cur, None),
            }
        }
    };
    // Otherwise the group's follower is expanded along with it when its seeds are the images of the
    // group's (read into memory in place of the chunk).
    let twin = match cx.twin.take() {
        Some(t) if trades.is_some() => {
            cx.twins.decide(&t, false);
            None
        }
        Some(t) => {
            chunk = Vec::new();
            let mut codes = cur.read_range(0, cur.len());
            let mut owner =
                std::iter::from_fn(|| codes.next_code().map(|c| c.map(|x| untag(x).0)).transpose());
            let encode = |k: &Key| frame.encode(k);
            let taken = seeds_match(cx.layer_file, &t, &sig, encode, &mut owner, max_chunk)?;
            cx.twins.decide(&t, taken);
            taken.then_some(t)
        }
        None => None,
    };
    let searched = (twin, trades);
    by_levels(cx, group, sig, frame, levels, chunk, cur, none, 0, searched)
}

/// The trades of the group of `frame` that keep its seeds (`cur`, its first level) and the first level
/// cut to the canonical positions of their orbits ([`Trades`]), or the level as it was when no trade
/// keeps them, or when they do not fit in a chunk.
fn with_trades(
    cx: &Cx,
    frame: &Frame,
    levels: &Levels,
    cur: Level,
    max_chunk: usize,
) -> Result<(Level, Option<Trades>)> {
    if cur.len() > max_chunk {
        return Ok((cur, None));
    }
    let mut seeds = Vec::with_capacity(cur.len());
    let mut read = cur.read_range(0, cur.len());
    while let Some(t) = read.next_code()? {
        seeds.push(untag(t).0);
    }
    let Some((trades, firsts)) = Trades::keep(cx.rules, frame, &seeds) else {
        return Ok((cur, None));
    };
    levels.remove(cur.parts);
    Ok((orbits_level(levels, firsts)?, Some(trades)))
}

/// The first level of a search by orbits: the canonical positions `firsts` (sorted, each once).
fn orbits_level(levels: &Levels, firsts: Vec<u128>) -> Result<Level> {
    let mut chunk: Vec<u128> = firsts.into_iter().map(|c| tag(c, NO)).collect();
    let part = levels.write_run(&mut chunk, &mut Vec::new())?;
    Ok(Level::of([part]))
}

/// The search by levels of a group from `state` (saved in a checkpoint within its layer), the group's
/// seeds given by `more` passed over (its levels hold them).
pub(super) fn resume_by_levels(
    cx: &mut Cx,
    state: LevelState,
    frame: &Frame,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    while more()?.is_some() {}
    let mut levels = files_of(cx);
    let level = |files: Vec<(String, u64)>| -> Result<Level> {
        let parts = files
            .into_iter()
            .map(|(name, len)| Part::open(levels.dir.join(name), len as usize));
        Ok(Level::of(parts.collect::<Result<Vec<Part>>>()?))
    };
    let (cur, prev) = (level(state.cur)?, level(state.prev)?);
    *levels.disk.get_mut() = cur.bytes() + prev.bytes();
    let total = state.total as usize;
    let trades = match state.trades.map(|pairs| Trades::of_saved(frame, pairs)) {
        Some(None) => {
            return Err(Error::Io(
                "a layered checkpoint lists trades of cards its group does not hold free".into(),
            ))
        }
        t => t.flatten(),
    };
    let twin = match (state.twin, cx.twin.take()) {
        (false, t) => {
            // Its follower is searched on its own.
            if let Some(t) = t {
                cx.twins.decide(&t, false);
            }
            None
        }
        (true, Some(t)) => {
            cx.twins.decide(&t, true);
            Some(t)
        }
        (true, None) => {
            return Err(Error::Io(
                "a layered checkpoint lists a twin group that its layer lacks".into(),
            ))
        }
    };
    by_levels(
        cx,
        state.group,
        state.sig,
        frame,
        levels,
        Vec::new(),
        cur,
        prev,
        total,
        (twin, trades),
    )
}

/// The level files of a group `cx`'s thread searches.
fn files_of(cx: &Cx) -> Levels {
    let s = lock(cx.spill);
    Levels {
        dir: s.dir.0.clone(),
        thread: cx.thread,
        made: AtomicU64::new(s.level_base),
        disk: AtomicU64::new(0),
        min_free: s.min_free,
    }
}

/// The levels of group `group` (signature `sig`) from `cur`, `prev` the level before it and `total` the
/// positions of the levels before `cur` ([`search_by_levels`]), each level with the threads idle at its
/// start, and the positions of its follower `twin` expanded along with its own (counted in
/// [`Cx::replayed`] at the end), or with `trades`, one position of each orbit held and the orbits
/// counted by their sizes ([`Trades`]). In a resumable search, the end of each level saves a checkpoint that
/// lists the two levels the next one starts from (their parts), and the end of the group one that lists
/// it finished (and its follower).
#[allow(clippy::too_many_arguments)]
pub(super) fn by_levels(
    cx: &mut Cx,
    group: u64,
    sig: [u64; 6],
    frame: &Frame,
    levels: Levels,
    mut chunk: Vec<u128>,
    mut cur: Level,
    mut prev: Level,
    mut total: usize,
    (twin, trades): (Option<Twin>, Option<Trades>),
) -> Result<GroupEnd> {
    while cur.len() > 0 {
        let mut crew = cx.idle.take(cx.seeds.flush_keys);
        let step = level(
            cx,
            &mut crew,
            frame,
            &levels,
            &mut chunk,
            (&cur, &prev),
            (total, twin.as_ref(), trades.as_ref()),
        );
        let next = match step {
            Ok(Ok((next, counted))) => {
                total += counted;
                next
            }
            Ok(Err(end)) => {
                lock_idle(cx.idle).append(&mut crew);
                return Ok(end);
            }
            Err(e) => {
                lock_idle(cx.idle).append(&mut crew);
                return Err(e);
            }
        };
        let old = std::mem::replace(&mut prev, std::mem::replace(&mut cur, next));
        // The level is done: a resumed search goes on from the next one (from its end, the seeds it
        // gave written first), or past the group when it was the last.
        if lock(cx.spill).layer_start.is_some() {
            let flushed = cx.seeds.flush(cx.spill).and_then(|()| {
                crew.iter_mut()
                    .try_for_each(|(_, seeds)| seeds.flush(cx.spill))
            });
            lock_idle(cx.idle).append(&mut crew);
            flushed?;
            let mut s = lock(cx.spill);
            s.by_levels.retain(|g| (g.group, g.sig) != (group, sig));
            if cur.len() > 0 {
                let names = |l: &Level| {
                    l.parts
                        .iter()
                        .map(|p| {
                            let name = p.path.file_name().expect("a file name");
                            (name.to_string_lossy().into_owned(), p.len as u64)
                        })
                        .collect()
                };
                s.by_levels.push(LevelState {
                    group,
                    sig,
                    total: total as u64,
                    cur: names(&cur),
                    prev: names(&prev),
                    twin: twin.is_some(),
                    trades: trades.as_ref().map(|t| t.pairs.clone()),
                });
            } else {
                s.finished.push(Finished {
                    group,
                    sig,
                    len: total as u64,
                });
                if let Some(t) = &twin {
                    s.finished.push(Finished {
                        group: t.group,
                        sig: t.sig,
                        len: total as u64,
                    });
                }
            }
            s.save_within()?;
        }
        lock_idle(cx.idle).append(&mut crew);
        levels.remove(old.parts);
    }
    levels.remove(prev.parts);
    levels.remove(cur.parts);
    if twin.is_some() {
        cx.replayed = Some(total);
        #[cfg(test)]
        TWINS_REPLAYED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(GroupEnd::Done(total))
}

/// What a thread's share of a level gave: its sorted runs on disk, its last chunk sorted in memory, the
/// samples of both, the positions it expanded (with trades, the orbits' sizes), and the group's end if
/// it came.
struct Share {
    runs: Vec<Part>,
    chunk: Vec<u128>,
    samples: Vec<Sample>,
    positions: usize,
    end: Option<GroupEnd>,
}

/// Level `cur` (`prev` the one before, `total` the positions before `cur`, `twin` the follower
/// expanded along, `trades` those of a search by orbits) expanded and merged into the next level by
/// `cx`'s thread and the idle threads of `crew` (each with its seed buffers): each expands an equal
/// share of `cur`'s codes, then the codes reached are split into as many ranges (from samples of the
/// runs) and each thread merges one into a part. The next level and the positions of `cur`, or the
/// group's end.
fn level(
    cx: &mut Cx,
    crew: &mut [(usize, SeedBuf)],
    frame: &Frame,
    levels: &Levels,
    chunk: &mut Vec<u128>,
    (cur, prev): (&Level, &Level),
    searched: (usize, Option<&Twin>, Option<&Trades>),
) -> Result<std::result::Result<(Level, usize), GroupEnd>> {
    let n = 1 + crew.len();
    #[cfg(test)]
    if n > 1 {
        SHARED_LEVELS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let len = cur.len();
    let range = |w: usize| (len * w / n, len * (w + 1) / n);
    let mut helpers: Vec<Cx> = crew.iter_mut().map(|(t, s)| cx.helper(*t, s)).collect();
    // The owner's peaks in this level, added to its helpers'.
    let before = (cx.res.peak_bytes, cx.res.peak_parts);
    cx.res.peak_bytes = 0;
    let mine = std::mem::take(chunk);
    let (mine, theirs) = std::thread::scope(|scope| {
        let running: Vec<_> = helpers
            .iter_mut()
            .enumerate()
            .map(|(i, h)| {
                let r = (range(i + 1), false);
                scope.spawn(move || expand(h, frame, levels, cur, r, searched, Vec::new()))
            })
            .collect();
        let mine = expand(cx, frame, levels, cur, (range(0), true), searched, mine);
        let theirs: Vec<_> = running
            .into_iter()
            .map(|h| h.join().expect("a thread of the layered proof panicked"))
            .collect();
        (mine, theirs)
    });
    let mut parts = cx.res.peak_parts;
    let mut bytes = cx.res.peak_bytes;
    for h in &mut helpers {
        // The level's positions are the group's now, told by its owner.
        h.tell(0);
        // A helper's check may have ended the level at the budget, its count past the owner's.
        cx.res.positions = cx.res.positions.max(h.res.positions);
        cx.expanded += h.expanded;
        cx.res.peak_disk = cx.res.peak_disk.max(h.res.peak_disk);
        bytes += h.res.peak_bytes;
        for (p, q) in parts.iter_mut().zip(h.res.peak_parts) {
            *p += q;
        }
    }
    (cx.res.peak_bytes, cx.res.peak_parts) = if bytes > before.0 {
        (bytes, parts)
    } else {
        before
    };
    drop(helpers);
    let mut shares = vec![mine?];
    for s in theirs {
        shares.push(s?);
    }
    // A win comes first, then a budget, then a stop.
    let rank = |e: &GroupEnd| match e {
        GroupEnd::Won { .. } => 0,
        GroupEnd::Out(_) => 1,
        _ => 2,
    };
    if let Some(end) = shares
        .iter_mut()
        .filter_map(|s| s.end.take())
        .min_by_key(rank)
    {
        return Ok(Err(end));
    }
    let runs: Vec<Part> = shares.iter_mut().flat_map(|s| s.runs.drain(..)).collect();
    let samples = shares
        .iter_mut()
        .flat_map(|s| s.samples.drain(..))
        .collect();
    let chunks: Vec<&[u128]> = shares.iter().map(|s| s.chunk.as_slice()).collect();
    let inputs = (runs.as_slice(), chunks.as_slice());
    let positions = shares.iter().map(|s| s.positions).sum();
    let found = Found::from(cx, positions as f64 / len.max(1) as f64);
    let next = merge_by_ranges(
        levels,
        inputs,
        (cur, prev),
        samples,
        n,
        &out_of(cx, levels, &found),
    );
    levels.remove(runs);
    *chunk = std::mem::take(&mut shares[0].chunk);
    chunk.clear();
    let next = match next? {
        Ok(next) => next,
        Err(b) => return Ok(Err(GroupEnd::Out(found.ended(cx, b)))),
    };
    Ok(Ok((next, positions)))
}

/// The first level of a group as sorted runs: the codes of `chunk` (the seeds taken so far) and those
/// `next` gives (the rest), sorted in chunks of `max_chunk`, the full chunks written as runs and the
/// last left sorted in `chunk`. The budget `out` names, the runs removed and `chunk` cleared, when it
/// names one (asked every [`OUT_EVERY`] codes: a giant group's seeds take many minutes to read,
/// 384243's largest group of layer 52 with 2 cells 1.9 billion of them, and a stop asked meanwhile
/// must not wait for them), or the disk when a run would leave too little of it free. With the runs,
/// the samples of the runs and the chunk.
fn seed_runs(
    levels: &Levels,
    chunk: &mut Vec<u128>,
    next: &mut dyn FnMut() -> Result<Option<u128>>,
    max_chunk: usize,
    out: &Out<'_>,
) -> Result<Stopped<(Vec<Part>, Vec<Sample>)>> {
    let mut runs = Vec::new();
    let mut samples = Vec::new();
    let mut read = 0u64;
    while let Some(code) = next()? {
        let mut stop = (read % OUT_EVERY == 0).then(|| out(0)).flatten();
        if stop.is_none() {
            read += 1;
            push_code(chunk, code, max_chunk);
            if chunk.len() >= max_chunk {
                stop = levels.disk_low(chunk.len()).then_some(Budget::Disk);
            }
        }
        if let Some(b) = stop {
            levels.remove(runs);
            chunk.clear();
            return Ok(Err(b));
        }
        if chunk.len() >= max_chunk {
            runs.push(levels.write_run(chunk, &mut samples)?);
        }
    }
    sort_dedup(chunk, &mut samples);
    Ok(Ok((runs, samples)))
}

/// A group's first level: its seeds' `runs` and last `chunk` ([`seed_runs`]) merged, each code once,
/// by `cx`'s thread and the threads idle now, each a range of codes (split by the `samples`) into a
/// part, as the levels after it are. The budget `out` names, no part left, when it names one.
fn first_level(
    cx: &Cx,
    levels: &Levels,
    (runs, samples): (&[Part], Vec<Sample>),
    chunk: &[u128],
    out: &Out<'_>,
) -> Result<Stopped<Level>> {
    let mut crew = cx.idle.take(cx.seeds.flush_keys);
    let n = 1 + crew.len();
    #[cfg(test)]
    if n > 1 {
        SHARED_FIRSTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let none = Level::default();
    let first = merge_by_ranges(levels, (runs, &[chunk]), (&none, &none), samples, n, out);
    lock_idle(cx.idle).append(&mut crew);
    first
}

/// The codes of `inputs` (sorted runs and sorted chunks), each once, less those of `cur` and `prev`,
/// merged into a level by `n` threads (this one and `n - 1` more), each a range of codes split by the
/// `samples` of the inputs into a part ([`Levels::merge_range`]). The budget `out` names, no part left,
/// when it names one; on an error, no part left either.
fn merge_by_ranges(
    levels: &Levels,
    inputs: (&[Part], &[&[u128]]),
    (cur, prev): (&Level, &Level),
    samples: Vec<Sample>,
    n: usize,
    out: &Out<'_>,
) -> Result<Stopped<Level>> {
    let points = split_points(samples, n);
    let bound = |j: usize| (j.checked_sub(1).map(|k| points[k]), points.get(j).copied());
    let merged: Vec<Result<Stopped<Part>>> = std::thread::scope(|scope| {
        let running: Vec<_> = (1..n)
            .map(|j| scope.spawn(move || levels.merge_range(inputs, cur, prev, bound(j), out)))
            .collect();
        let mut merged = vec![levels.merge_range(inputs, cur, prev, bound(0), out)];
        merged.extend(
            running
                .into_iter()
                .map(|h| h.join().expect("a thread of the layered proof panicked")),
        );
        merged
    });
    let mut parts = Vec::with_capacity(n);
    let mut stopped = None;
    let mut failed = None;
    for m in merged {
        match m {
            Ok(Ok(p)) => parts.push(p),
            Ok(Err(b)) => stopped = stopped.or(Some(b)),
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    if let Some(e) = failed {
        levels.remove(parts);
        return Err(e);
    }
    if let Some(b) = stopped {
        levels.remove(parts);
        return Ok(Err(b));
    }
    Ok(Ok(Level::of(parts)))
}

/// The positions of a search by levels as its merge into the next level goes ([`out_of`]): every
/// thread's when the merge began, and the new codes the merge has written since, each standing for
/// `per_code` positions (by orbits, a code stands for its orbit, of a size known only once it is
/// expanded: the mean of the level just expanded; 1 otherwise).
struct Found {
    base: u64,
    per_code: f64,
    merged: AtomicU64,
}

impl Found {
    /// From the positions of `cx`'s search now (its own in the group as last told, with the level
    /// just expanded), each code of the next level standing for `per_code` positions.
    fn from(cx: &Cx, per_code: f64) -> Found {
        Found {
            base: cx.positions_now(),
            per_code: per_code.max(1.0),
            merged: AtomicU64::new(0),
        }
    }

    /// The positions so far as the budget weighs them, `new` more codes written.
    fn add(&self, new: u64) -> u64 {
        let merged = self.merged.fetch_add(new, Ordering::Relaxed) + new;
        self.base + (merged as f64 * self.per_code) as u64
    }

    /// A budget `b` the merge ran out of: when it is the positions', `cx`'s count is brought to the
    /// positions found, a code each (by orbits, fewer than the budget weighed: an orbit not expanded
    /// is not counted whole).
    fn ended(&self, cx: &mut Cx, b: Budget) -> Budget {
        if b == Budget::Positions {
            let found = self.base + self.merged.load(Ordering::Relaxed);
            cx.res.positions = cx.res.positions.max(found);
        }
        b
    }
}

/// What the seeds' reading and the merges of a group's levels (which may run on other threads) ask as
/// they go ([`Out`]): whether the positions `found` so far reach `cx`'s budget (the new codes of a
/// merge are positions found: a level of a giant group holds billions of them, and a budget checked
/// only as levels are expanded let deal 569017 with 1 cell end 1.2 billion positions past its 5
/// billion, the disk of that level written first), whether the search is out of time or asked to stop
/// from outside ([`crate::interrupt`]), then whether the disk of `levels` has less free than the
/// search must leave. The disk is asked as the files grow, not from the size of a merge's inputs: a
/// merge writes at most the codes it reads, most often far fewer (the copies of a code once, less the
/// levels before), and a compressing file system stores them in less.
fn out_of<'a>(
    cx: &Cx,
    levels: &'a Levels,
    found: &'a Found,
) -> impl Fn(u64) -> Option<Budget> + Sync + 'a {
    let (limits, start) = (cx.limits, cx.start);
    move |new| {
        if found.add(new) >= limits.max_positions {
            Some(Budget::Positions)
        } else if limits.out_of_time(start) {
            Some(Budget::Time)
        } else if levels.disk_low(0) {
            Some(Budget::Disk)
        } else {
            None
        }
    }
}

/// Codes `from..to` of `cur` expanded by `cx`'s thread (`owner`: the thread whose group it is; `total`
/// the group's positions before `cur`):
/// the children in the layer coded into `chunk`, written as sorted runs when it is full, the others to
/// the thread's seeds of their layers. With a follower `twin`, each code's image in it is expanded too,
/// for its children in later layers only (those in the layer are the images of the code's own). With
/// `trades`, each code is the canonical position of an orbit ([`expand_orbit`]).
fn expand(
    cx: &mut Cx,
    frame: &Frame,
    levels: &Levels,
    cur: &Level,
    ((from, to), owner): ((usize, usize), bool),
    (total, twin, trades): (usize, Option<&Twin>, Option<&Trades>),
    mut chunk: Vec<u128>,
) -> Result<Share> {
    let max_chunk = cx.level_chunk.max(1);
    let mut share = Share {
        runs: Vec::new(),
        chunk: Vec::new(),
        samples: Vec::new(),
        positions: 0,
        end: None,
    };
    let mut read = cur.read_range(from, to);
    let mut left = to - from;
    let mut counted = 0usize;
    let (mut orbit, mut leaving) = (Vec::new(), Vec::new());
    let mut recent = Recent::new();
    share.end = loop {
        let Some(tagged) = read.next_code()? else {
            break None;
        };
        left -= 1;
        // The group's positions so far, as far as this thread knows: the level's codes, and the
        // orbits counted past them.
        let seen = total + cur.len() + (share.positions - counted);
        let (code, moved) = untag(tagged);
        let key = frame.decode(code);
        let kept = match trades {
            None => {
                share.positions += 1;
                let within =
                    |k: &Key, m| recent.push(&mut chunk, tag(frame.encode(k), m), max_chunk);
                expand_one(cx, &key, moved, seen, within, None)?
            }
            Some(t) => {
                let scratch = (&mut orbit, &mut leaving);
                let out = (&mut chunk, &mut recent);
                let e = expand_orbit(cx, frame, t, (&key, code, moved), seen, out, scratch)?;
                match e {
                    Ok(size) => {
                        #[cfg(test)]
                        {
                            BY_ORBITS[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            BY_ORBITS[1]
                                .fetch_add(size as u64, std::sync::atomic::Ordering::Relaxed);
                        }
                        share.positions += size;
                        cx.expanded += size as u64 - 1;
                        None
                    }
                    Err(end) => Some(end),
                }
            }
        };
        if let Some(end) = kept {
            break Some(end);
        }
        if let Some(t) = twin {
            // The children within the layer are the images of the code's own.
            let image = t.map_key(&key);
            let moved = t.map_card(moved);
            if let Some(end) = expand_one(cx, &image, moved, seen, |_, _| {}, None)? {
                break Some(end);
            }
            cx.expanded += 1;
        }
        if chunk.len() >= max_chunk {
            if levels.disk_low(chunk.len()) {
                break Some(GroupEnd::Out(Budget::Disk));
            }
            share
                .runs
                .push(levels.write_run(&mut chunk, &mut share.samples)?);
        }
        cx.expanded += 1;
        counted += 1;
        if counted & 4095 == 0 || left == 0 {
            let disk = lock(cx.spill).disk;
            cx.res.peak_disk = cx.res.peak_disk.max(disk + levels.disk());
            let held = chunk.capacity() * std::mem::size_of::<u128>();
            // The group's positions are told by its owner, the orbits past the codes of each share
            // by the thread that expands it.
            let own = if owner {
                seen
            } else {
                share.positions - counted
            };
            match cx.check((own as u64, seen), held, 0) {
                Check::Go => {}
                Check::OverMemory => break Some(GroupEnd::Out(Budget::Positions)),
                Check::Out(b) => break Some(GroupEnd::Out(b)),
                Check::Stopped => break Some(GroupEnd::Stopped),
            }
        }
    };
    if share.end.is_none() {
        sort_dedup(&mut chunk, &mut share.samples);
    }
    share.chunk = chunk;
    Ok(share)
}

/// The orbit of `code` under `trades` expanded, `code` its canonical position (the position of `key`,
/// leaving the run `moved` unmoved; `total` the group's positions so far): the position's children
/// within the group coded at their canonical positions into `chunk`, and its children in later layers
/// to `cx`'s seeds, each with the trades of the orbit ([`Trades::sent`]) whose images of it are the
/// children of the other positions of the orbit: one record stands for the children of every position
/// of the orbit whose trades are all known to map the children that leave ([`Trades::blocked`]). Each
/// other position is expanded itself, for its children in later layers. The orbit's size, or the
/// group's end when a position is sorted or a child is won. `scratch` holds the orbit and the
/// children that leave; `recent` drops the children just pushed again.
fn expand_orbit(
    cx: &mut Cx,
    frame: &Frame,
    trades: &Trades,
    (key, code, moved): (&Key, u128, u8),
    total: usize,
    (chunk, recent): (&mut Vec<u128>, &mut Recent),
    (orbit, leaving): (&mut Vec<(u128, u32)>, &mut Vec<Key>),
) -> Result<std::result::Result<usize, GroupEnd>> {
    let max_chunk = cx.level_chunk.max(1);
    leaving.clear();
    let within = |k: &Key, m| {
        let (c, mask) = trades.canonical(frame.encode(k));
        recent.push(chunk, tag(c, trades.map_card(m, mask)), max_chunk)
    };
    if let Some(end) = expand_one(cx, key, moved, total, within, Some(leaving))? {
        return Ok(Err(end));
    }
    trades.orbit(code, orbit);
    if leaving.is_empty() {
        // Nor do the other positions of the orbit have children in later layers.
        return Ok(Ok(orbit.len()));
    }
    // The positions of the orbit are the images of `key` under the products of the trades of
    // `every`: those of the trades of `mapped` have the images of its children that leave.
    let blocked = leaving.iter().fold(0, |b, k| b | trades.blocked(k));
    let every = orbit.iter().fold(0, |m, o| m | o.1);
    let mapped = trades.sent(every & !blocked);
    for k in leaving.iter() {
        cx.seeds.push(progress(k), k, Some(key), mapped, cx.spill)?;
    }
    #[cfg(test)]
    if mapped != 0 {
        use std::sync::atomic::Ordering::Relaxed;
        let members = orbit.iter().filter(|o| o.1 & blocked == 0).count();
        BY_ORBITS[2].fetch_add(leaving.len() as u64, Relaxed);
        BY_ORBITS[3].fetch_add((leaving.len() * members) as u64, Relaxed);
    }
    if blocked & every == 0 {
        return Ok(Ok(orbit.len()));
    }
    for &(image, mask) in &orbit[1..] {
        if mask & blocked == 0 {
            continue;
        }
        let member = frame.decode(image);
        debug_assert_eq!(member, trades.map_key(key, mask));
        let moved = trades.map_card(moved, mask);
        if let Some(end) = expand_one(cx, &member, moved, total, |_, _| {}, None)? {
            return Ok(Err(end));
        }
    }
    Ok(Ok(orbit.len()))
}

/// Expand the position of `key` (searched by levels, leaving the run `moved` unmoved): its children
/// in later layers go to `cx`'s seeds (to `leaving` instead, if given), those in the layer to `within`
/// with the run each may leave unmoved. The group's end when the position is sorted or a child is won.
#[inline(always)]
fn expand_one(
    cx: &mut Cx,
    key: &Key,
    moved: u8,
    total: usize,
    mut within: impl FnMut(&Key, u8),
    mut leaving: Option<&mut Vec<Key>>,
) -> Result<Option<GroupEnd>> {
    if cx.rules.is_sorted(key) {
        return Ok(Some(GroupEnd::Won {
            target: *key,
            tail: None,
            len: total,
        }));
    }
    let p = cx.rules.decode(key).with_moved(moved);
    cx.rules
        .children_moved(&p, &mut cx.kids, &mut cx.kids_moved);
    if let Some(cone) = &cx.cone {
        cone.keep(&mut cx.kids, &mut cx.kids_moved);
    }
    for (k, &m) in cx.kids.iter().zip(&cx.kids_moved) {
        if *k == [0; 3] {
            return Ok(Some(GroupEnd::Won {
                target: *key,
                tail: Some(*k),
                len: total,
            }));
        }
        let l = progress(k);
        if l > cx.layer {
            match leaving.as_deref_mut() {
                Some(v) => v.push(*k),
                None => cx.seeds.push(l, k, Some(key), 0, cx.spill)?,
            }
        } else {
            within(k, m);
        }
    }
    Ok(None)
}

/// Slots of [`Recent`]: 128 KiB, which stay in the core's caches. 2^18 slots caught more copies (deal
/// 58537 with 1 cell: 42% of the children against 37%) but each probe then read the chunk far back, and
/// the proof ran slower.
const RECENT_BITS: u32 = 14;

/// Where in a chunk the codes pushed last are, by the group table's hash of the code: a child pushed again soon after
/// (reached from two positions of a level expanded close together) is caught before it is sorted.
/// The chunk keeps one copy with the least tag, as [`sort_dedup`] would, so the runs written are the
/// same; the sort and the writes are spared the copies (deal 58537 with 1 cell: 37% of the children).
/// Each slot holds the low 32 bits of the hash beside the place, so that a probe reads the chunk only
/// when they match: most probes find another code, and its place, far back in the chunk, missed the
/// caches (half the time of the probes in a profile of pass 4 of 1-1,000,000).
pub(super) struct Recent(Box<[u64]>);

impl Recent {
    pub(super) fn new() -> Self {
        Recent(vec![u64::MAX; 1 << RECENT_BITS].into_boxed_slice())
    }

    /// `code` pushed on `chunk` ([`push_code`]) unless the chunk holds it (then the copy there keeps
    /// the lesser tag of the two).
    #[inline]
    pub(super) fn push(&mut self, chunk: &mut Vec<u128>, code: u128, max: usize) {
        let plain = untagged(code);
        let hash = Table::hash(untag(code).0);
        let slot = &mut self.0[(hash >> (64 - RECENT_BITS)) as usize];
        let check = hash as u32;
        // A slot may point past the chunk, or at another code (a chunk written out and refilled):
        // only the same code at that place is a copy.
        if (*slot >> 32) as u32 == check {
            if let Some(c) = chunk.get_mut(*slot as u32 as usize) {
                if untagged(*c) == plain {
                    *c = (*c).min(code);
                    return;
                }
            }
        }
        let place = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        *slot = u64::from(check) << 32 | u64::from(place);
        push_code(chunk, code, max);
    }
}

/// Push `code` on `chunk`, growing it within `max` codes (doubling would overshoot by up to twice).
#[inline]
pub(super) fn push_code(chunk: &mut Vec<u128>, code: u128, max: usize) {
    if chunk.len() == chunk.capacity() {
        let more = chunk
            .len()
            .max(1 << 16)
            .min(max.saturating_sub(chunk.len()))
            .max(1);
        chunk.reserve_exact(more);
    }
    chunk.push(code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::Ordering::Relaxed;

    /// Children pushed through [`Recent`] and through [`push_code`], in chunks written out when full
    /// (sorted, each code once: [`sort_dedup`]), give the same codes with the same least tags; and
    /// [`Recent`] spares the sort copies pushed close together.
    #[test]
    fn recent_keeps_what_sorting_keeps() {
        let mut x = 88172645463325252u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Codes from a small range, so that copies come both soon after and far apart, with their
        // runs as tags.
        let pushed: Vec<u128> = (0..200_000)
            .map(|_| {
                let r = next();
                tag((r % 30_000) as u128 | 1 << 100, (r >> 32) as u8 % 40)
            })
            .collect();
        let max = 7_000;
        let written = |with_recent: bool| {
            let (mut chunk, mut recent) = (Vec::new(), Recent::new());
            let mut least: BTreeMap<u128, u128> = BTreeMap::new();
            let mut lens = 0;
            let mut write = |chunk: &mut Vec<u128>| {
                lens += chunk.len();
                sort_dedup(chunk, &mut Vec::new());
                assert!(chunk.windows(2).all(|w| untagged(w[0]) < untagged(w[1])));
                for &c in chunk.iter() {
                    let e = least.entry(untagged(c)).or_insert(c);
                    *e = (*e).min(c);
                }
                chunk.clear();
            };
            for &c in &pushed {
                match with_recent {
                    true => recent.push(&mut chunk, c, max),
                    false => push_code(&mut chunk, c, max),
                }
                if chunk.len() >= max {
                    write(&mut chunk);
                }
            }
            write(&mut chunk);
            (least, lens)
        };
        let (plain, plain_sorted) = written(false);
        let (caught, caught_sorted) = written(true);
        assert_eq!(plain, caught);
        assert!(
            caught_sorted < plain_sorted * 9 / 10,
            "{caught_sorted} codes sorted against {plain_sorted}"
        );
    }

    /// A group's seeds read into runs stop when asked (at the first code read, and at every
    /// [`OUT_EVERY`] after it), their runs removed; not asked, the runs and the chunk left hold every
    /// code once.
    #[test]
    fn seeds_asked_to_stop_leave_nothing() {
        let dir = std::env::temp_dir().join(format!("fcanalyze-seeds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let levels = Levels::in_dir(&dir, 0);
        let files = || std::fs::read_dir(&dir).unwrap().count();
        let n = OUT_EVERY + 10;
        let asked = AtomicU64::new(0);
        for stop_at in [1u64, 2, 3] {
            // Codes counting down, each twice, in chunks of 4: many runs before the stop.
            let mut codes = (0..n).map(|i| ((n / 2 - i / 2) as u128) << 8);
            let mut next = || -> Result<Option<u128>> { Ok(codes.next()) };
            asked.store(0, Relaxed);
            let out = |_| (asked.fetch_add(1, Relaxed) + 1 == stop_at).then_some(Budget::Time);
            let mut chunk = vec![7 << 8];
            let got = seed_runs(&levels, &mut chunk, &mut next, 4, &out).unwrap();
            match stop_at {
                3 => {
                    // Asked twice (codes 0 and OUT_EVERY), neither a stop: every code once.
                    assert_eq!(asked.load(Relaxed), 2);
                    let (runs, _) = got.unwrap();
                    assert!(runs.len() > 500, "{} runs", runs.len());
                    let read = Level::of(runs.clone()).len() + chunk.len();
                    let mut all = Vec::new();
                    for r in &runs {
                        let mut rd = Level::of([r.clone()]).read_from(None).unwrap();
                        while let Some(c) = rd.next_code().unwrap() {
                            all.push(c);
                        }
                    }
                    all.extend(&chunk);
                    all.sort_unstable();
                    all.dedup();
                    assert_eq!(all.len() as u64, n / 2, "{read} codes read back");
                    levels.remove(runs);
                }
                _ => {
                    assert_eq!(got.err(), Some(Budget::Time));
                    assert!(chunk.is_empty());
                }
            }
            assert_eq!(files(), 0, "runs left after stop_at={stop_at}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
