//! The files of a group searched by levels ([`Levels`]): a level is a list of sorted parts covering
//! disjoint, increasing ranges of codes ([`Level`], [`Part`]), read by index or from a code on
//! ([`Codes`]); the sorted runs a level's expansion writes; and the merge of one range of codes of the
//! runs into a part of the next level ([`Levels::merge_range`]), so that several threads can each merge
//! a range of their own. Each file holds its codes as the differences between neighbours
//! ([`super::packed`]).

use std::collections::binary_heap::PeekMut;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::outcome::Budget;

use super::code::{untagged, CODE};
use super::packed::{self, Index, Reader, Writer};
use super::spill::{free_disk, level_name};

/// Codes sorted, each once, in a file of their own ([`tag`](super::code::tag)ged: one copy of each code,
/// with one of its tags), and the file's index.
#[derive(Clone, Debug)]
pub(super) struct Part {
    pub(super) path: PathBuf,
    pub(super) len: usize,
    pub(super) index: Arc<Index>,
}

/// A level: its parts, in order, each over a range of codes past the one before (none for an empty
/// level). Its codes are the same whatever the threads that made it; its parts are not.
#[derive(Default, Debug)]
pub(super) struct Level {
    pub(super) parts: Vec<Part>,
}

/// A sample of a sorted run, for the split of a merge between threads: a code, and the codes of the
/// run it stands for.
pub(super) type Sample = (u128, u64);

/// Samples taken of each sorted run (evenly spaced).
const SAMPLES: usize = 64;

/// A merge into the next level, or the seeds read into a first level, ask whether to stop every this
/// many codes read (some milliseconds; in tests, so that small searches ask too).
pub(super) const OUT_EVERY: u64 = if cfg!(test) { 1 << 12 } else { 1 << 20 };

/// What a long step of a group asks every [`OUT_EVERY`] codes, telling the new codes it wrote to the
/// next level since it last asked (a merge's; the seeds' reading writes none): the budget it has run
/// out of, if any (positions, time, a stop asked from outside, or the free disk), and then it stops.
pub(super) type Out<'a> = dyn Fn(u64) -> Option<Budget> + Sync + 'a;

/// What such a step gives: its result, or the budget it stopped for (its files removed).
pub(super) type Stopped<T> = std::result::Result<T, Budget>;

impl Level {
    pub(super) fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len).sum()
    }

    /// Bytes of its files.
    pub(super) fn bytes(&self) -> u64 {
        self.parts.iter().map(Part::bytes).sum()
    }

    /// The level of `parts` (the empty ones left out).
    pub(super) fn of(parts: impl IntoIterator<Item = Part>) -> Level {
        Level {
            parts: parts.into_iter().filter(|p| p.len > 0).collect(),
        }
    }

    /// The codes at indexes `from..to` of the level, in order.
    pub(super) fn read_range(&self, from: usize, to: usize) -> Codes {
        let mut spans = Vec::new();
        let mut at = 0;
        for p in &self.parts {
            let (a, b) = (from.max(at), to.min(at + p.len));
            if a < b {
                spans.push((p.clone(), a - at, b - a));
            }
            at += p.len;
        }
        Codes::of(spans)
    }

    /// The codes of the level from the least one at least `lo` on, in order.
    pub(super) fn read_from(&self, lo: Option<u128>) -> Result<Codes> {
        let mut spans = Vec::new();
        for p in &self.parts {
            let first = match lo {
                Some(lo) => packed::first_at_least(&p.path, &p.index, lo)?,
                None => 0,
            };
            if first < p.len {
                spans.push((p.clone(), first, p.len - first));
            }
        }
        Ok(Codes::of(spans))
    }
}

impl Part {
    /// The part of `len` codes in the file at `path` (written before: a checkpoint's), its index read
    /// from the file; an error when the file is not a whole file of that many codes.
    pub(super) fn open(path: PathBuf, len: usize) -> Result<Part> {
        let index = Index::read(&path)?;
        if index.len != len {
            return Err(Error::Io(format!(
                "{}: {} codes where {len} were written",
                path.display(),
                index.len
            )));
        }
        Ok(Part {
            path,
            len,
            index: Arc::new(index),
        })
    }

    /// Bytes of its file.
    pub(super) fn bytes(&self) -> u64 {
        self.index.bytes
    }
}

/// Codes read in order from spans of parts (a part, the index of its first code, the codes).
pub(super) struct Codes {
    spans: std::vec::IntoIter<(Part, usize, usize)>,
    reader: Option<Reader>,
    left: usize,
}

impl Codes {
    fn of(spans: Vec<(Part, usize, usize)>) -> Codes {
        Codes {
            spans: spans.into_iter(),
            reader: None,
            left: 0,
        }
    }

    pub(super) fn next_code(&mut self) -> Result<Option<u128>> {
        while self.left == 0 {
            let Some((part, first, len)) = self.spans.next() else {
                self.reader = None;
                return Ok(None);
            };
            self.reader = Some(Reader::at(&part.path, &part.index, first)?);
            self.left = len;
        }
        let r = self.reader.as_mut().expect("an open span");
        let code = r.next_code()?;
        if code.is_none() {
            return Err(Error::Io(format!(
                "a level's file ended {} codes early",
                self.left
            )));
        }
        self.left -= 1;
        Ok(code)
    }
}

/// A source of a merge: a run on disk or a sorted chunk in memory.
enum Source<'c> {
    File(Codes),
    Memory(std::slice::Iter<'c, u128>),
}

impl Source<'_> {
    fn next_code(&mut self) -> Result<Option<u128>> {
        match self {
            Source::File(c) => c.next_code(),
            Source::Memory(m) => Ok(m.next().copied()),
        }
    }
}

/// The files of a group searched by levels, in the spill directory, shared by the threads that search
/// it: level files and runs numbered in the order they are made, named after the thread searching
/// the group.
pub(super) struct Levels {
    pub(super) dir: PathBuf,
    pub(super) thread: usize,
    /// The number of the next file.
    pub(super) made: AtomicU64,
    /// Bytes of the files on disk.
    pub(super) disk: AtomicU64,
    /// Free disk space a write must leave.
    pub(super) min_free: u64,
}

impl Levels {
    /// Whether writing `codes` more would leave less free disk than the search must leave.
    pub(super) fn disk_low(&self, codes: usize) -> bool {
        free_disk(&self.dir).is_some_and(|f| f < (codes * CODE) as u64 + self.min_free)
    }

    /// The files of thread 0 in `dir`, leaving `min_free` of the disk free (a search of its own:
    /// the way back's, [`super::chain::group_path_on_disk`]; tests).
    pub(super) fn in_dir(dir: &std::path::Path, min_free: u64) -> Levels {
        Levels {
            dir: dir.to_path_buf(),
            thread: 0,
            made: AtomicU64::new(0),
            disk: AtomicU64::new(0),
            min_free,
        }
    }

    pub(super) fn disk(&self) -> u64 {
        self.disk.load(Ordering::Relaxed)
    }

    fn create(&self) -> Result<Writer> {
        let made = self.made.fetch_add(1, Ordering::Relaxed);
        Writer::create(self.dir.join(level_name(self.thread, made)))
    }

    /// `chunk` sorted, each code once, written to a file of its own, its samples added to `samples`;
    /// `chunk` is left empty.
    pub(super) fn write_run(
        &self,
        chunk: &mut Vec<u128>,
        samples: &mut Vec<Sample>,
    ) -> Result<Part> {
        sort_dedup(chunk, samples);
        let mut w = self.create()?;
        for &c in chunk.iter() {
            w.push(c)?;
        }
        let path = w.path().to_path_buf();
        let index = w.finish()?;
        self.disk.fetch_add(index.bytes, Ordering::Relaxed);
        let part = Part {
            path,
            len: chunk.len(),
            index: Arc::new(index),
        };
        chunk.clear();
        Ok(part)
    }

    /// The codes `lo..hi` (unbounded where `None`) of `runs` and `chunks` (each sorted), each once,
    /// that are not in `cur` or `prev`, written to a part of the next level (of no codes: no file);
    /// the budget `out` names, its file removed, when it names one (asked every [`OUT_EVERY`] codes:
    /// the merge of a giant level reads tens of gigabytes, and a stop asked meanwhile must not wait for
    /// it, nor a disk filling up).
    pub(super) fn merge_range(
        &self,
        (runs, chunks): (&[Part], &[&[u128]]),
        cur: &Level,
        prev: &Level,
        (lo, hi): (Option<u128>, Option<u128>),
        out: &Out<'_>,
    ) -> Result<Stopped<Part>> {
        let mut sources = Vec::with_capacity(runs.len() + chunks.len());
        for r in runs {
            sources.push(Source::File(Level::of([r.clone()]).read_from(lo)?));
        }
        for c in chunks {
            let from = lo.map_or(0, |lo| c.partition_point(|&x| x < lo));
            sources.push(Source::Memory(c[from..].iter()));
        }
        let mut heap = std::collections::BinaryHeap::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(c) = s.next_code()? {
                heap.push(std::cmp::Reverse((c, i)));
            }
        }
        let mut old = [cur.read_from(lo)?, prev.read_from(lo)?];
        let mut old_next = [old[0].next_code()?, old[1].next_code()?];
        let mut w = self.create()?;
        let mut last: Option<u128> = None;
        let (mut read, mut told) = (0u64, 0usize);
        while let Some(mut top) = heap.peek_mut() {
            let std::cmp::Reverse((code, i)) = *top;
            if hi.is_some_and(|hi| code >= hi) {
                break;
            }
            read += 1;
            let ask = || out((w.len() - std::mem::replace(&mut told, w.len())) as u64);
            if let Some(b) = (read % OUT_EVERY == 0).then(ask).flatten() {
                let path = w.path().to_path_buf();
                drop(w);
                let _ = std::fs::remove_file(&path);
                return Ok(Err(b));
            }
            // The run's next code takes its place at the top, sifted down once (a pop and a push
            // sift twice: the heap was 40% of a giant level's merge, 384243's with 2 cells).
            match sources[i].next_code()? {
                Some(n) => *top = std::cmp::Reverse((n, i)),
                None => {
                    PeekMut::pop(top);
                }
            }
            // Copies of a code differ only in their tags.
            let plain = untagged(code);
            if last == Some(plain) {
                continue;
            }
            last = Some(plain);
            let mut known = false;
            for (o, n) in old.iter_mut().zip(old_next.iter_mut()) {
                while n.is_some_and(|x| untagged(x) < plain) {
                    *n = o.next_code()?;
                }
                known |= n.is_some_and(|x| untagged(x) == plain);
            }
            if !known {
                w.push(code)?;
            }
        }
        let (path, len) = (w.path().to_path_buf(), w.len());
        let index = w.finish()?;
        if len == 0 {
            let _ = std::fs::remove_file(&path);
        } else {
            self.disk.fetch_add(index.bytes, Ordering::Relaxed);
        }
        Ok(Ok(Part {
            path,
            len,
            index: Arc::new(index),
        }))
    }

    /// The files of `parts` removed.
    pub(super) fn remove(&self, parts: Vec<Part>) {
        for p in parts {
            let _ = std::fs::remove_file(&p.path);
            let bytes = p.bytes();
            let _ = self
                .disk
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
                    Some(d - bytes.min(d))
                });
        }
    }
}

/// `chunk` sorted, each code once (the copy with the least tag), and its samples added to `samples`
/// (without their tags: the bounds of a merge's ranges then keep the copies of a code together).
pub(super) fn sort_dedup(chunk: &mut Vec<u128>, samples: &mut Vec<Sample>) {
    chunk.sort_unstable();
    chunk.dedup_by(|a, b| untagged(*a) == untagged(*b));
    let n = chunk.len();
    if n > 0 {
        let step = n.div_ceil(SAMPLES);
        samples.extend(
            chunk
                .iter()
                .step_by(step)
                .map(|&c| (untagged(c), step as u64)),
        );
    }
}

/// The codes that split a merge into `n` ranges of about equal sizes, from the samples of its runs:
/// `n - 1` codes, increasing (equal ones make empty ranges).
pub(super) fn split_points(mut samples: Vec<Sample>, n: usize) -> Vec<u128> {
    samples.sort_unstable();
    let total: u64 = samples.iter().map(|s| s.1).sum();
    let mut points = Vec::with_capacity(n.saturating_sub(1));
    let mut seen = 0u64;
    let mut at = samples.iter();
    for j in 1..n {
        let goal = total * j as u64 / n as u64;
        let mut point = None;
        for &(c, w) in at.by_ref() {
            seen += w;
            if seen > goal {
                point = Some(c);
                break;
            }
        }
        match point.or(points.last().copied()) {
            Some(p) => points.push(p),
            None => break,
        }
    }
    // Too few samples for `n` ranges: the last ranges are empty.
    let last = points.last().copied().unwrap_or(u128::MAX);
    points.resize(n.saturating_sub(1), last);
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merge into the next level asked to stop gives no part and leaves no file; not asked, it gives
    /// every code of its runs once, less those of the levels before.
    #[test]
    fn a_merge_asked_to_stop_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("fcanalyze-level-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let levels = Levels::in_dir(&dir, 0);
        let n = 3 * OUT_EVERY as u128;
        let mut samples = Vec::new();
        let runs: Vec<Part> = (0..3u128)
            .map(|r| {
                let mut chunk: Vec<u128> = (0..n).filter(|x| x % 3 != r).map(|x| x << 8).collect();
                levels.write_run(&mut chunk, &mut samples).unwrap()
            })
            .collect();
        let mut old: Vec<u128> = (0..n).filter(|x| x % 5 == 0).map(|x| x << 8).collect();
        let prev = Level::of([levels.write_run(&mut old, &mut samples).unwrap()]);
        let none = Level::default();
        let files = || std::fs::read_dir(&dir).unwrap().count();
        let before = files();
        let stopped = levels
            .merge_range((&runs, &[]), &prev, &none, (None, None), &|_| {
                Some(Budget::Disk)
            })
            .unwrap();
        assert_eq!(stopped.err(), Some(Budget::Disk));
        assert_eq!(files(), before, "a stopped merge left its file");
        // Each ask tells the codes written since the one before: a budget of positions stops the
        // merge within an ask of its count.
        let told = std::sync::atomic::AtomicU64::new(0);
        let budget = OUT_EVERY;
        let stopped = levels
            .merge_range((&runs, &[]), &prev, &none, (None, None), &|new| {
                let all = told.fetch_add(new, Ordering::Relaxed) + new;
                (all >= budget).then_some(Budget::Positions)
            })
            .unwrap();
        assert_eq!(stopped.err(), Some(Budget::Positions));
        let all = told.load(Ordering::Relaxed);
        // Two of every five codes read are written (each code is in two runs, a fifth are old).
        assert!(all >= budget && all < budget + OUT_EVERY / 2, "{all}");
        assert_eq!(files(), before, "a stopped merge left its file");
        told.store(0, Ordering::Relaxed);
        let part = levels
            .merge_range((&runs, &[]), &prev, &none, (None, None), &|new| {
                told.fetch_add(new, Ordering::Relaxed);
                None
            })
            .unwrap()
            .unwrap();
        // Told at every ask, the last within the merge's last [`OUT_EVERY`] codes read.
        let all = told.load(Ordering::Relaxed) as usize;
        assert!(
            all <= part.len && all + OUT_EVERY as usize >= part.len,
            "{all}"
        );
        let mut read = Level::of([part]).read_from(None).unwrap();
        let mut got = Vec::new();
        while let Some(c) = read.next_code().unwrap() {
            got.push(c);
        }
        let want: Vec<u128> = (0..n).filter(|x| x % 5 != 0).map(|x| x << 8).collect();
        assert_eq!(got, want);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
