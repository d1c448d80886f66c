//! The k-way merge of a layer's sorted runs ([`Merge`]): its seeds group by group, each record once,
//! and each record's images under its trades.

use std::collections::binary_heap::PeekMut;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::key::{signature, unpack, Key};

use super::code::{decode_rec, order_seeds, rec_order, Order, Rec, LEAN, RECORD};
use super::spill::io_error;
use super::trades::images;

/// One sorted run of a layer's file, being read: the bytes `pos..end` still to read, the bytes of its
/// records, and a chunk read.
pub(super) struct Run {
    pub(super) pos: u64,
    pub(super) end: u64,
    pub(super) width: usize,
    pub(super) buf: Vec<u8>,
    pub(super) at: usize,
}

/// A seed's place in the merge: its order, and its run.
pub(super) type Head = std::cmp::Reverse<(Order, usize)>;

/// The k-way merge of a layer's sorted runs: its seeds group by group, each key once.
#[derive(Default)]
pub(super) struct Merge {
    /// The layer's file, shared with its [`LayerFile`] (read at offsets, so threads never share a
    /// file position).
    pub(super) file: Option<Arc<File>>,
    pub(super) path: PathBuf,
    pub(super) chunk: usize,
    pub(super) runs: Vec<Run>,
    pub(super) heap: std::collections::BinaryHeap<Head>,
    /// The last record given, its key and trades (a record may be in several runs).
    pub(super) last: Option<([u32; 5], u32)>,
    /// The images of the last record under its trades, still to give ([`Merge::next_seed`]).
    pub(super) images: Vec<(Key, Option<Key>)>,
}

/// A layer's file to merge: its path, the bytes of each sorted run (and whether it is lean), and the
/// file opened once, when the layer starts. Every merge of the layer reads through that handle, not by
/// the path: the file may be renamed while the layer is searched (the lines forgotten,
/// `Seeds::forget_kept`), and a merge opened after that (an owner of twins comparing its follower's
/// seeds) still reads it.
pub(super) struct LayerFile {
    pub(super) path: PathBuf,
    pub(super) runs: Vec<(u64, u64, bool)>,
    handle: Arc<File>,
}

impl LayerFile {
    /// The file at `path` with these runs, opened.
    pub(super) fn open(path: PathBuf, runs: Vec<(u64, u64, bool)>) -> Result<LayerFile> {
        let handle = Arc::new(File::open(&path).map_err(|e| io_error(&path, e))?);
        Ok(LayerFile { path, runs, handle })
    }
}

/// The next record of `run` of `file` (at its path), read in chunks of about `chunk` bytes.
fn next_rec(run: &mut Run, (file, path): (&File, &Path), chunk: usize) -> Result<Option<Rec>> {
    if run.at == run.buf.len() {
        if run.pos == run.end {
            return Ok(None);
        }
        let n = (run.end - run.pos).min((chunk / run.width * run.width) as u64) as usize;
        run.buf.resize(n, 0);
        read_at(file, path, run.pos, &mut run.buf)?;
        run.pos += n as u64;
        run.at = 0;
    }
    let bytes = &run.buf[run.at..run.at + run.width];
    run.at += run.width;
    Ok(Some(decode_rec(bytes)))
}

/// Fill `buf` from byte `pos` of `file` (at `path`, for the error).
fn read_at(file: &File, path: &Path, pos: u64, buf: &mut [u8]) -> Result<()> {
    file.read_exact_at(buf, pos).map_err(|e| io_error(path, e))
}

impl Merge {
    /// The merge of `file`'s runs, with a handle and read buffers of its own (each thread of the search
    /// merges the file, searches its share of the groups and passes over the others',
    /// [`Merge::skip_group`]).
    pub(super) fn open(file: &LayerFile) -> Result<Merge> {
        Merge::open_at(file, 0)
    }

    /// [`Merge::open`] from the first group of hash `h` or more: each run starts at its first such
    /// record, found by bisection (the groups before are not read).
    pub(super) fn open_at(file: &LayerFile, h: u64) -> Result<Merge> {
        let path = &file.path;
        // Each run reads its part in chunks (smaller when there are many).
        let chunk = ((16 << 20) / file.runs.len().max(1)).clamp(RECORD * 64, 1 << 16);
        let mut m = Merge {
            file: Some(Arc::clone(&file.handle)),
            path: path.clone(),
            chunk,
            ..Merge::default()
        };
        for &(pos, end, lean) in &file.runs {
            let width = if lean { LEAN } else { RECORD };
            let pos = if h == 0 {
                pos
            } else {
                m.first_at(pos, end, width, h)?
            };
            m.runs.push(Run {
                pos,
                end,
                width: if lean { LEAN } else { RECORD },
                buf: Vec::new(),
                at: 0,
            });
        }
        for i in 0..m.runs.len() {
            if let Some(r) = m.next_of(i)? {
                m.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
        }
        Ok(m)
    }

    /// The next record of run `i`.
    pub(super) fn next_of(&mut self, i: usize) -> Result<Option<Rec>> {
        let file = self.file.as_deref().expect("an open file");
        next_rec(&mut self.runs[i], (file, &self.path), self.chunk)
    }

    /// The first byte of a record of hash `h` or more in the run of `width`-byte records at
    /// `pos..end` (`end` when there is none).
    fn first_at(&mut self, pos: u64, end: u64, width: usize, h: u64) -> Result<u64> {
        let f = self.file.as_deref().expect("an open file");
        let mut b = vec![0u8; width];
        let (mut lo, mut hi) = (0u64, (end - pos) / width as u64);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            read_at(f, &self.path, pos + mid * width as u64, &mut b)?;
            if rec_order(&decode_rec(&b)).0 < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(pos + lo * width as u64)
    }

    /// Bytes of the read buffers.
    pub(super) fn memory(&self) -> usize {
        self.runs.len() * self.chunk
    }

    /// The group hash of the next seed, if any.
    pub(super) fn peek_hash(&self) -> Option<u64> {
        self.heap.peek().map(|&std::cmp::Reverse(((h, _, _), _))| h)
    }

    /// Pass over the seeds of group hash `h` (a group another thread claimed), without the heap: each
    /// run whose next seed is of `h` is moved past its seeds of `h`, by its read buffer and, when that
    /// holds nothing else, by a binary search of the rest of the run on disk (a run is sorted by group
    /// hash first), so that a large group is not read.
    pub(super) fn skip_group(&mut self, h: u64) -> Result<()> {
        self.images.clear();
        while let Some(&std::cmp::Reverse((order, i))) = self.heap.peek() {
            if order.0 != h {
                break;
            }
            self.heap.pop();
            if let Some(r) = self.skip_run(i, h)? {
                self.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
        }
        Ok(())
    }

    /// The first record of run `i` from its next one on whose group hash is not `h` (those of `h`
    /// come first).
    fn skip_run(&mut self, i: usize, h: u64) -> Result<Option<Rec>> {
        loop {
            let run = &mut self.runs[i];
            while run.at < run.buf.len() {
                let r = decode_rec(&run.buf[run.at..run.at + run.width]);
                run.at += run.width;
                if rec_order(&r).0 != h {
                    return Ok(Some(r));
                }
            }
            let Some(r) = self.next_of(i)? else {
                return Ok(None);
            };
            if rec_order(&r).0 != h {
                return Ok(Some(r));
            }
            let run = &mut self.runs[i];
            let last = decode_rec(&run.buf[run.buf.len() - run.width..]);
            if rec_order(&last).0 != h || run.pos == run.end {
                continue;
            }
            // A whole buffer of `h`, and more to come: the rest of the group is found on disk (the
            // next read then starts past it).
            let width = run.width as u64;
            let (mut lo, mut hi) = (0u64, (run.end - run.pos) / width);
            let mut b = vec![0u8; run.width];
            let f = self.file.as_deref().expect("an open file");
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                read_at(f, &self.path, run.pos + mid * width, &mut b)?;
                if rec_order(&decode_rec(&b)).0 == h {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            run.pos += lo * width;
            run.at = run.buf.len();
        }
    }

    /// The next seed record of group hash `h`, its packed key and trades (in key order, each record
    /// once), `None` past the last one.
    pub(super) fn next_in_group(&mut self, h: u64) -> Result<Option<([u32; 5], u32)>> {
        let file = self.file.as_deref().expect("an open file");
        while let Some(mut top) = self.heap.peek_mut() {
            let std::cmp::Reverse((order, i)) = *top;
            if order.0 != h {
                return Ok(None);
            }
            // The run's next record takes its place at the top, sifted down once (not a pop and a
            // push: [`super::level::Levels::merge_range`]).
            match next_rec(&mut self.runs[i], (file, &self.path), self.chunk)? {
                Some(r) => *top = std::cmp::Reverse((rec_order(&r), i)),
                None => {
                    PeekMut::pop(top);
                }
            }
            let seeds = order_seeds(&order);
            if self.last != Some(seeds) {
                self.last = Some(seeds);
                return Ok(Some(seeds));
            }
        }
        Ok(None)
    }

    /// The next seed of group hash `h`: each record's key, then its images under its trades (a key may
    /// come more than once), `None` past the last one.
    pub(super) fn next_seed(&mut self, h: u64) -> Result<Option<Key>> {
        if let Some((k, _)) = self.images.pop() {
            return Ok(Some(k));
        }
        let Some((packed, mask)) = self.next_in_group(h)? else {
            return Ok(None);
        };
        let key = unpack(&packed);
        if mask != 0 {
            images(&key, None, mask, &mut self.images);
            let sig = signature(&key);
            if self.images.iter().any(|(k, _)| signature(k) != sig) {
                return Err(Error::Internal(
                    "a seed's image under its trades lies in another group".into(),
                ));
            }
            self.images.swap_remove(0);
        }
        Ok(Some(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layered::code::write_recs;

    /// A seed record of group hash `h` and key words `k`.
    fn rec(h: u64, k: u32) -> Rec {
        let mut r = [0u32; 13];
        r[0] = k;
        r[4] = k.rotate_left(7);
        r[10] = (h >> 32) as u32;
        r[11] = h as u32;
        r
    }

    /// Passing over groups gives the same seeds of the others as reading every group: with groups far
    /// larger than a run's read buffer (the binary search on disk), groups that end within a buffer,
    /// groups missing from some runs, and keys in several runs.
    #[test]
    fn skipped_groups_leave_the_others_whole() {
        let path = std::env::temp_dir().join(format!("fcanalyze-merge-{}", std::process::id()));
        let mut f = std::fs::File::create(&path).unwrap();
        let mut runs = Vec::new();
        let mut at = 0u64;
        for r in 0..3u32 {
            let mut recs = Vec::new();
            for h in 1..=40u64 {
                let size = match (h % 4, r) {
                    (0, _) => 20_000,
                    (1, 1) => 0,
                    _ => 50 + (h as u32 * 37 + r * 11) % 300,
                };
                recs.extend((0..size).map(|j| rec(h << 40 | h, j * (1 + r % 2))));
            }
            recs.sort_unstable_by_key(rec_order);
            recs.dedup_by_key(|x| *x);
            write_recs(&mut f, &recs, false).unwrap();
            let end = at + (recs.len() * RECORD) as u64;
            runs.push((at, end, false));
            at = end;
        }
        drop(f);
        let file = LayerFile::open(path.clone(), runs).unwrap();
        let mut all = std::collections::BTreeMap::new();
        let mut m = Merge::open(&file).unwrap();
        while let Some(h) = m.peek_hash() {
            let mut keys = Vec::new();
            while let Some(k) = m.next_in_group(h).unwrap() {
                keys.push(k);
            }
            all.insert(h, keys);
        }
        assert_eq!(all.len(), 40);
        for skip in [0u64, 1, 2, 3] {
            let mut m = Merge::open(&file).unwrap();
            let mut seen = 0;
            while let Some(h) = m.peek_hash() {
                seen += 1;
                if (h & 0xff) % 4 == skip || (h & 0xff) % 7 == 0 {
                    m.skip_group(h).unwrap();
                    continue;
                }
                let mut keys = Vec::new();
                while let Some(k) = m.next_in_group(h).unwrap() {
                    keys.push(k);
                }
                assert_eq!(keys, all[&h], "group {h:x} after skips of {skip}");
            }
            assert_eq!(seen, 40);
        }
        let _ = std::fs::remove_file(&path);
    }
}
