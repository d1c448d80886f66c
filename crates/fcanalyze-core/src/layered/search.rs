//! The layer loop of a layered proof ([`search`]): each layer's seeds merged from disk and shared out
//! group by group between the threads ([`search_share`]), each thread with its context ([`Cx`]); the
//! checkpoints at the start of each layer; the counts and peaks; the end (a proof, a win with its line,
//! a budget).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::key::signature;
use crate::key::Key;
use crate::layer::{progress, LAYERS};
use crate::layout::Layout;
use crate::limits::Limits;
use crate::outcome::Budget;
use crate::position::Position;
use crate::prover::Rules;

use super::chain::chain_to;
use super::checkpoint::{identity, Checkpoint};
use super::code::Frame;
use super::cone::Cone;
use super::context::{lock_idle, Cx, GroupEnd, Idle};
use super::group::search_group;
use super::levels::resume_by_levels;
use super::merge::{LayerFile, Merge};
use super::seeds::{lock, SeedBuf, Seeds, Spill};
use super::spill::{io_error, level_number, SpillDir};
use super::twin::{Reached, Twin, Twins};
use super::{Bounds, LayeredOutcome, LayeredResult, Share, Totals};
#[cfg(test)]
use super::{KILL_AFTER, KILL_AT_ONCE, KILL_ON_FORGET};

/// [`prove_layered`] within `bounds`, writing the seeds of later layers to disk every `flush_keys` keys,
/// its files in `resume` (resumable) if given (tests: [`prove_layered`] makes its bounds from a
/// [`super::LayeredConfig`]).
#[cfg(test)]
pub(super) fn search(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: Bounds,
    resume: Option<&Path>,
) -> Result<LayeredResult> {
    search_sharing(
        layout, ncells, limits, max_memory, flush_keys, bounds, resume, None,
    )
}

/// [`search`] with the part of the machine `share` gives it, if any, read at each layer.
#[allow(clippy::too_many_arguments)]
pub(super) fn search_sharing(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: Bounds,
    resume: Option<&Path>,
    share: Option<&Share>,
) -> Result<LayeredResult> {
    let root = start_key(layout, ncells)?;
    let ident = proof_identity(&root, layout, ncells, max_memory, flush_keys, &bounds);
    // A search for a line that reached its win but whose way back outgrew the memory left its files:
    // the way back is tried again from them, with this search's memory.
    if let Some(d) = resume {
        if let Some(way) = WayBack::load(d, &ident) {
            return way.again(layout, ncells, max_memory, d);
        }
    }
    // A search for a line stopped before it ended goes on from its own checkpoint: the proof it
    // follows is not made again.
    let saved = resume.and_then(|d| WonAt::load(d, &ident));
    let won = match saved {
        Some(won) => won,
        None => {
            let r = search_in(
                layout, ncells, limits, max_memory, flush_keys, bounds, resume, share,
            );
            removed_when_decided(&r, resume);
            let res = r?;
            let won = match res.won_at {
                Some(target) if bounds.cone.is_none() => WonAt {
                    ident,
                    target,
                    proof: res,
                },
                _ => return Ok(res),
            };
            if let Some(d) = resume {
                won.save(d)?;
            }
            won
        }
    };
    let args = (limits, max_memory, flush_keys, bounds);
    search_line(layout, ncells, args, resume, share, won)
}

/// A resumable search's files go when it decides; after an error, or when a budget ran out (the disk,
/// the positions, the time), they stay, so that the search goes on from its last checkpoint once the
/// cause is mended (a freed disk, a larger budget), not from the start.
fn removed_when_decided(r: &Result<LayeredResult>, resume: Option<&Path>) {
    if let (Ok(res), Some(dir)) = (r, resume) {
        if !matches!(res.outcome, LayeredOutcome::Undecided(_)) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The subdirectory of a resumable proof's directory where the search for the line of its win goes
/// (its own files: a search's checkpoint removes the files of its directory it does not list).
const LINE_DIR: &str = "line";

/// Whether the resumable proof in `dir` won without a line and searches for one ([`WonAt`]).
pub(super) fn won_at_saved(dir: &Path) -> bool {
    WonAt::path(dir).exists()
}

/// A proof won without a line ([`LayeredResult::won_at`]): the proof's identity and result, and the
/// position it won at. Saved in the proof's directory while the search for the line runs.
struct WonAt {
    ident: String,
    target: Key,
    proof: LayeredResult,
}

/// The first line of a [`WonAt`] file.
const WON_AT_FORMAT: &str = "fcanalyze-layered-won-at/1";

impl WonAt {
    fn path(dir: &Path) -> std::path::PathBuf {
        dir.join("won-at")
    }

    /// Written to `dir` (created), atomically.
    fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        let text = win_text(WON_AT_FORMAT, &self.ident, &self.target, &self.proof);
        save_win(&WonAt::path(dir), &text)
    }

    /// The one saved in `dir` by the proof of identity `ident`, if any.
    fn load(dir: &Path, ident: &str) -> Option<WonAt> {
        let (target, proof) = load_win(&WonAt::path(dir), WON_AT_FORMAT, ident)?;
        Some(WonAt {
            ident: ident.to_string(),
            target,
            proof,
        })
    }
}

/// The text of a win saved without its line ([`WonAt`], [`WayBack`]): the format, the proof's
/// identity, the position won at and the search's counts.
fn win_text(format: &str, ident: &str, t: &Key, r: &LayeredResult) -> String {
    format!(
        "{format}\nproof {ident}\ntarget {:x} {:x} {:x}\npositions {}\nms {}\npeaks {} {} {}\n",
        t[0], t[1], t[2], r.positions, r.elapsed_ms, r.peak_positions, r.peak_bytes, r.peak_disk
    )
}

/// `text` written to `path`, atomically.
fn save_win(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| io_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_error(path, e))
}

/// The position won at and the counts of the win saved at `path` ([`win_text`]) in `format` by the
/// proof of identity `ident`, if any (the result won, without a line).
fn load_win(path: &Path, format: &str, ident: &str) -> Option<(Key, LayeredResult)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != format || lines.next()?.strip_prefix("proof ")? != ident {
        return None;
    }
    let mut field = |name: &str| -> Option<Vec<String>> {
        let rest = lines.next()?.strip_prefix(name)?.strip_prefix(' ')?;
        Some(rest.split(' ').map(str::to_string).collect())
    };
    let hex = |w: &String| u64::from_str_radix(w, 16).ok();
    let target = field("target")?;
    let target = [
        hex(target.first()?)?,
        hex(target.get(1)?)?,
        hex(target.get(2)?)?,
    ];
    let positions = field("positions")?.first()?.parse().ok()?;
    let elapsed_ms = field("ms")?.first()?.parse().ok()?;
    let peaks = field("peaks")?;
    let peak = |i: usize| peaks.get(i)?.parse::<u64>().ok();
    let result = LayeredResult {
        outcome: LayeredOutcome::Won,
        positions,
        peak_positions: peak(0)?,
        peak_bytes: peak(1)? as usize,
        peak_parts: [0; 5],
        peak_disk: peak(2)?,
        elapsed_ms,
        chain: vec![],
        won_at: Some(target),
    };
    Some((target, result))
}

/// The line of the win `won` found without one: a second search from the start that keeps to the
/// positions that may lie on a line to it ([`super::cone`]), trades aside, every line kept (its files
/// go only before the disk runs out), within what is left of the budgets; resumable in [`LINE_DIR`] of
/// `resume`. The result counts both searches; the line's search decides the outcome (undecided when
/// its budget runs out; won without a line again only when its way back outgrew the memory, its files
/// then kept with the win, [`WayBack`]).
fn search_line(
    layout: &Layout,
    ncells: usize,
    (limits, max_memory, flush_keys, bounds): (Limits, Option<usize>, usize, Bounds),
    resume: Option<&Path>,
    share: Option<&Share>,
    won: WonAt,
) -> Result<LayeredResult> {
    let dir = resume.map(|d| d.join(LINE_DIR));
    let proof = won.proof;
    if crate::cascade::tracing() {
        eprintln!(
            "fcanalyze trace: won at layer {} without a line after {} positions: searching again \
             toward it",
            progress(&won.target),
            proof.positions
        );
    }
    let line_bounds = Bounds {
        cone: Some(Cone::of(&won.target)),
        trades: false,
        max_kept: u64::MAX,
        ..bounds
    };
    let line_limits = Limits {
        max_positions: limits.max_positions.saturating_sub(proof.positions).max(1),
        max_millis: limits
            .max_millis
            .map(|m| m.saturating_sub(proof.elapsed_ms as u64).max(1)),
    };
    let r = search_in(
        layout,
        ncells,
        line_limits,
        max_memory,
        flush_keys,
        line_bounds,
        dir.as_deref(),
        share,
    );
    // Won without a line: the way back outgrew the memory, and its files stay for another try.
    let lost = matches!(&r, Ok(l) if l.outcome == LayeredOutcome::Won && l.chain.is_empty());
    if !lost {
        removed_when_decided(&r, resume);
    }
    let line = r?;
    if line.outcome == LayeredOutcome::Unsolvable {
        return Err(Error::Internal(format!(
            "the search for the line of a win at layer {} found no win",
            progress(&won.target)
        )));
    }
    let (peak_bytes, peak_parts) = if line.peak_bytes > proof.peak_bytes {
        (line.peak_bytes, line.peak_parts)
    } else {
        (proof.peak_bytes, proof.peak_parts)
    };
    let res = LayeredResult {
        outcome: line.outcome,
        positions: proof.positions + line.positions,
        peak_positions: proof.peak_positions.max(line.peak_positions),
        peak_bytes,
        peak_parts,
        peak_disk: proof.peak_disk.max(line.peak_disk),
        elapsed_ms: proof.elapsed_ms + line.elapsed_ms,
        won_at: line.won_at.map(|_| won.target),
        chain: line.chain,
    };
    if let (true, Some(target), Some(resume)) = (lost, line.won_at, resume) {
        let way = WayBack {
            ident: won.ident,
            target,
            result: res.clone(),
        };
        way.save(resume)?;
    }
    Ok(res)
}

/// The first line of a [`WayBack`] file.
const WAY_BACK_FORMAT: &str = "fcanalyze-layered-way-back/1";

/// A search for a line that reached a win (`target`, a won position or one with a won child) but
/// whose way back to the start outgrew the memory ([`chain_to`]): its result, saved in the proof's
/// directory beside the search's files (the kept seeds of every layer), so that a search of the same
/// deal and cells, with any memory, tries the way back again from them instead of searching again.
/// Deal 155219 with 1 cell reached its win twice, each time after billions of positions, and lost it
/// to the memory of the way back.
struct WayBack {
    /// The proof's identity ([`identity`]).
    ident: String,
    target: Key,
    result: LayeredResult,
}

impl WayBack {
    fn path(dir: &Path) -> std::path::PathBuf {
        dir.join("way-back")
    }

    /// The identity without what the memory shapes (the memory, the buffers, the kept files' budget,
    /// the stack): the kept seeds serve a way back made with any memory.
    fn deal_of(ident: &str) -> String {
        let shaped = ["memory=", "flush=", "kept=", "stack="];
        ident
            .split(' ')
            .filter(|w| !shaped.iter().any(|s| w.starts_with(s)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Written to `dir`, atomically.
    fn save(&self, dir: &Path) -> Result<()> {
        let deal = Self::deal_of(&self.ident);
        let text = win_text(WAY_BACK_FORMAT, &deal, &self.target, &self.result);
        save_win(&WayBack::path(dir), &text)
    }

    /// The one saved in `dir` by a proof of the same deal and cells as `ident`, if any.
    fn load(dir: &Path, ident: &str) -> Option<WayBack> {
        let path = WayBack::path(dir);
        let (target, result) = load_win(&path, WAY_BACK_FORMAT, &Self::deal_of(ident))?;
        Some(WayBack {
            ident: ident.to_string(),
            target,
            result,
        })
    }

    /// The way back tried again from the files in `dir` within `max_memory`: the result with its line
    /// (the files removed), or won without a line again (the files kept).
    fn again(
        self,
        layout: &Layout,
        ncells: usize,
        max_memory: Option<usize>,
        dir: &Path,
    ) -> Result<LayeredResult> {
        let start = Instant::now();
        let rules = Rules::new(layout, ncells);
        let seeds = Seeds::new(u64::MAX, 0, SpillDir::at(&dir.join(LINE_DIR))?)?;
        let tail = (!rules.is_sorted(&self.target)).then_some([0; 3]);
        if crate::cascade::tracing() {
            eprintln!(
                "fcanalyze trace: won at layer {} without a line after {} positions: the way back \
                 again from its files",
                progress(&self.target),
                self.result.positions
            );
        }
        let chain = chain_to(&rules, &seeds, self.target, tail, max_memory)?;
        drop(seeds);
        let mut res = self.result;
        res.elapsed_ms += start.elapsed().as_secs_f64() * 1e3;
        if !chain.is_empty() {
            res.chain = chain;
            res.won_at = None;
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(res)
    }
}

/// The start of `layout` with `ncells` cells (its automatic moves made).
fn start_key(layout: &Layout, ncells: usize) -> Result<Key> {
    let (mut p0, _) = Position::from_layout(layout, ncells)?;
    p0.settle(None);
    Ok(*p0.key())
}

/// The identity in its checkpoints ([`identity`]) of the proof of `layout` from `root` with `ncells`
/// cells.
fn proof_identity(
    root: &Key,
    layout: &Layout,
    ncells: usize,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: &Bounds,
) -> String {
    let flush = flush_keys.max(1);
    identity(root, ncells, layout.autoplay, max_memory, flush, bounds)
}

/// [`search`] before its files are removed: the start, then the layers in order.
#[allow(clippy::too_many_arguments)]
fn search_in(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    bounds: Bounds,
    resume: Option<&Path>,
    share: Option<&Share>,
) -> Result<LayeredResult> {
    let start = Instant::now();
    let root = start_key(layout, ncells)?;
    let rules = Rules::new(layout, ncells);
    let flush_keys = flush_keys.max(1);
    let ident = proof_identity(&root, layout, ncells, max_memory, flush_keys, &bounds);
    let (dir, saved) = match resume {
        Some(path) => {
            let dir = SpillDir::at(path)?;
            let saved = Checkpoint::load(&dir, &ident)?;
            (dir, saved)
        }
        None => (SpillDir::create()?, None),
    };
    let before_ms = saved.as_ref().map_or(0.0, |c| c.elapsed_ms);
    let res = LayeredResult {
        outcome: LayeredOutcome::Unsolvable,
        positions: 0,
        peak_positions: 0,
        peak_bytes: 0,
        peak_parts: [0; 5],
        peak_disk: 0,
        elapsed_ms: 0.0,
        chain: vec![],
        won_at: None,
    };
    if rules.is_sorted(&root) {
        let mut res = res;
        res.positions = 1;
        res.chain = vec![root];
        return Ok(finish(res, LayeredOutcome::Won, before_ms, start));
    }
    let threads = bounds.threads.max(1);
    let spill = Spill::new(Seeds::new(bounds.max_kept, bounds.min_free_disk, dir)?);
    // Each thread's share of the memory: its seeds' buffers, its stack, its group's set.
    let bufs = seed_bufs(flush_keys / threads, threads);
    let mut p = Proof {
        rules,
        limits,
        max_memory,
        bounds,
        threads,
        held: max_memory,
        share,
        flush_keys,
        spill,
        bufs,
        t: Totals {
            done: 0,
            expanded: 0,
            res,
        },
        ident,
        resumable: resume.is_some(),
        start,
        before_ms,
    };
    let first = match saved {
        Some(c) => p.resume_from(c)?,
        None => {
            let first = progress(&root);
            p.bufs[0].push(first, &root, None, 0, &p.spill)?;
            first
        }
    };
    for layer in first..LAYERS {
        match p.layer(layer) {
            Ok(Some(end)) => return Ok(end),
            Ok(None) => {}
            // The free-disk checks did not keep the disk from filling (other writers, other threads):
            // undecided for want of disk, as when a check stops it, the files kept for a resume
            // (which truncates them to its checkpoint's sizes).
            Err(Error::DiskFull(_)) => return Ok(p.finish(LayeredOutcome::Undecided(Budget::Disk))),
            Err(e) => return Err(e),
        }
    }
    if lock(&p.spill).disk_low {
        return Ok(p.finish(LayeredOutcome::Undecided(Budget::Disk)));
    }
    Ok(p.finish(LayeredOutcome::Unsolvable))
}

/// The seed buffers of `threads` threads, of `keys` keys each.
fn seed_bufs(keys: usize, threads: usize) -> Vec<SeedBuf> {
    (0..threads).map(|_| SeedBuf::new(keys.max(1))).collect()
}

/// The threads of a layer of a search given `threads`: those lent to the process if any
/// ([`super::lend_threads`]; in tests, the next of the test's plan if any).
fn layer_threads(threads: usize) -> usize {
    #[cfg(test)]
    {
        let planned = super::THREAD_PLAN.with(|p| {
            let mut p = p.borrow_mut();
            (!p.is_empty()).then(|| p.remove(0))
        });
        if let Some(n) = planned {
            return n.max(1);
        }
    }
    super::threads_now(threads)
}

/// `r` with its outcome, and its time since `start` after `before_ms` (a resumed search's).
fn finish(
    mut r: LayeredResult,
    outcome: LayeredOutcome,
    before_ms: f64,
    start: Instant,
) -> LayeredResult {
    r.outcome = outcome;
    r.elapsed_ms = before_ms + start.elapsed().as_secs_f64() * 1e3;
    r
}

/// A layered search between its layers: what each layer's search needs, and the counts so far.
struct Proof<'a> {
    rules: Rules,
    limits: Limits,
    max_memory: Option<usize>,
    bounds: Bounds,
    /// The threads of the layer searched: [`Bounds::threads`], those lent ([`super::lend_threads`]),
    /// or the share's.
    threads: usize,
    /// Bytes of the memory budget the proof holds now, shared out between its threads: the budget, or
    /// the share's part of it.
    held: Option<usize>,
    /// The part of the machine the proof has beside other searches, if any.
    share: Option<&'a Share>,
    /// Keys buffered for later layers by all the threads together.
    flush_keys: usize,
    spill: Spill,
    /// Each thread's seeds of later layers.
    bufs: Vec<SeedBuf>,
    t: Totals,
    /// The search's identity in its checkpoints.
    ident: String,
    resumable: bool,
    start: Instant,
    /// Milliseconds spent before a resumed search's checkpoint.
    before_ms: f64,
}

/// How a thread's search of a layer ended ([`search_share`]), its positions expanded, its counts and
/// peaks.
type ThreadEnd = (Result<Option<GroupEnd>>, u64, LayeredResult);

impl Proof<'_> {
    /// The search's result so far, with `outcome`.
    fn finish(&self, outcome: LayeredOutcome) -> LayeredResult {
        #[cfg(test)]
        super::EXPANDED.set(self.t.expanded);
        finish(self.t.res.clone(), outcome, self.before_ms, self.start)
    }

    /// Go on from the layer checkpoint `c` was saved at, with its files and counts: that layer.
    fn resume_from(&mut self, c: Checkpoint) -> Result<usize> {
        let t = &mut self.t;
        t.done = c.done;
        t.expanded = c.expanded;
        t.res.positions = c.done;
        t.res.peak_positions = c.peak_positions;
        t.res.peak_bytes = c.peak_bytes;
        t.res.peak_parts = c.peak_parts;
        t.res.peak_disk = c.peak_disk;
        let s = &mut *lock(&self.spill);
        (s.keep, s.kept, s.transient, s.disk) = (c.keep, c.kept, c.transient, c.disk);
        for (l, written, runs) in c.layers {
            s.written[l] = written;
            s.runs[l] = runs;
        }
        for l in c.kept_layers {
            let path = s.dir.kept(l);
            s.written[l] = std::fs::metadata(&path)
                .map_err(|e| io_error(&path, e))?
                .len();
        }
        // Saved within the layer: the groups finished and searched by levels so far (their
        // positions expanded), and level files numbered past theirs.
        s.level_base = c
            .by_levels
            .iter()
            .flat_map(|g| g.files())
            .filter_map(|(name, _)| level_number(name))
            .max()
            .map_or(0, |n| n + 1);
        (s.finished, s.by_levels) = (c.finished, c.by_levels);
        t.expanded += s.credit();
        Ok(c.layer)
    }

    /// Search `layer`; the search's result when it ends there.
    fn layer(&mut self, layer: usize) -> Result<Option<LayeredResult>> {
        let (threads, memory) = self.share.map_or((0, 0), Share::now);
        let threads = match threads {
            0 => layer_threads(self.bounds.threads),
            n => n,
        };
        let held = match (self.max_memory, memory) {
            (Some(m), part) if part > 0 => Some(part.min(m)),
            (m, _) => m,
        };
        self.take_threads(threads, held)?;
        let pending = |bufs: &[SeedBuf]| bufs.iter().any(|b| !b.buffers[layer].is_empty());
        if self.resumable && (lock(&self.spill).written[layer] > 0 || pending(&self.bufs)) {
            if let Some(end) = self.save_layer_start(layer)? {
                return Ok(Some(end));
            }
        }
        // The layer's seeds, group by group, merged from the sorted runs on disk: positions of one
        // signature reach only each other within the layer, so each group is searched with a set of
        // its own, dropped after. Each group goes to the first thread free for it.
        for b in &mut self.bufs {
            b.flush_layer(layer, &self.spill)?;
        }
        let Some(file) = lock(&self.spill).open_layer(layer)? else {
            return Ok(None);
        };
        // Twins are the images of each other under trades, which a search for a line keeps to none of.
        let twins = match self.bounds.cone {
            None => Twins::of(&file, &self.rules)?,
            Some(_) => Twins::default(),
        };
        let (layer_done, ends) = self.share_out(layer, &file, &twins);
        {
            let s = &mut *lock(&self.spill);
            s.layer_start = None;
            s.finished.clear();
            s.by_levels.clear();
        }
        self.add_up(layer_done, &ends);
        if ends.iter().all(|e| matches!(e.0, Ok(None))) {
            self.trace_layer(layer, layer_done, &ends);
        }
        self.end_of_layer(ends)
    }

    /// With `FCANALYZE_TRACE=1`, one line to stderr for a layer searched through: its positions, its
    /// largest group, the positions so far, the time so far and the disk (for the write-ups of giant
    /// proofs). Not for a layer a stop, a budget or a win ended: its positions would be those of the
    /// groups finished (384243's layer 52 with 2 cells, stopped, once printed 133,674,240 positions,
    /// a twentieth of its largest group).
    fn trace_layer(&self, layer: usize, layer_done: u64, ends: &[ThreadEnd]) {
        if !crate::cascade::tracing() {
            return;
        }
        let largest = ends.iter().map(|e| e.2.peak_positions).max().unwrap_or(0);
        let disk = lock(&self.spill).disk;
        eprintln!(
            "fcanalyze trace: layer={layer} positions={layer_done} largest_group={largest} total={} \
             ms={:.0} disk_mb={} peak_disk_mb={}",
            self.t.done,
            self.before_ms + self.start.elapsed().as_secs_f64() * 1e3,
            disk >> 20,
            self.t.res.peak_disk >> 20,
        );
    }

    /// Search the next layers on `threads` threads within `held` bytes of the memory budget (the
    /// rest left to the searches beside the proof): when they change, every seed buffer is written and
    /// they are made again, one per thread, of an equal share of [`Proof::flush_keys`]'s part.
    fn take_threads(&mut self, threads: usize, held: Option<usize>) -> Result<()> {
        if (threads, held) == (self.threads, self.held) && self.bufs.len() == threads {
            return Ok(());
        }
        for b in &mut self.bufs {
            b.flush(&self.spill)?;
        }
        (self.threads, self.held) = (threads, held);
        self.bufs = seed_bufs(self.thread_part(self.flush_keys), threads);
        Ok(())
    }

    /// A thread's part of `whole` (a bound made for the whole memory budget): an equal share of the
    /// part of the budget held now.
    fn thread_part(&self, whole: usize) -> usize {
        let part = match (self.held, self.max_memory) {
            (Some(h), Some(m)) if h < m => (whole as u128 * h as u128 / m as u128) as usize,
            _ => whole,
        };
        part / self.threads
    }

    /// A resumable search's checkpoint at the start of `layer`, every buffer written (the base of the
    /// ones saved within the layer); the search's result when seeds were dropped (no checkpoint of an
    /// incomplete search).
    fn save_layer_start(&mut self, layer: usize) -> Result<Option<LayeredResult>> {
        for b in &mut self.bufs {
            b.flush(&self.spill)?;
        }
        let mut s = lock(&self.spill);
        s.sync()?;
        if s.disk_low {
            // Seeds were dropped: no checkpoint of an incomplete search.
            drop(s);
            return Ok(Some(self.finish(LayeredOutcome::Undecided(Budget::Disk))));
        }
        let elapsed = self.before_ms + self.start.elapsed().as_secs_f64() * 1e3;
        let c = s.checkpoint(layer, &self.t, &self.ident, elapsed);
        c.save(&s.dir.state())?;
        // The base of the checkpoints saved within the layer.
        let c = Checkpoint {
            finished: vec![],
            by_levels: vec![],
            ..c
        };
        s.layer_start = Some((c, Instant::now()));
        s.saved_at = Some(Instant::now());
        #[cfg(test)]
        if let Some(n) = KILL_AFTER.get() {
            KILL_AFTER.set(n.checked_sub(1));
            if n == 1 && KILL_AT_ONCE.get() {
                return Err(Error::Io("killed (test)".into()));
            }
        }
        Ok(None)
    }

    /// The groups of `layer` (its seeds in `file`, its twin groups `twins`) shared out between the
    /// threads: the positions of the groups finished, and how each thread's share ended.
    fn share_out(
        &mut self,
        layer: usize,
        file: &LayerFile,
        twins: &Twins,
    ) -> (u64, Vec<ThreadEnd>) {
        let (rules, spill, t) = (&self.rules, &self.spill, &self.t);
        let (limits, bounds) = (self.limits, self.bounds);
        let (threads, start) = (self.threads, self.start);
        let (held, stack, chunk) = (
            self.held.map(|h| h / threads),
            self.thread_part(self.bounds.max_stack_bytes),
            self.thread_part(self.bounds.level_chunk),
        );
        let bufs = &mut self.bufs;
        let layer_done = AtomicU64::new(0);
        let live = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let next_group = AtomicU64::new(0);
        let idle = Idle::new(threads, self.bounds.threads, self.share);
        let share = |thread: usize, seeds: &mut SeedBuf, expanded: u64| {
            let mut cx = Cx {
                rules,
                seeds,
                spill,
                thread,
                limits,
                max_memory: held,
                max_stack_bytes: stack,
                max_set_len: bounds.max_set_len,
                trades: bounds.trades,
                cone: bounds.cone,
                level_chunk: chunk,
                save_every: std::time::Duration::from_millis(bounds.save_every_ms),
                start,
                layer,
                before: t.done,
                layer_done: &layer_done,
                live: &live,
                told: 0,
                stop: &stop,
                next_group: &next_group,
                expanded,
                merge_bytes: 0,
                kids: Vec::with_capacity(128),
                kids_moved: Vec::with_capacity(128),
                codes: Vec::with_capacity(128),
                // The thread's peaks in this layer.
                res: t.res.with_peaks_cleared(),
                idle: &idle,
                layer_file: file,
                twins,
                twin: None,
                replayed: None,
            };
            let end = search_share(&mut cx, file);
            if !matches!(end, Ok(None | Some(GroupEnd::Stopped))) {
                stop.store(true, Ordering::Relaxed);
            }
            let Cx {
                expanded,
                res,
                seeds,
                ..
            } = cx;
            if threads > 1 && matches!(end, Ok(None)) {
                // No group left to claim: the thread's buffers go to help the groups searched by
                // levels, and the thread ends.
                let empty = SeedBuf::new(seeds.flush_keys);
                lock_idle(&idle).push((thread, std::mem::replace(seeds, empty)));
            }
            (end, expanded, res)
        };
        let ends = if threads == 1 {
            vec![share(0, &mut bufs[0], t.expanded)]
        } else {
            std::thread::scope(|scope| {
                let share = &share;
                let running: Vec<_> = bufs
                    .iter_mut()
                    .enumerate()
                    .map(|(i, b)| {
                        scope.spawn(move || share(i, b, if i == 0 { t.expanded } else { 0 }))
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|h| h.join().expect("a thread of the layered proof panicked"))
                    .collect::<Vec<_>>()
            })
        };
        // The idle threads' buffers back in their places (left empty when they were given up), and
        // those of the threads that joined the layer after them (written at the next layer's start).
        let mut joined = Vec::new();
        for (thread, seeds) in idle.waiting.into_inner().unwrap_or_else(|e| e.into_inner()) {
            match bufs.get_mut(thread) {
                Some(b) => *b = seeds,
                None => joined.push((thread, seeds)),
            }
        }
        joined.sort_unstable_by_key(|j| j.0);
        bufs.extend(joined.into_iter().map(|j| j.1));
        (layer_done.into_inner(), ends)
    }

    /// The layer's counts: its groups' positions (`layer_done`), and the threads' peaks (their sums:
    /// the threads' peaks may come at once).
    fn add_up(&mut self, layer_done: u64, ends: &[ThreadEnd]) {
        let t = &mut self.t;
        t.done += layer_done;
        t.expanded = ends.iter().map(|e| e.1).sum();
        let mut positions = t.done;
        let mut peak_bytes = 0;
        let mut peak_parts = [0; 5];
        for (_, _, r) in ends {
            positions = positions.max(r.positions);
            t.res.peak_positions = t.res.peak_positions.max(r.peak_positions);
            t.res.peak_disk = t.res.peak_disk.max(r.peak_disk);
            peak_bytes += r.peak_bytes;
            for (p, q) in peak_parts.iter_mut().zip(r.peak_parts) {
                *p += q;
            }
        }
        if peak_bytes > t.res.peak_bytes {
            (t.res.peak_bytes, t.res.peak_parts) = (peak_bytes, peak_parts);
        }
        t.res.positions = positions;
    }

    /// The search's result when the layer ended it (a win with its line, a budget, an error), in the
    /// threads' order; `None` when every group of the layer was searched through.
    fn end_of_layer(&self, ends: Vec<ThreadEnd>) -> Result<Option<LayeredResult>> {
        let mut out = None;
        for (end, _, _) in ends {
            match end? {
                None | Some(GroupEnd::Stopped) | Some(GroupEnd::Done(_)) => {}
                Some(GroupEnd::Won { .. }) if lock(&self.spill).disk_low => {
                    // Won, but the line may lead through seeds that were dropped.
                    out = out.or(Some(Budget::Disk));
                }
                Some(GroupEnd::Won { target, tail, len }) => {
                    // The line to it, found again backwards.
                    let t = &self.t;
                    let mut res = t.res.clone();
                    res.positions = t.done + len as u64;
                    let seeds = lock(&self.spill);
                    #[cfg(test)]
                    let room = super::WAY_BACK_ROOM.get().or(self.max_memory);
                    #[cfg(not(test))]
                    let room = self.max_memory;
                    res.chain = chain_to(&self.rules, &seeds, target, tail, room)?;
                    res.won_at = res.chain.is_empty().then_some(target);
                    drop(seeds);
                    let won = finish(res, LayeredOutcome::Won, self.before_ms, self.start);
                    return Ok(Some(won));
                }
                Some(GroupEnd::Out(b)) => out = out.or(Some(b)),
            }
        }
        Ok(out.map(|b| self.finish(LayeredOutcome::Undecided(b))))
    }
}

/// This thread's share of the groups of the layer in `file` (each group goes to the first thread free
/// for it), each searched with a set of its own and dropped after; a follower of a twin pair is
/// passed over when its owner's search takes it on, and counted with the owner ([`super::twin`]).
/// `None` when every group was searched through; else how the thread's search of the layer ended: a
/// win, a budget, or [`GroupEnd::Stopped`] when another thread ended first.
pub(super) fn search_share(cx: &mut Cx, file: &LayerFile) -> Result<Option<GroupEnd>> {
    let mut merge = Merge::open(file)?;
    cx.merge_bytes = merge.memory();
    // The groups are numbered in the merge's order (the same in every thread's merge); each thread
    // claims the next number when it is free, and skips to that group.
    let mut passed = 0u64;
    let mut claim = cx.next_group.fetch_add(1, Ordering::Relaxed);
    while let Some(h) = merge.peek_hash() {
        passed += 1;
        if passed <= claim {
            merge.skip_group(h)?;
            continue;
        }
        // The seeds of this hash: the first one's group is searched with them as they come, the seeds
        // of other groups with the same hash (rare) are kept aside and searched after.
        let mut aside: Vec<Key> = Vec::new();
        let mut first = merge.next_seed(h)?;
        while let Some(seed) = first {
            let sig = signature(&seed);
            let mut rest = std::mem::take(&mut aside).into_iter();
            let mut more = || -> Result<Option<Key>> {
                for k in rest.by_ref() {
                    if signature(&k) == sig {
                        return Ok(Some(k));
                    }
                    aside.push(k);
                }
                while let Some(k) = merge.next_seed(h)? {
                    if signature(&k) == sig {
                        return Ok(Some(k));
                    }
                    aside.push(k);
                }
                Ok(None)
            };
            match cx.twins.wait(claim, &sig, cx.stop) {
                // Its owner's search counts it.
                Reached::Taken => while more()?.is_some() {},
                Reached::Stopped => return Ok(Some(GroupEnd::Stopped)),
                Reached::Search => {
                    let twin = cx.twins.follower(claim, &sig);
                    if let Some(end) = search_one(cx, (claim, sig), seed, &mut more, twin)? {
                        return Ok(Some(end));
                    }
                    if let (Some(t), Some(len)) = (twin, cx.replayed.take()) {
                        if let Some(end) = counted(cx, (t.group, t.sig), len, false)? {
                            return Ok(Some(end));
                        }
                    }
                }
            }
            first = (!aside.is_empty()).then(|| aside.remove(0));
        }
        claim = cx.next_group.fetch_add(1, Ordering::Relaxed);
    }
    Ok(None)
}

/// Search group `group` of signature `sig` from its seed `seed` and the others `more` gives (its
/// follower `twin` with it when by levels), or go on from where a checkpoint within the layer left
/// it; then count it ([`counted`]). `None` when it was searched through.
fn search_one(
    cx: &mut Cx,
    (group, sig): (u64, [u64; 6]),
    seed: Key,
    more: &mut dyn FnMut() -> Result<Option<Key>>,
    twin: Option<Twin>,
) -> Result<Option<GroupEnd>> {
    // A group a checkpoint within the layer lists, finished or searched by levels so far.
    let (finished, state) = {
        let s = lock(cx.spill);
        let listed = |g: u64, s: &[u64; 6]| (g, *s) == (group, sig);
        (
            s.finished
                .iter()
                .find(|f| listed(f.group, &f.sig))
                .map(|f| f.len),
            s.by_levels
                .iter()
                .find(|g| listed(g.group, &g.sig))
                .cloned(),
        )
    };
    (cx.twin, cx.replayed) = (twin, None);
    let end = match (finished, state) {
        (Some(len), _) => {
            while more()?.is_some() {}
            GroupEnd::Done(len as usize)
        }
        (None, Some(state)) => resume_by_levels(cx, state, &Frame::of(&seed), more)?,
        (None, None) => search_group(cx, group, seed, more)?,
    };
    if let Some(t) = cx.twin.take() {
        // The search ended in the group's set: its follower is searched on its own.
        cx.twins.decide(&t, false);
    }
    match end {
        GroupEnd::Done(len) => counted(cx, (group, sig), len, finished.is_some()),
        end => Ok(Some(end)),
    }
}

/// Group `group` of signature `sig` is searched through, with `len` positions (`listed`: as a
/// checkpoint within the layer says): listed in the next checkpoint and counted. `None` unless the
/// layer's search ends there (a budget, another thread's end).
fn counted(
    cx: &mut Cx,
    (group, sig): (u64, [u64; 6]),
    len: usize,
    listed: bool,
) -> Result<Option<GroupEnd>> {
    if !listed {
        cx.finished(group, sig, len)?;
    }
    cx.res.peak_positions = cx.res.peak_positions.max(len as u64);
    cx.layer_done.fetch_add(len as u64, Ordering::Relaxed);
    cx.res.positions = cx.tell(0);
    if cx.res.positions >= cx.limits.max_positions {
        return Ok(Some(GroupEnd::Out(Budget::Positions)));
    }
    if lock(cx.spill).disk_low {
        return Ok(Some(GroupEnd::Out(Budget::Disk)));
    }
    if cx.stop.load(Ordering::Relaxed) {
        return Ok(Some(GroupEnd::Stopped));
    }
    // Tests: killed after a group, its layer's file renamed and later layers' files grown since the
    // checkpoint.
    #[cfg(test)]
    if KILL_AFTER.get() == Some(0) || KILL_ON_FORGET.get() && !lock(cx.spill).keep {
        cx.seeds.flush(cx.spill)?;
        return Err(Error::Io("killed (test)".into()));
    }
    Ok(None)
}
