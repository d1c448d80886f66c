//! The search of a group by levels ([`search_by_levels`]), breadth first with its levels on disk as
//! sorted files of codes ([`Levels`], [`Level`]): for the groups whose set does not fit in memory.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use crate::error::Result;
use crate::key::Key;
use crate::layer::progress;
use crate::outcome::Budget;

use super::checkpoint::{Finished, LevelState};
use super::code::{Frame, CODE};
use super::context::{Check, Cx, GroupEnd};
use super::seeds::lock;
use super::spill::{free_disk, io_error, level_name};

/// Search a group breadth first from its seeds (`seeds`, the rest given by `more`), level by level: the
/// positions one move from level `t` lie in levels `t - 1`, `t` and `t + 1`, because every move within a
/// group can be undone by a move within the group (no card goes home or leaves its dealt card there; a
/// card or run goes back where it came from, the free cells and empty columns allowing as many cards back
/// as forth). So level `t + 1` is what level `t` reaches, less levels `t` and `t - 1`, and the group's
/// count is the sum of its levels. The levels live on disk as sorted files ([`Level`]): level `t` is read
/// in order, the codes it reaches are sorted in chunks of [`Cx::level_chunk`] and written as runs, and
/// the runs are merged into level `t + 1`, less the codes of levels `t` and `t - 1`, read alongside. So
/// the memory holds one chunk whatever the size of the group, and the disk three levels and the runs.
/// Slower than the set, for the groups the set does not hold in memory.
pub(super) fn search_by_levels(
    cx: &mut Cx,
    (group, sig): (u64, [u64; 6]),
    frame: &Frame,
    mut chunk: Vec<u128>,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
) -> Result<GroupEnd> {
    let mut levels = Levels::of(cx);
    let max_chunk = cx.level_chunk.max(1);
    let mut runs: Vec<Level> = Vec::new();
    while let Some(seed) = more()? {
        push_code(&mut chunk, frame.encode(&seed), max_chunk);
        if chunk.len() >= max_chunk {
            runs.push(levels.write_run(&mut chunk)?);
        }
    }
    let none = Level::empty();
    let Some(cur) = levels.merge(runs, &mut chunk, &none, &none)? else {
        return Ok(GroupEnd::Out(Budget::Disk));
    };
    by_levels(cx, group, sig, frame, levels, chunk, cur, Level::empty(), 0)
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
    let mut levels = Levels::of(cx);
    let level = |(name, len): (String, u64)| Level {
        path: Some(levels.dir.join(name)),
        len: len as usize,
    };
    let cur = level(state.cur);
    let prev = state.prev.map_or(Level::empty(), level);
    levels.disk = ((cur.len + prev.len) * CODE) as u64;
    let total = state.total as usize;
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
    )
}

/// The levels of group `group` (signature `sig`) from `cur`, `prev` the level before it and `total` the
/// positions of the levels before `cur` ([`search_by_levels`]). In a resumable search, the end of each
/// level saves a checkpoint that lists the two levels the next one starts from, and the end of the group
/// one that lists it finished.
#[allow(clippy::too_many_arguments)]
pub(super) fn by_levels(
    cx: &mut Cx,
    group: u64,
    sig: [u64; 6],
    frame: &Frame,
    mut levels: Levels,
    mut chunk: Vec<u128>,
    mut cur: Level,
    mut prev: Level,
    mut total: usize,
) -> Result<GroupEnd> {
    let max_chunk = cx.level_chunk.max(1);
    let mut counted = 0u64;
    while cur.len > 0 {
        total += cur.len;
        let mut runs: Vec<Level> = Vec::new();
        let mut read = cur.read()?;
        let mut left = cur.len;
        while let Some(code) = read.next_code()? {
            left -= 1;
            let key = frame.decode(code);
            if cx.rules.is_sorted(&key) {
                return Ok(GroupEnd::Won {
                    target: key,
                    tail: None,
                    len: total,
                });
            }
            let p = cx.rules.decode(&key);
            cx.rules.children(&p, &mut cx.kids);
            for k in &cx.kids {
                if *k == [0; 3] {
                    return Ok(GroupEnd::Won {
                        target: key,
                        tail: Some(*k),
                        len: total,
                    });
                }
                let l = progress(k);
                if l > cx.layer {
                    cx.seeds.push(l, k, Some(&key), cx.spill)?;
                    continue;
                }
                push_code(&mut chunk, frame.encode(k), max_chunk);
            }
            if chunk.len() >= max_chunk {
                if levels.disk_low(chunk.len()) {
                    return Ok(GroupEnd::Out(Budget::Disk));
                }
                runs.push(levels.write_run(&mut chunk)?);
            }
            cx.expanded += 1;
            counted += 1;
            if counted & 4095 == 0 || left == 0 {
                let disk = lock(cx.spill).disk;
                cx.res.peak_disk = cx.res.peak_disk.max(disk + levels.disk);
                let held = chunk.capacity() * std::mem::size_of::<u128>();
                match cx.check(total, held, 0) {
                    Check::Go => {}
                    Check::OverMemory => return Ok(GroupEnd::Out(Budget::Positions)),
                    Check::Out(b) => return Ok(GroupEnd::Out(b)),
                    Check::Stopped => return Ok(GroupEnd::Stopped),
                }
            }
        }
        drop(read);
        let Some(next) = levels.merge(runs, &mut chunk, &cur, &prev)? else {
            return Ok(GroupEnd::Out(Budget::Disk));
        };
        let old = std::mem::replace(&mut prev, std::mem::replace(&mut cur, next));
        // The level is done: a resumed search goes on from the next one (from its end, the seeds it
        // gave written first), or past the group when it was the last.
        if lock(cx.spill).layer_start.is_some() {
            cx.seeds.flush(cx.spill)?;
            let mut s = lock(cx.spill);
            s.by_levels.retain(|g| (g.group, g.sig) != (group, sig));
            if cur.len > 0 {
                let name = |l: &Level| {
                    l.path.as_ref().map(|p| {
                        let name = p.file_name().expect("a file name");
                        (name.to_string_lossy().into_owned(), l.len as u64)
                    })
                };
                s.by_levels.push(LevelState {
                    group,
                    sig,
                    total: total as u64,
                    cur: name(&cur).expect("a level with codes has a file"),
                    prev: name(&prev),
                });
            } else {
                s.finished.push(Finished {
                    group,
                    sig,
                    len: total as u64,
                });
            }
            s.save_within()?;
        }
        levels.remove(old);
    }
    levels.remove(prev);
    levels.remove(cur);
    Ok(GroupEnd::Done(total))
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

/// The files of a group searched by levels ([`search_by_levels`]), in the spill directory.
pub(super) struct Levels {
    pub(super) dir: PathBuf,
    /// The thread searching the group (its files' names start with it).
    pub(super) thread: usize,
    /// Files made so far (their names are numbered).
    pub(super) made: u64,
    /// Bytes of the files on disk.
    pub(super) disk: u64,
    /// Free disk space a write must leave.
    pub(super) min_free: u64,
}

/// Codes sorted, each once, in a file (none for an empty level).
pub(super) struct Level {
    pub(super) path: Option<PathBuf>,
    pub(super) len: usize,
}

impl Level {
    pub(super) fn empty() -> Level {
        Level { path: None, len: 0 }
    }

    pub(super) fn read(&self) -> Result<LevelReader> {
        let file = match &self.path {
            Some(path) => Some((
                BufReader::with_capacity(1 << 20, File::open(path).map_err(|e| io_error(path, e))?),
                path.clone(),
            )),
            None => None,
        };
        Ok(LevelReader {
            file,
            left: self.len,
        })
    }
}

/// A level's codes, read in order.
pub(super) struct LevelReader {
    pub(super) file: Option<(BufReader<File>, PathBuf)>,
    pub(super) left: usize,
}

impl LevelReader {
    pub(super) fn next_code(&mut self) -> Result<Option<u128>> {
        if self.left == 0 {
            return Ok(None);
        }
        let (r, path) = self.file.as_mut().expect("a level with codes has a file");
        let mut b = [0u8; CODE];
        r.read_exact(&mut b).map_err(|e| io_error(path, e))?;
        self.left -= 1;
        Ok(Some(u128::from_le_bytes(b)))
    }
}

impl Levels {
    /// The levels of a group `cx`'s thread searches.
    pub(super) fn of(cx: &Cx) -> Levels {
        let s = lock(cx.spill);
        Levels {
            dir: s.dir.0.clone(),
            thread: cx.thread,
            made: s.level_base,
            disk: 0,
            min_free: s.min_free,
        }
    }

    /// Whether writing `codes` more would leave less free disk than the search must leave.
    pub(super) fn disk_low(&self, codes: usize) -> bool {
        free_disk(&self.dir).is_some_and(|f| f < (codes * CODE) as u64 + self.min_free)
    }

    pub(super) fn create(&mut self) -> Result<(PathBuf, BufWriter<File>)> {
        let path = (self.dir).join(level_name(self.thread, self.made));
        self.made += 1;
        let f = File::create(&path).map_err(|e| io_error(&path, e))?;
        Ok((path, BufWriter::with_capacity(1 << 20, f)))
    }

    /// `chunk` sorted, each code once, written to a file of its own; `chunk` is left empty.
    pub(super) fn write_run(&mut self, chunk: &mut Vec<u128>) -> Result<Level> {
        chunk.sort_unstable();
        chunk.dedup();
        let (path, mut w) = self.create()?;
        for c in chunk.iter() {
            w.write_all(&c.to_le_bytes())
                .map_err(|e| io_error(&path, e))?;
        }
        w.flush().map_err(|e| io_error(&path, e))?;
        self.disk += (chunk.len() * CODE) as u64;
        let level = Level {
            path: Some(path),
            len: chunk.len(),
        };
        chunk.clear();
        Ok(level)
    }

    /// The next level: the codes of `runs` and `chunk` (each once) that are not in `cur` or `prev`,
    /// written to a file; the runs are removed and `chunk` is left empty. `None` when the disk is too
    /// full for it.
    pub(super) fn merge(
        &mut self,
        runs: Vec<Level>,
        chunk: &mut Vec<u128>,
        cur: &Level,
        prev: &Level,
    ) -> Result<Option<Level>> {
        let room: usize = runs.iter().map(|r| r.len).sum::<usize>() + chunk.len();
        if self.disk_low(room) {
            return Ok(None);
        }
        chunk.sort_unstable();
        chunk.dedup();
        let mut readers = runs.iter().map(Level::read).collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(c) = r.next_code()? {
                heap.push(std::cmp::Reverse((c, i)));
            }
        }
        let mut in_chunk = chunk.iter().copied().peekable();
        let mut old = [cur.read()?, prev.read()?];
        let mut old_next = [old[0].next_code()?, old[1].next_code()?];
        let (path, mut w) = self.create()?;
        let mut len = 0usize;
        let mut last: Option<u128> = None;
        loop {
            // The least code of the runs and the chunk.
            let from_heap = heap.peek().map(|r| r.0 .0);
            let from_chunk = in_chunk.peek().copied();
            let code = match (from_heap, from_chunk) {
                (Some(h), Some(c)) if c < h => in_chunk.next(),
                (Some(_), _) => {
                    let std::cmp::Reverse((c, i)) = heap.pop().expect("peeked");
                    if let Some(n) = readers[i].next_code()? {
                        heap.push(std::cmp::Reverse((n, i)));
                    }
                    Some(c)
                }
                (None, c) => c.and(in_chunk.next()),
            };
            let Some(code) = code else { break };
            if last == Some(code) {
                continue;
            }
            last = Some(code);
            let mut known = false;
            for (o, n) in old.iter_mut().zip(old_next.iter_mut()) {
                while n.is_some_and(|x| x < code) {
                    *n = o.next_code()?;
                }
                known |= *n == Some(code);
            }
            if !known {
                w.write_all(&code.to_le_bytes())
                    .map_err(|e| io_error(&path, e))?;
                len += 1;
            }
        }
        w.flush().map_err(|e| io_error(&path, e))?;
        drop(w);
        chunk.clear();
        for run in runs {
            self.remove(run);
        }
        self.disk += (len * CODE) as u64;
        if len == 0 {
            let _ = std::fs::remove_file(&path);
            return Ok(Some(Level::empty()));
        }
        Ok(Some(Level {
            path: Some(path),
            len,
        }))
    }

    pub(super) fn remove(&mut self, level: Level) {
        if let Some(path) = level.path {
            let _ = std::fs::remove_file(path);
            self.disk -= ((level.len * CODE) as u64).min(self.disk);
        }
    }
}
