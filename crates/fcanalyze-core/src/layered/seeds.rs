//! The seeds of later layers: each thread's buffers in memory ([`SeedBuf`]), and the files of sorted
//! runs they are written to, shared by the threads ([`Seeds`]), with the finished layers' files kept
//! for lines within their disk budget.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

#[cfg(test)]
use crate::error::Error;
use crate::error::Result;
use crate::key::{pack, signature, unpack, Key};
use crate::layer::{progress, LAYERS};

use super::checkpoint::{Checkpoint, Finished, LevelState, Runs};
use super::code::{
    decode_rec, make_rec, rec_key, rec_order, rec_parent, rec_seeds, write_recs, Rec, LEAN, MASK,
    NO_PARENT, RECORD,
};
use super::merge::LayerFile;
use super::spill::{free_disk, io_error, SpillDir};
use super::trades::images;
use super::Totals;
#[cfg(test)]
use super::{DISK_SIZE, FULL_AFTER, KILL_WITHIN};

/// The seeds a thread of the search found for later layers, per layer a buffer in memory: sorted,
/// deduplicated and written to the layer's file ([`Seeds::append`]) as one sorted run when they reach
/// `flush_keys`, or when their layer is merged.
pub(super) struct SeedBuf {
    pub(super) flush_keys: usize,
    pub(super) buffers: Vec<Vec<Rec>>,
    pub(super) buffered: usize,
}

impl SeedBuf {
    pub(super) fn new(flush_keys: usize) -> SeedBuf {
        SeedBuf {
            flush_keys: flush_keys.max(1),
            buffers: vec![Vec::new(); LAYERS],
            buffered: 0,
        }
    }

    /// A seed of `layer`, reached from `parent` (`None`: the start), with its images under the trades
    /// of `trades` (a mask of [`super::trades::pair_of_bit`]'s bits: 0, the seed alone).
    #[inline]
    pub(super) fn push(
        &mut self,
        layer: usize,
        key: &Key,
        parent: Option<&Key>,
        trades: u32,
        spill: &Spill,
    ) -> Result<()> {
        self.buffers[layer].push(make_rec(key, parent, trades));
        self.buffered += 1;
        if self.buffered >= self.flush_keys {
            self.flush(spill)?;
        }
        Ok(())
    }

    /// Every buffer written to its layer's file.
    pub(super) fn flush(&mut self, spill: &Spill) -> Result<()> {
        for layer in 0..LAYERS {
            self.flush_layer(layer, spill)?;
        }
        Ok(())
    }

    /// The buffer of `layer` sorted and deduplicated (outside the lock), then written.
    pub(super) fn flush_layer(&mut self, layer: usize, spill: &Spill) -> Result<()> {
        let buf = &mut self.buffers[layer];
        if buf.is_empty() {
            return Ok(());
        }
        self.buffered -= buf.len();
        buf.sort_unstable_by_key(rec_order);
        buf.dedup_by_key(|r| rec_seeds(r));
        let r = lock(spill).append(layer, buf);
        buf.clear();
        buf.shrink_to(0);
        r
    }

    pub(super) fn memory(&self) -> usize {
        self.buffers.iter().map(|b| b.capacity() * RECORD).sum()
    }
}

/// The spill files, shared by the threads of a search.
pub(super) type Spill = std::sync::Mutex<Seeds>;

/// The spill files, locked (a thread that panicked holding them ends the search anyway).
pub(super) fn lock(spill: &Spill) -> std::sync::MutexGuard<'_, Seeds> {
    spill.lock().unwrap_or_else(|e| e.into_inner())
}

/// The kept seeds of a group ([`Seeds::group_of`]).
pub(super) enum Group {
    /// Packed, sorted, each once.
    Seeds(Vec<[u32; 5]>),
    /// More than were asked for at most.
    Many,
    /// The files were not kept.
    NotKept,
}

/// The seeds of later layers on disk (per layer, a file of sorted runs), and the finished layers' files
/// kept for lines.
pub(super) struct Seeds {
    pub(super) dir: SpillDir,
    pub(super) files: Vec<Option<BufWriter<File>>>,
    /// Per layer: the bytes written to its file, and where each sorted run of it starts and whether its
    /// records are lean ([`LEAN`]).
    pub(super) written: Vec<u64>,
    pub(super) runs: Vec<Runs>,
    pub(super) disk: u64,
    /// Whether finished layers' files are kept for lines, and the most bytes they may take on disk
    /// (past it they are removed and a win comes without a line).
    pub(super) keep: bool,
    pub(super) max_kept: u64,
    pub(super) kept: u64,
    /// Bytes of the last layer's file when it is not kept (removed when the next layer's replaces it).
    pub(super) transient: u64,
    /// Free disk space a write must leave; a write that would leave less is not made, and the search
    /// ends undecided ([`Budget::Disk`]) instead of failing on a full disk.
    pub(super) min_free: u64,
    pub(super) disk_low: bool,
    /// The layer whose file is being merged.
    pub(super) merging: Option<usize>,
    /// Within that layer (resumable searches): the checkpoint saved at its start, the base of the ones
    /// saved within it ([`Seeds::save_within`]), when it was saved, and the groups finished since and the
    /// groups searched by levels, as the last checkpoint within the layer lists them.
    pub(super) layer_start: Option<(Checkpoint, Instant)>,
    pub(super) finished: Vec<Finished>,
    pub(super) by_levels: Vec<LevelState>,
    /// When the last checkpoint was saved.
    pub(super) saved_at: Option<Instant>,
    /// Level files are numbered from here (past those a resumed checkpoint lists).
    pub(super) level_base: u64,
    /// Tests: the simulated disk size ([`DISK_SIZE`]) of the thread that started the search.
    #[cfg(test)]
    pub(super) disk_size: Option<u64>,
    /// Tests: the checkpoints within layers still to save before the search stops ([`KILL_WITHIN`]).
    #[cfg(test)]
    pub(super) kill_within: Option<usize>,
    /// Tests: the runs still to write before a write fails as on a full disk ([`FULL_AFTER`]).
    #[cfg(test)]
    pub(super) full_after: Option<usize>,
}

impl Seeds {
    pub(super) fn new(max_kept: u64, min_free: u64, dir: SpillDir) -> Result<Seeds> {
        Ok(Seeds {
            dir,
            files: (0..LAYERS).map(|_| None).collect(),
            written: vec![0; LAYERS],
            runs: vec![Vec::new(); LAYERS],
            disk: 0,
            keep: true,
            max_kept,
            kept: 0,
            transient: 0,
            min_free,
            disk_low: false,
            merging: None,
            layer_start: None,
            finished: Vec::new(),
            by_levels: Vec::new(),
            saved_at: None,
            level_base: 0,
            #[cfg(test)]
            disk_size: DISK_SIZE.get(),
            #[cfg(test)]
            kill_within: KILL_WITHIN.get(),
            #[cfg(test)]
            full_after: FULL_AFTER.get(),
        })
    }

    /// Append `buf` (sorted by [`rec_order`], each key once) to `layer`'s file as one sorted run.
    pub(super) fn append(&mut self, layer: usize, buf: &[Rec]) -> Result<()> {
        if self.keep
            && self.kept + self.written[layer] + (buf.len() * RECORD) as u64 > self.max_kept
        {
            // The layer's file will not be kept for lines when its turn comes (the kept files only
            // grow): the lines are forgotten now, and the seeds from here on written lean.
            self.forget_kept();
        }
        let lean = !self.keep;
        let bytes = (buf.len() * if lean { LEAN } else { RECORD }) as u64;
        if self.keep && self.kept > 0 && self.short_of(bytes) {
            // The files kept for lines go first: the proof goes on, a win would come without a line.
            self.forget_kept();
        }
        self.disk_low |= self.short_of(bytes);
        if self.disk_low {
            // Dropped: the search is no longer complete and ends undecided at its next check.
            return Ok(());
        }
        let path = self.dir.file(layer);
        if self.files[layer].is_none() {
            // Appending: a resumed search goes on with the runs its checkpoint lists.
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| io_error(&path, e))?;
            self.files[layer] = Some(BufWriter::with_capacity(1 << 20, f));
        }
        #[cfg(test)]
        if let Some(n) = self.full_after {
            if n == 0 {
                let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
                return Err(io_error(&path, full));
            }
            self.full_after = Some(n - 1);
        }
        let w = self.files[layer].as_mut().expect("an open file");
        write_recs(w, buf, lean).map_err(|e| io_error(&path, e))?;
        self.runs[layer].push((self.written[layer], lean));
        self.written[layer] += bytes;
        self.disk += bytes;
        Ok(())
    }

    /// `layer`'s file, its seeds all written (every thread's buffer of the layer flushed), to be merged
    /// by each thread ([`Merge::open`]); `None` when the layer has no seeds. The file is kept (with the
    /// parents) for [`chain_to`] until the search ends.
    pub(super) fn open_layer(&mut self, layer: usize) -> Result<Option<LayerFile>> {
        let path = self.dir.file(layer);
        match self.files[layer].take() {
            Some(w) => drop(
                w.into_inner()
                    .map_err(|e| io_error(&path, e.into_error()))?,
            ),
            // Written before a checkpoint this search resumed from.
            None if self.written[layer] > 0 => {}
            None => return Ok(None),
        }
        let size = self.written[layer];
        if self.keep && self.kept + size > self.max_kept {
            self.forget_kept();
        }
        let kept = if self.keep {
            self.kept += size;
            self.dir.kept(layer)
        } else {
            // Replaces the previous layer's file.
            self.disk -= self.transient.min(self.disk);
            self.transient = size;
            self.dir.kept(LAYERS)
        };
        std::fs::rename(&path, &kept).map_err(|e| io_error(&kept, e))?;
        self.merging = Some(layer);
        let starts = std::mem::take(&mut self.runs[layer]);
        let runs = starts
            .iter()
            .enumerate()
            .map(|(i, &(at, lean))| (at, starts.get(i + 1).map_or(size, |r| r.0), lean))
            .collect();
        LayerFile::open(kept, runs).map(Some)
    }

    /// Whether writing `bytes` more would leave less free disk than the search must leave.
    pub(super) fn short_of(&self, bytes: u64) -> bool {
        #[cfg(test)]
        if let Some(size) = self.disk_size {
            return size.saturating_sub(self.disk) < bytes + self.min_free;
        }
        free_disk(&self.dir.0).is_some_and(|f| f < bytes + self.min_free)
    }

    /// No more room for lines: forget the finished layers' files (a win then comes without a line). The
    /// file of the layer being merged, if kept, becomes the transient one (its merge reads on; a
    /// resumed search finds it there).
    pub(super) fn forget_kept(&mut self) {
        self.keep = false;
        let mut freed = self.kept;
        if let Some(l) = self.merging {
            let (from, to) = (self.dir.kept(l), self.dir.kept(LAYERS));
            if from.exists() && std::fs::rename(&from, &to).is_ok() {
                self.transient = self.written[l];
                freed -= self.transient.min(freed);
            }
        }
        for l in 0..LAYERS {
            let _ = std::fs::remove_file(self.dir.kept(l));
        }
        self.disk -= freed.min(self.disk);
        self.kept = 0;
    }

    /// Each kept seed of the group of `key` (each record's images under its trades too) with the
    /// position it was reached from (`None`: the start), in the file's order; false when the files
    /// were not kept.
    pub(super) fn each_of_group(
        &self,
        key: &Key,
        mut each: impl FnMut(&Key, Option<&Key>),
    ) -> Result<bool> {
        let path = self.dir.kept(progress(key));
        if !self.keep || !path.exists() {
            return Ok(false);
        }
        let sig = signature(key);
        let mut imaged = Vec::new();
        read_recs(&path, |r| {
            let seed = unpack(&rec_key(r));
            if signature(&seed) != sig {
                return;
            }
            let parent = rec_parent(r);
            let parent = (parent != NO_PARENT).then(|| unpack(&parent));
            images(&seed, parent.as_ref(), r[MASK], &mut imaged);
            for (k, p) in &imaged {
                each(k, p.as_ref());
            }
        })?;
        Ok(true)
    }

    /// The kept seeds of the group of `key`, packed, sorted, each once, unless there are more than
    /// `most`. The file holds a layer's seeds as sorted runs, duplicates across runs included (a giant
    /// layer's several times over): they go as they come, so that at most about twice the group's
    /// seeds (or `most`) are held.
    pub(super) fn group_of(&self, key: &Key, most: Option<usize>) -> Result<Group> {
        let mut group = Vec::new();
        let mut dedup_at = 1 << 20;
        let mut many = false;
        let cap = most.map_or(usize::MAX, |m| 2 * m + 2);
        let kept = self.each_of_group(key, |k, _| {
            if many {
                return;
            }
            group.push(pack(k));
            if group.len() >= dedup_at.min(cap) {
                group.sort_unstable();
                group.dedup();
                dedup_at = dedup_at.max(2 * group.len());
                many = most.is_some_and(|m| group.len() > m);
                if many {
                    group = Vec::new();
                }
            }
        })?;
        if !kept {
            return Ok(Group::NotKept);
        }
        group.sort_unstable();
        group.dedup();
        if many || most.is_some_and(|m| group.len() > m) {
            return Ok(Group::Many);
        }
        Ok(Group::Seeds(group))
    }

    /// The position the kept seed `seed` was reached from, the least when several were (`Some(None)`:
    /// the start); `None` when it is not a kept seed.
    pub(super) fn parent_of(&self, seed: &Key) -> Result<Option<Option<Key>>> {
        let mut least: Option<Option<[u32; 5]>> = None;
        self.each_of_group(seed, |k, p| {
            if k == seed {
                let p = p.map(pack);
                least = Some(least.map_or(p, |q| q.min(p)));
            }
        })?;
        Ok(least.map(|p| p.map(|p| unpack(&p))))
    }

    /// Make the files durable (every buffer written before): what a checkpoint lists is then on disk.
    pub(super) fn sync(&mut self) -> Result<()> {
        for (layer, f) in self.files.iter_mut().enumerate() {
            if let Some(w) = f {
                let path = self.dir.file(layer);
                w.flush().map_err(|e| io_error(&path, e))?;
                w.get_ref().sync_all().map_err(|e| io_error(&path, e))?;
            }
        }
        Ok(())
    }
}

impl Seeds {
    /// Positions of the layer's groups a checkpoint within it lists: the finished groups', and the levels
    /// done of those searched by levels.
    pub(super) fn credit(&self) -> u64 {
        self.finished.iter().map(|f| f.len).sum::<u64>()
            + self.by_levels.iter().map(|g| g.total).sum::<u64>()
    }

    /// Save a checkpoint within the layer being merged (a resumable search's; the caller wrote its
    /// thread's seed buffers first): the layer's start checkpoint, with the later layers' files as they
    /// are now and the groups [`Seeds::finished`] and [`Seeds::by_levels`] list. A group another thread
    /// is searching is not listed: a resumed search searches it again (its seeds written so far are
    /// written again, and the merge takes each key once).
    pub(super) fn save_within(&mut self) -> Result<()> {
        let Some((start, at)) = &self.layer_start else {
            return Ok(());
        };
        let mut c = start.clone();
        c.elapsed_ms += at.elapsed().as_secs_f64() * 1e3;
        self.sync()?;
        if self.disk_low {
            // Seeds were dropped: no checkpoint of an incomplete search.
            return Ok(());
        }
        c.layers.retain(|&(l, _, _)| l == c.layer);
        c.layers.extend(
            (c.layer + 1..LAYERS)
                .filter(|&l| self.written[l] > 0)
                .map(|l| (l, self.written[l], self.runs[l].clone())),
        );
        if !self.keep {
            (c.keep, c.kept) = (false, 0);
            c.kept_layers.clear();
        }
        c.disk = self.disk;
        c.finished = self.finished.clone();
        c.by_levels = self.by_levels.clone();
        c.save(&self.dir.state())?;
        self.saved_at = Some(Instant::now());
        #[cfg(test)]
        if let Some(n) = self.kill_within {
            self.kill_within = n.checked_sub(1);
            if n == 1 {
                return Err(Error::Io("killed (test)".into()));
            }
        }
        Ok(())
    }

    /// Whether a checkpoint within the layer is due: the last one was saved `every` ago.
    pub(super) fn save_due(&self, every: std::time::Duration) -> bool {
        self.layer_start.is_some() && self.saved_at.map_or(true, |t| t.elapsed() >= every)
    }
}

/// Each record of the file at `path`, in order.
pub(super) fn read_recs(path: &Path, mut each: impl FnMut(&Rec)) -> Result<()> {
    let f = File::open(path).map_err(|e| io_error(path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut bytes = [0u8; RECORD];
    loop {
        match r.read_exact(&mut bytes) {
            Ok(()) => each(&decode_rec(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io_error(path, e)),
        }
    }
    Ok(())
}

impl Seeds {
    /// The checkpoint of the search at the start of `layer` (its counts `t`, `identity`, its time
    /// `elapsed_ms`), with the files as they are now.
    pub(super) fn checkpoint(
        &self,
        layer: usize,
        t: &Totals,
        identity: &str,
        elapsed_ms: f64,
    ) -> Checkpoint {
        Checkpoint {
            identity: identity.to_string(),
            layer,
            done: t.done,
            expanded: t.expanded - self.credit(),
            elapsed_ms,
            peak_positions: t.res.peak_positions,
            peak_bytes: t.res.peak_bytes,
            peak_parts: t.res.peak_parts,
            peak_disk: t.res.peak_disk,
            keep: self.keep,
            kept: self.kept,
            transient: self.transient,
            disk: self.disk,
            // The layers to come (a finished layer's file is its kept seeds, or gone).
            layers: (layer..LAYERS)
                .filter(|&l| self.written[l] > 0)
                .map(|l| (l, self.written[l], self.runs[l].clone()))
                .collect(),
            kept_layers: (0..layer)
                .filter(|&l| self.keep && self.written[l] > 0)
                .collect(),
            finished: self.finished.clone(),
            by_levels: self.by_levels.clone(),
        }
    }
}
