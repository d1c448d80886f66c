//! The layered exhaustive search: a proof of unsolvability that holds one layer of the reachable set in
//! memory at a time and keeps the rest on disk (docs/search.md, "Proofs beyond memory"; the design in
//! docs/design.md).
//!
//! Two counts never decrease along a line of play: the cards on the foundations (they never leave), and
//! the cards no longer lying on the card they were dealt on when that card is not their parent (they can
//! never go back there). Their sum, the *progress* of a position ([`progress`], 0..=104), orders the
//! reachable set in layers: a move leads to the same layer or a later one. Within a layer, the cards home
//! and the cards still on their dealt card are fixed too ([`signature`]): a layer splits into groups that
//! cannot reach each other. The search finishes the layers in increasing order, group by group. A
//! group's positions are found from earlier layers (its *seeds*, kept in a spill file of packed 20-byte
//! keys, each with the 20-byte key of the position it came from and the trades whose images of both
//! are seeds too, sorted and deduplicated in batches before they are written) and from each other:
//! depth first, in a set of the group's positions in memory (`Table`: a position is coded in 2 bits per
//! card the group leaves free, in a slot of as few bytes as that takes: 8 for 31 free cards, 14 for 52).
//! The seeds come one at a time from the merge, and the stack is bounded: positions that find it full
//! wait in the set, flagged as not taken, and scans
//! of the set take them. A finished group is dropped: no later position leads back to it. Memory holds
//! the current group's set, the bounded stack, the merge's read buffers and the write buffers; the
//! disk holds the later layers' seeds, duplicates included, and the finished layers' as long as they
//! take at most twice the memory budget (past it, a win comes without a line, and the seeds are written
//! lean from then on: 24 bytes, the key and its trades, instead of 52).
//!
//! The count of a finished search is the exact number of distinct canonical positions reachable (layers
//! are disjoint and each layer's set is exact), the same as [`crate::prover::Prover`]'s. Two groups of
//! a layer that are each other's image under a trade of two cards (`twin.rs`) are searched as one when
//! the first goes by levels: the second's positions are the images of the first's, expanded only for
//! their children in later layers, and counted. A group searched by the orbits of trades of two cards
//! (`trades.rs`) sends the children of each orbit's canonical position on with the trades that map
//! them to the other positions' children, one record for all (the merge gives every image). The group
//! sets keep no parent links; a seed keeps the position it was reached from, and each layer's seeds
//! stay on disk until the search ends. So when a won position turns up, the line to it is found again
//! backwards ([`chain_to`]): a breadth-first search of its group from the group's seeds reaches it,
//! the seed that leads there names a position of an earlier layer, whose group is searched again from
//! its seeds, and so on down to the start. Each step holds the part of one group its search reaches
//! (20 to 40 bytes a position: the group's codes of them, then the path found backwards level by
//! level).
//!
//! Threads ([`LayeredConfig::threads`]) share each layer out group by group: every thread merges the
//! layer's file on its own (passing over the groups of others, the large ones without reading them),
//! and takes the next group no thread has claimed when it is free; the threads' seeds for later
//! layers go to the same files, each flush as a sorted run of its own. The
//! count does not depend on the threads. A layer's groups are few and uneven: one group held 273 of the
//! 274 million positions of layer 48 of deal 982 with 2 cells, and whole groups alone gained nothing
//! (deal 26063 with 1 cell: 52.0 s with two threads against 50.8 s with one, medians of 3). So a thread
//! that finds no group left gives its seed buffers to the layer's idle threads and ends, and a group
//! searched by levels takes them at the start of each level: the level's expansion and its merge into
//! the next are shared out between the threads, the next level in parts, one per thread. The threads
//! may change between layers: a process lends its proofs more ([`lend_threads`]: a worker whose peers
//! have finished lends them their cores) and each proof takes the new count at its next layer, its
//! seed buffers written and made again for that many threads; within the layer, the threads it gained
//! join the next level of a group searched by levels as idle threads (`context::Idle`).
//!
//! A search given a directory of its own ([`LayeredConfig::checkpoint_dir`]) can be resumed: at the start of
//! each layer, every buffer written, it saves a checkpoint there (`Checkpoint`: the bytes and sorted
//! runs of every later layer's file, the finished layers kept, the counts). Killed later, it is run
//! again with the same directory and goes on from that layer: the files are brought back to what the
//! checkpoint lists (the layer's file renamed back, later files cut to their listed bytes). Within a
//! layer it saves the checkpoint again at the end of each level of a group searched by levels (with the
//! two level files the next level starts from), and after a finished group once the last save is a
//! minute old (the group listed, with its count): a giant proof killed loses at most a level.

mod chain;
mod checkpoint;
mod code;
mod cone;
mod context;
mod group;
mod level;
mod levels;
mod merge;
mod packed;
mod search;
mod seeds;
mod spill;
#[cfg(test)]
mod symmetry;
mod table;
#[cfg(test)]
mod tests;
mod trades;
mod twin;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::key::Key;
use crate::layout::Layout;
use crate::limits::Limits;
use crate::outcome::Budget;

use checkpoint::Checkpoint;
use code::{CODE, RECORD};
#[cfg(test)]
use search::search;
use search::search_sharing;
pub(crate) use spill::CHECKPOINT_FILE;

/// Keys buffered for later layers before the buffers are sorted, deduplicated and written.
const FLUSH_KEYS: usize = 1 << 24;

/// How a layered search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayeredOutcome {
    /// Every reachable position was expanded and none is won.
    Unsolvable,
    /// A won (or provably won) position is reachable; [`LayeredResult::chain`] leads there when the
    /// memory held the search for it.
    Won,
    /// A budget ran out.
    Undecided(Budget),
}

/// What a layered search did.
#[derive(Clone, Debug)]
pub struct LayeredResult {
    pub outcome: LayeredOutcome,
    /// Distinct canonical positions reached (the exact reachable set's size when unsolvable).
    pub positions: u64,
    /// Most positions of one group (held at once).
    pub peak_positions: u64,
    /// Most bytes held in memory at once (the group's set, the stack, the merge's read buffers and the
    /// write buffers).
    pub peak_bytes: usize,
    /// The parts of [`LayeredResult::peak_bytes`]: the group's set, the stack, the merge's read buffers,
    /// the write buffers; and the positions of the group then searched.
    pub peak_parts: [usize; 5],
    /// Most bytes of spill files on disk at once.
    pub peak_disk: u64,
    pub elapsed_ms: f64,
    /// When won: the canonical keys from the start to a won or sorted position, each one move from the
    /// one before (empty when the memory did not hold a group with its parent links).
    pub chain: Vec<Key>,
    /// When won without a line (its files forgotten, or a group too large for the memory): the
    /// position won at, or whose child is won. [`prove_layered`] searches again for a line to it.
    pub won_at: Option<Key>,
}

impl LayeredResult {
    /// The same result with its memory peaks at zero: where a thread starts counting its own peaks in a
    /// layer.
    pub(super) fn with_peaks_cleared(&self) -> LayeredResult {
        LayeredResult {
            peak_positions: 0,
            peak_bytes: 0,
            peak_parts: [0; 5],
            ..self.clone()
        }
    }
}

/// The threads lent to this process's layered proofs (0: none, each proof keeps its own).
static LENT: AtomicUsize = AtomicUsize::new(0);

/// Every layered proof of this process, running or to come, searches its next layers on `threads`
/// threads instead of its [`LayeredConfig::threads`] (0: back to those), and more from the next level
/// of a group searched by levels within the layer. A proof's count does not
/// depend on its threads, so it may change at any time; the memory budget stays the proof's, shared
/// out between however many threads it has.
pub fn lend_threads(threads: usize) {
    LENT.store(threads, Ordering::Relaxed);
}

/// The threads lent by [`lend_threads`] (0: none).
pub fn lent_threads() -> usize {
    LENT.load(Ordering::Relaxed)
}

/// The threads a proof given `threads` runs on now: those lent ([`lend_threads`]) if any.
pub(crate) fn threads_now(threads: usize) -> usize {
    match lent_threads() {
        0 => threads.max(1),
        n => n,
    }
}

/// The part of the machine a layered proof has while other searches run beside it: its threads and
/// the bytes of its memory budget it may hold. Its caller may change them at any time; the proof reads
/// them at the start of each layer. Neither changes its count, nor its checkpoints: a proof that
/// starts with a part goes on with the whole (and resumes) as any other of its memory budget.
#[derive(Debug, Default)]
pub struct Share {
    /// Threads of the proof (0: its own, [`LayeredConfig::threads`] or those lent).
    threads: AtomicUsize,
    /// Bytes of its memory budget it may hold, shared out between its threads (0: the whole budget).
    memory: AtomicUsize,
}

impl Share {
    /// `threads` threads within `memory` bytes.
    pub fn new(threads: usize, memory: usize) -> Share {
        Share {
            threads: AtomicUsize::new(threads),
            memory: AtomicUsize::new(memory),
        }
    }

    /// From the next layer on, the proof's own threads and its whole memory budget.
    pub fn whole(&self) {
        self.threads.store(0, Ordering::Relaxed);
        self.memory.store(0, Ordering::Relaxed);
    }

    /// The threads (0: the proof's own) and the bytes (0: the whole budget) given now.
    fn now(&self) -> (usize, usize) {
        (
            self.threads.load(Ordering::Relaxed),
            self.memory.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
thread_local! {
    /// Tests: the threads of each layer in turn (in place of the lent ones; a proof on the test's
    /// thread takes the next at each layer).
    static THREAD_PLAN: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Tests: the checkpoints a resumable search saves before it stops, as if killed (its files stay).
    static KILL_AFTER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: whether that kill comes as the last checkpoint is saved (else after the layer's first
    /// group).
    static KILL_AT_ONCE: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Tests: a disk of this many bytes that holds the seeds' files only.
    static DISK_SIZE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// Tests: a kill after the first group that ends with the kept files forgotten.
    static KILL_ON_FORGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests: the checkpoints within layers a resumable search saves before it stops, as if killed
    /// right after the last one.
    static KILL_WITHIN: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: the runs of seeds written before a write fails as on a full disk.
    static FULL_AFTER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: the memory of the way back to a win ([`chain::chain_to`]), in place of the search's.
    static WAY_BACK_ROOM: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: the free disk the way back must leave when it searches a group on disk
    /// ([`chain::group_path_on_disk`]), in place of the search's.
    static WAY_BACK_MIN_FREE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// Tests: the positions the last search on this thread that ended without a win expanded,
    /// every thread's (an orbit's members and a twin's images each count one).
    static EXPANDED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How a layered proof runs besides its limits: its memory, its write buffers, its threads, and where
/// its files go. [`LayeredConfig::default`]: no memory bound, buffers of [`flush_keys`]`(None)` keys,
/// one thread, spill files in the system's temporary directory (`TMPDIR`), not resumable.
#[derive(Clone, Debug)]
pub struct LayeredConfig {
    /// Bytes held in memory at most (running out is undecided, [`Budget::Positions`]).
    pub max_memory: Option<usize>,
    /// Keys buffered for later layers before they are written to disk; `None`:
    /// [`flush_keys`]`(max_memory)`.
    pub flush_keys: Option<usize>,
    /// Threads searching each layer: each group of a layer goes to the first thread free for it, and
    /// the memory is shared out between them. The count is the same whatever the threads; a win may
    /// be another one, found after other positions.
    pub threads: usize,
    /// Positions of a group's set past which the group is searched by levels; `None`: 2^21. For
    /// measurements and tests of the levels: it changes no count.
    pub max_set_len: Option<usize>,
    /// Whether a group searched by levels whose seeds trades of two cards keep holds one position of
    /// each orbit of the trades (docs/reductions.md, "Trades within a group"): the count and the
    /// positions sent to later layers are the same either way.
    pub trades: bool,
    /// A directory of the search's own, which makes it resumable: at the start of every layer it
    /// saves a checkpoint there, and a search of the same start position, cells and memory started
    /// with the same directory goes on from the last checkpoint instead of the start (after its
    /// process was killed, say). The directory is removed when the search decides (it stays after an
    /// error or a budget run out).
    pub checkpoint_dir: Option<PathBuf>,
    /// The part of the machine the proof has while other searches run beside it, if any (`None`: its
    /// threads and its whole memory budget throughout).
    pub share: Option<Arc<Share>>,
}

impl Default for LayeredConfig {
    fn default() -> Self {
        LayeredConfig {
            max_memory: None,
            flush_keys: None,
            threads: 1,
            max_set_len: None,
            trades: true,
            checkpoint_dir: None,
            share: None,
        }
    }
}

/// Search every position reachable from `layout` with `ncells` free cells, layer by layer, within
/// `limits` and as `config` says.
pub fn prove_layered(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    config: &LayeredConfig,
) -> Result<LayeredResult> {
    let max_memory = config.max_memory;
    let flush = config.flush_keys.unwrap_or_else(|| flush_keys(max_memory));
    let bounds = Bounds {
        threads: config.threads,
        max_set_len: config.max_set_len.unwrap_or(MAX_SET_LEN),
        trades: config.trades,
        ..bounds(max_memory)
    };
    let dir = config.checkpoint_dir.as_deref();
    let share = config.share.as_deref();
    search_sharing(
        layout, ncells, limits, max_memory, flush, bounds, dir, share,
    )
}

/// Keys buffered before a flush within `max_memory`: the write buffers take at most an eighth of it
/// (twice that with the slack of growing vectors).
pub fn flush_keys(max_memory: Option<usize>) -> usize {
    max_memory.map_or(FLUSH_KEYS, |m| (m / 8 / RECORD).clamp(1 << 12, FLUSH_KEYS))
}

/// Whether `dir` holds the checkpoint of a resumable layered search.
pub fn has_checkpoint(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(CHECKPOINT_FILE))
        .ok()
        .and_then(|t| Checkpoint::parse(&t))
        .is_some()
        || search::won_at_saved(dir)
}

fn bounds(max_memory: Option<usize>) -> Bounds {
    Bounds {
        // The files kept for lines take at most twice the memory budget on disk.
        max_kept: max_memory.map_or(u64::MAX, |m| 2 * m as u64),
        // The stack of positions to expand takes at most a sixteenth of it.
        max_stack_bytes: max_memory.map_or(usize::MAX, |m| m / 16),
        // A group's set goes over to levels past MAX_SET_LEN positions, or when the memory runs out.
        max_set_len: MAX_SET_LEN,
        trades: true,
        // A group searched by levels sorts chunks of a quarter of it (64 Mi codes, 1 GiB, without).
        level_chunk: max_memory.map_or(1 << 26, |m| (m / 4 / CODE).max(1 << 16)),
        min_free_disk: MIN_FREE_DISK,
        threads: 1,
        save_every_ms: 60_000,
        cone: None,
    }
}

/// The bounds of a layered search besides its limits and memory.
#[derive(Clone, Copy)]
struct Bounds {
    /// Bytes of finished layers' files kept for lines.
    max_kept: u64,
    /// Bytes of the stack of positions to expand; positions past it wait in the group's set, untaken,
    /// and are found again by a scan of the set.
    max_stack_bytes: usize,
    /// Positions of a group's set past which the group is searched again by levels
    /// ([`search_by_levels`]), as when the memory runs out (tests set it low; it does not change the
    /// count).
    max_set_len: usize,
    /// Whether groups searched by levels are searched by orbits where trades keep their seeds.
    trades: bool,
    /// Codes a group searched by levels sorts in memory before it writes them as a run.
    level_chunk: usize,
    /// Free disk space the spill files must leave ([`Budget::Disk`]).
    min_free_disk: u64,
    /// Threads searching each layer's groups (the memory budget is shared out between them).
    threads: usize,
    /// A resumable search saves a checkpoint within a layer after a finished group when the last one is
    /// this old (and at the end of each level of a group searched by levels).
    save_every_ms: u64,
    /// Only the positions that may lie on a line to a given one (the search again for the line of a
    /// win found without one, [`cone`]).
    cone: Option<cone::Cone>,
}

/// Positions of a group's set past which the group is searched again by levels. Past a few million
/// positions a set is often no faster than the levels on one thread and slower for the largest groups
/// (every insertion a cache miss, and scans of the whole set for the positions left waiting when the
/// stack was full), by levels the layer's idle threads share the group, and a group that passes the
/// bound loses its set's work: at 2^25 that was half the time of a 43-million-position group of deal
/// 8983. At 2^21 the layered proofs of 8983 and 24966 with 1 cell take 0.77 and 0.87 of the time on two
/// threads, but 20410 with 1 cell, whose groups of 2-25 million positions are faster in their sets,
/// 1.21 times as long: a bound that tells such groups apart is open (figures and commands in
/// BENCHMARKS.md, "Other measurements").
const MAX_SET_LEN: usize = 1 << 21;

/// The free disk space a layered proof leaves: a write that would leave less ends the proof undecided.
const MIN_FREE_DISK: u64 = 2 << 30;

/// The counts of a whole search, between its layers.
struct Totals {
    /// Positions of finished groups.
    done: u64,
    expanded: u64,
    res: LayeredResult,
}
