//! The layered exhaustive search: a proof of unsolvability that holds one layer of the reachable set in
//! memory at a time and keeps the rest on disk (../shared/SEARCH.md, "Ideas for the proofs that remain
//! out of reach in memory").
//!
//! Two counts never decrease along a line of play: the cards on the foundations (they never leave), and
//! the cards no longer lying on the card they were dealt on when that card is not their parent (they can
//! never go back there). Their sum, the *progress* of a position ([`progress`], 0..=104), orders the
//! reachable set in layers: a move leads to the same layer or a later one. Within a layer, the cards home
//! and the cards still on their dealt card are fixed too ([`signature`]): a layer splits into groups that
//! cannot reach each other. The search finishes the layers in increasing order, group by group. A
//! group's positions are found from earlier layers (its *seeds*, kept in a spill file of packed 20-byte
//! keys, each with the 20-byte key of the position it came from, sorted and deduplicated in batches
//! before they are written) and from each other (depth first, in a set of the group's positions in
//! memory: [`GroupSet`], 8 bytes a slot for most groups). A finished group is dropped: no later position
//! leads back to it. Memory holds the current group's seeds and set and the write
//! buffers; the disk holds the later layers' seeds, duplicates included, and the finished layers' as long
//! as they take at most twice the memory budget (past it, a win comes without a line).
//!
//! The count of a finished search is the exact number of distinct canonical positions reachable (layers
//! are disjoint and each layer's set is exact), the same as [`crate::prove::Prover`]'s. The group sets
//! keep no parent links; a seed keeps the position it was reached from, and each layer's seeds stay on
//! disk until the search ends. So when a won position turns up, the line to it is found again backwards
//! ([`chain_to`]): a breadth-first search of its group from the group's seeds reaches it, the seed that
//! leads there names a position of an earlier layer, whose group is searched again from its seeds, and so
//! on down to the start. Each step holds one group with parent links (about 100 bytes a position).

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::outcome::{Budget, Outcome, SearchResult};
use crate::position::{Key, Layout, Position};
use crate::prove::{
    cards_dealt, cards_home, checked_line, pack, signature, unpack, KeySet, Prover, Rules,
};
use crate::search::{Limits, Solver, Strategy};
use crate::store::BYTES_PER_POSITION;

/// Number of layers: progress runs from 0 to 104.
const LAYERS: usize = 105;
/// A seed: its packed key, the packed key of the position it was reached from ([`NO_PARENT`] for the
/// start), and a 64-bit hash of its group's [`signature`] (high word first).
type Rec = [u32; 12];
/// Bytes of a seed in a spill file.
const RECORD: usize = 48;
/// The parent of the start.
const NO_PARENT: [u32; 5] = [u32::MAX; 5];

#[inline(always)]
fn rec_key(r: &Rec) -> [u32; 5] {
    r[..5].try_into().expect("five words")
}

#[inline(always)]
fn rec_parent(r: &Rec) -> [u32; 5] {
    r[5..10].try_into().expect("five words")
}

/// The order of seeds in the spill files: by group (the hash of the signature), then by key.
#[inline(always)]
fn rec_order(r: &Rec) -> (u32, u32, [u32; 5]) {
    (r[10], r[11], rec_key(r))
}

/// A hash of the group of `key` (equal signatures, equal hashes).
#[inline]
fn group_hash(key: &Key) -> u64 {
    let s = signature(key);
    crate::store::hash(&[
        s[0] ^ s[3].rotate_left(17),
        s[1] ^ s[4].rotate_left(29),
        s[2] ^ s[5].rotate_left(41),
    ])
}
/// Keys buffered for later layers before the buffers are sorted, deduplicated and written.
const FLUSH_KEYS: usize = 1 << 24;

/// The layer of a position: cards home plus cards that left the (non-parent) card they were dealt on.
#[inline(always)]
pub fn progress(key: &Key) -> usize {
    (cards_home(key) + 52 - cards_dealt(key)) as usize
}

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
    /// Most bytes held in memory at once (the group's set, the layer's seeds, the stack and the write buffers).
    pub peak_bytes: usize,
    /// Most bytes of spill files on disk at once.
    pub peak_disk: u64,
    pub elapsed_ms: f64,
    /// When won: the canonical keys from the start to a won or sorted position, each one move from the
    /// one before (empty when the memory did not hold a group with its parent links).
    pub chain: Vec<Key>,
}

/// The positions of one group, in the least memory: within a group every card is either home, on its dealt
/// card (both fixed by the signature) or *free* (in a cell, at a column's bottom, or on one of its two
/// parents: 2 bits). With at most 31 free cards a position is a 62-bit code in an open-addressing table of
/// `u64` (8 bytes a slot, about 10-16 bytes a position); otherwise its 20-byte key goes to a [`KeySet`].
enum GroupSet {
    Codes {
        /// The free cards, in code order.
        free: Vec<u8>,
        /// Slots: 0 empty, else the code with bit 63 set.
        slots: Vec<u64>,
        len: usize,
    },
    Keys(KeySet),
}

/// Most free cards of a group held as codes.
const MAX_FREE: usize = 31;

#[inline(always)]
fn field(k: &Key, c: usize) -> u64 {
    (k[c / 21] >> (3 * (c % 21))) & 7
}

impl GroupSet {
    /// The set for the group of `key` (empty).
    fn for_group(key: &Key) -> GroupSet {
        let free: Vec<u8> = (0..52u8)
            .filter(|&c| !matches!(field(key, c as usize), 0 | 3))
            .collect();
        if free.len() > MAX_FREE {
            return GroupSet::Keys(KeySet::new());
        }
        GroupSet::Codes {
            free,
            slots: vec![0; 16],
            len: 0,
        }
    }

    #[inline(always)]
    fn encode(free: &[u8], k: &Key) -> u64 {
        let mut code = 0u64;
        for (i, &c) in free.iter().enumerate() {
            let f = field(k, c as usize);
            debug_assert!(matches!(f, 1 | 2 | 4 | 5), "a free card's place");
            code |= (f - 1 - (f > 3) as u64) << (2 * i);
        }
        code | 1 << 63
    }

    /// The home slot of `code` in a table of `mask + 1` (a power of two) slots: Fibonacci hashing.
    #[inline(always)]
    fn slot(code: u64, mask: usize) -> usize {
        (code.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - mask.count_ones())) as usize
    }

    /// Insert the position of `k` (a key of this group); true when it is new.
    #[inline]
    fn insert(&mut self, k: &Key) -> bool {
        match self {
            GroupSet::Keys(set) => set.insert(k),
            GroupSet::Codes {
                free, slots, len, ..
            } => {
                let code = Self::encode(free, k);
                if (*len + 1) * 8 > slots.len() * 7 {
                    let old = std::mem::replace(slots, vec![0; slots.len() * 2]);
                    crate::mem::advise_huge_pages(slots);
                    let mask = slots.len() - 1;
                    for c in old.into_iter().filter(|&c| c != 0) {
                        let mut i = Self::slot(c, mask);
                        while slots[i] != 0 {
                            i = (i + 1) & mask;
                        }
                        slots[i] = c;
                    }
                }
                let mask = slots.len() - 1;
                let mut i = Self::slot(code, mask);
                loop {
                    match slots[i] {
                        0 => {
                            slots[i] = code;
                            *len += 1;
                            return true;
                        }
                        c if c == code => return false,
                        _ => i = (i + 1) & mask,
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            GroupSet::Keys(set) => set.len(),
            GroupSet::Codes { len, .. } => *len,
        }
    }

    fn memory(&self) -> usize {
        match self {
            GroupSet::Keys(set) => set.memory(),
            GroupSet::Codes { slots, .. } => slots.capacity() * 8,
        }
    }
}

/// A directory of spill files, removed with everything in it when dropped.
struct SpillDir(PathBuf);

impl SpillDir {
    fn create() -> Result<SpillDir> {
        let base = std::env::temp_dir();
        remove_orphans(&base);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("fcanalyze-layered-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        Ok(SpillDir(dir))
    }

    fn file(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.keys"))
    }

    /// A finished layer's seeds, sorted by group, kept for [`chain_to`].
    fn kept(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.seeds"))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Remove the spill directories of processes that are gone (killed in the middle of a layered proof).
/// Only where `/proc` tells which processes live.
fn remove_orphans(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fcanalyze-layered-"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("layered proof, {}: {e}", path.display()))
}

/// The seeds of later layers (per layer, a buffer in memory and a file of sorted runs), and the finished
/// layers' files kept for lines.
struct Seeds {
    flush_keys: usize,
    dir: SpillDir,
    buffers: Vec<Vec<Rec>>,
    buffered: usize,
    files: Vec<Option<BufWriter<File>>>,
    /// Per layer: the bytes written to its file, and where each sorted run of it starts.
    written: Vec<u64>,
    runs: Vec<Vec<u64>>,
    disk: u64,
    /// Whether finished layers' files are kept for lines, and the most bytes they may take on disk
    /// (past it they are removed and a win comes without a line).
    keep: bool,
    max_kept: u64,
    kept: u64,
    /// Bytes of the last layer's file when it is not kept (removed when the next layer's replaces it).
    transient: u64,
}

impl Seeds {
    fn new(flush_keys: usize, max_kept: u64) -> Result<Seeds> {
        Ok(Seeds {
            flush_keys,
            dir: SpillDir::create()?,
            buffers: vec![Vec::new(); LAYERS],
            buffered: 0,
            files: (0..LAYERS).map(|_| None).collect(),
            written: vec![0; LAYERS],
            runs: vec![Vec::new(); LAYERS],
            disk: 0,
            keep: true,
            max_kept,
            kept: 0,
            transient: 0,
        })
    }

    /// A seed of `layer`, reached from `parent` (`None`: the start).
    #[inline]
    fn push(&mut self, layer: usize, key: &Key, parent: Option<&Key>) -> Result<()> {
        let mut rec = [0u32; 12];
        rec[..5].copy_from_slice(&pack(key));
        rec[5..10].copy_from_slice(&parent.map_or(NO_PARENT, pack));
        let h = group_hash(key);
        rec[10] = (h >> 32) as u32;
        rec[11] = h as u32;
        self.buffers[layer].push(rec);
        self.buffered += 1;
        if self.buffered >= self.flush_keys {
            self.flush()?;
        }
        Ok(())
    }

    /// Sort, deduplicate and append every buffer to its layer's file, as one sorted run.
    fn flush(&mut self) -> Result<()> {
        for layer in 0..LAYERS {
            self.flush_layer(layer)?;
        }
        Ok(())
    }

    fn flush_layer(&mut self, layer: usize) -> Result<()> {
        let buf = &mut self.buffers[layer];
        if buf.is_empty() {
            return Ok(());
        }
        self.buffered -= buf.len();
        buf.sort_unstable_by_key(rec_order);
        buf.dedup_by_key(|r| rec_key(r));
        let path = self.dir.file(layer);
        if self.files[layer].is_none() {
            let f = File::create(&path).map_err(|e| io_error(&path, e))?;
            self.files[layer] = Some(BufWriter::with_capacity(1 << 20, f));
        }
        let w = self.files[layer].as_mut().expect("an open file");
        write_recs(w, buf).map_err(|e| io_error(&path, e))?;
        let bytes = (buf.len() * RECORD) as u64;
        self.runs[layer].push(self.written[layer]);
        self.written[layer] += bytes;
        self.disk += bytes;
        buf.clear();
        buf.shrink_to(0);
        Ok(())
    }

    /// `layer`'s seeds, group by group, merged from the sorted runs of its file (the buffered ones written
    /// as a last run); the file is kept (with the parents) for [`chain_to`] until the search ends.
    fn merge(&mut self, layer: usize) -> Result<Merge> {
        self.flush_layer(layer)?;
        let Some(w) = self.files[layer].take() else {
            return Ok(Merge::default());
        };
        let path = self.dir.file(layer);
        drop(
            w.into_inner()
                .map_err(|e| io_error(&path, e.into_error()))?,
        );
        let size = self.written[layer];
        if self.keep && self.kept + size > self.max_kept {
            // No more room for lines: forget them all.
            self.keep = false;
            for l in 0..LAYERS {
                let _ = std::fs::remove_file(self.dir.kept(l));
            }
            self.disk -= self.kept.min(self.disk);
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
        let starts = std::mem::take(&mut self.runs[layer]);
        // One file for every run; each run reads its part in chunks (smaller when there are many).
        let chunk =
            ((16 << 20) / starts.len().max(1)).clamp(RECORD * 64, 1 << 16) / RECORD * RECORD;
        let mut m = Merge {
            file: Some(File::open(&kept).map_err(|e| io_error(&kept, e))?),
            path: kept,
            chunk,
            ..Merge::default()
        };
        for (i, &at) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(self.written[layer]);
            m.runs.push(Run {
                pos: at,
                end,
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

    /// The kept seeds of the group of `key`, with their parents, sorted and deduplicated by key; `None`
    /// when the files were not kept.
    fn group_of(&self, key: &Key) -> Result<Option<Vec<Rec>>> {
        if !self.keep {
            return Ok(None);
        }
        let sig = signature(key);
        let mut group = Vec::new();
        read_recs(&self.dir.kept(progress(key)), |r| {
            if signature(&unpack(&rec_key(r))) == sig {
                group.push(*r);
            }
        })?;
        group.sort_unstable_by_key(rec_key);
        group.dedup_by_key(|r| rec_key(r));
        Ok(Some(group))
    }

    fn memory(&self) -> usize {
        self.buffers.iter().map(|b| b.capacity() * RECORD).sum()
    }
}

/// One sorted run of a layer's file, being read: the bytes `pos..end` still to read, and a chunk read.
struct Run {
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
}

/// A seed's place in the merge: its order, and its run.
type Head = std::cmp::Reverse<((u32, u32, [u32; 5]), usize)>;

/// The k-way merge of a layer's sorted runs: its seeds group by group, each key once.
#[derive(Default)]
struct Merge {
    file: Option<File>,
    path: PathBuf,
    chunk: usize,
    runs: Vec<Run>,
    heap: std::collections::BinaryHeap<Head>,
}

impl Merge {
    /// The next record of run `i`.
    fn next_of(&mut self, i: usize) -> Result<Option<Rec>> {
        let run = &mut self.runs[i];
        if run.at == run.buf.len() {
            if run.pos == run.end {
                return Ok(None);
            }
            let n = (run.end - run.pos).min(self.chunk as u64) as usize;
            run.buf.resize(n, 0);
            let f = self.file.as_mut().expect("an open file");
            let path = &self.path;
            std::io::Seek::seek(f, std::io::SeekFrom::Start(run.pos))
                .and_then(|_| f.read_exact(&mut run.buf))
                .map_err(|e| io_error(path, e))?;
            run.pos += n as u64;
            run.at = 0;
        }
        let bytes: &[u8; RECORD] = run.buf[run.at..run.at + RECORD]
            .try_into()
            .expect("a record");
        run.at += RECORD;
        Ok(Some(decode_rec(bytes)))
    }

    /// Bytes of the read buffers.
    fn memory(&self) -> usize {
        self.runs.len() * self.chunk
    }

    /// The keys of the next group hash (one group, or a few whose signatures share a hash), sorted.
    fn next_group(&mut self) -> Result<Option<Vec<[u32; 5]>>> {
        let Some(std::cmp::Reverse(((h0, h1, _), _))) = self.heap.peek().copied() else {
            return Ok(None);
        };
        let mut keys: Vec<[u32; 5]> = Vec::new();
        while let Some(&std::cmp::Reverse(((a, b, key), i))) = self.heap.peek() {
            if (a, b) != (h0, h1) {
                break;
            }
            self.heap.pop();
            if keys.last() != Some(&key) {
                keys.push(key);
            }
            if let Some(r) = self.next_of(i)? {
                self.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
        }
        Ok(Some(keys))
    }
}

fn decode_rec(bytes: &[u8; RECORD]) -> Rec {
    let mut rec = [0u32; 12];
    for (i, x) in rec.iter_mut().enumerate() {
        *x = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    }
    rec
}

fn write_recs(w: &mut impl Write, recs: &[Rec]) -> std::io::Result<()> {
    let mut bytes = [0u8; RECORD];
    for r in recs {
        for (i, x) in r.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        w.write_all(&bytes)?;
    }
    Ok(())
}

/// Each record of the file at `path`, in order.
fn read_recs(path: &Path, mut each: impl FnMut(&Rec)) -> Result<()> {
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

/// Bytes a position costs in [`group_path`]'s map (key, parent key, hash table overhead).
const PATH_BYTES: usize = 100;

/// A shortest path within one group (one layer, one signature) from the group's seeds `group` (sorted by
/// key) to `target`: the keys from a seed to `target`, and the position that seed was reached from
/// (`None` for the start). `None` when `target` is not reached, or the map outgrows `max_memory`.
fn group_path(
    rules: &Rules,
    group: &[Rec],
    target: &Key,
    max_memory: Option<usize>,
) -> Option<(Vec<Key>, Option<Key>)> {
    let layer = progress(target);
    // Each position found, with the one it was found from (the seeds from themselves).
    let mut from: HashMap<Key, Key> = HashMap::new();
    let mut queue: VecDeque<Key> = VecDeque::new();
    for r in group {
        let k = unpack(&rec_key(r));
        from.insert(k, k);
        queue.push_back(k);
    }
    let mut kids = Vec::new();
    while !from.contains_key(target) {
        let key = queue.pop_front()?;
        rules.children(&rules.decode(&key), &mut kids);
        for k in &kids {
            if progress(k) == layer && !from.contains_key(k) {
                from.insert(*k, key);
                queue.push_back(*k);
            }
        }
        if max_memory.is_some_and(|m| from.len() * PATH_BYTES > m) {
            return None;
        }
    }
    let mut path = vec![*target];
    loop {
        let last = *path.last().expect("a key");
        let prev = from[&last];
        if prev == last {
            break;
        }
        path.push(prev);
    }
    path.reverse();
    let seed = pack(&path[0]);
    let i = group.binary_search_by_key(&seed, rec_key).ok()?;
    let parent = rec_parent(&group[i]);
    Some((path, (parent != NO_PARENT).then(|| unpack(&parent))))
}

/// The chain of keys from the start to `target` (a reached position), then `tail` if any: each group on
/// the way is searched again from its kept seeds. Empty when a group with its parent links does not fit
/// in `max_memory`.
fn chain_to(
    rules: &Rules,
    seeds: &Seeds,
    target: Key,
    tail: Option<Key>,
    max_memory: Option<usize>,
) -> Result<Vec<Key>> {
    let mut back: Vec<Key> = tail.into_iter().collect();
    let mut target = target;
    loop {
        let Some(group) = seeds.group_of(&target)? else {
            return Ok(vec![]);
        };
        let Some((path, parent)) = group_path(rules, &group, &target, max_memory) else {
            return Ok(vec![]);
        };
        back.extend(path.iter().rev());
        let Some(parent) = parent else {
            break;
        };
        target = parent;
    }
    back.reverse();
    Ok(back)
}

/// Search every position reachable from `layout` with `ncells` free cells, layer by layer. Spill files
/// go to the system's temporary directory (`TMPDIR`). `max_memory` bounds the bytes held in memory
/// (running out is undecided, [`Budget::Positions`]).
pub fn prove_layered(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
) -> Result<LayeredResult> {
    // The write buffers take at most a quarter of the memory budget.
    let flush = max_memory.map_or(FLUSH_KEYS, |m| (m / 4 / RECORD).clamp(1 << 12, FLUSH_KEYS));
    prove_layered_flushing(layout, ncells, limits, max_memory, flush)
}

/// [`prove_layered`], writing the seeds of later layers to disk every `flush_keys` keys.
pub fn prove_layered_flushing(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
) -> Result<LayeredResult> {
    // The files kept for lines take at most twice the memory budget on disk.
    let max_kept = max_memory.map_or(u64::MAX, |m| 2 * m as u64);
    search(layout, ncells, limits, max_memory, flush_keys, max_kept)
}

/// [`prove_layered_flushing`], keeping at most `max_kept` bytes of finished layers for lines.
fn search(
    layout: &Layout,
    ncells: usize,
    limits: Limits,
    max_memory: Option<usize>,
    flush_keys: usize,
    max_kept: u64,
) -> Result<LayeredResult> {
    let start = Instant::now();
    let (mut p0, _) = Position::from_layout(layout, ncells)?;
    p0.settle(None);
    let rules = Rules::new(layout, ncells);
    let root = *p0.key();
    let mut res = LayeredResult {
        outcome: LayeredOutcome::Unsolvable,
        positions: 0,
        peak_positions: 0,
        peak_bytes: 0,
        peak_disk: 0,
        elapsed_ms: 0.0,
        chain: vec![],
    };
    let finish = |mut r: LayeredResult, outcome| {
        r.outcome = outcome;
        r.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(r)
    };
    if rules.is_sorted(&root) {
        res.positions = 1;
        res.chain = vec![root];
        return finish(res, LayeredOutcome::Won);
    }
    let mut seeds = Seeds::new(flush_keys.max(1), max_kept)?;
    let first = progress(&root);
    seeds.push(first, &root, None)?;
    let mut kids: Vec<Key> = Vec::with_capacity(128);
    let mut stack: Vec<Key> = Vec::new();
    let mut expanded = 0u64;
    // The positions of finished layers.
    let mut done = 0u64;
    for layer in first..LAYERS {
        // The layer's seeds, group by group, merged from the sorted runs on disk: positions of one
        // signature reach only each other within the layer, so each group is searched with a set of
        // its own, dropped after; memory holds one group's seeds at a time.
        let mut merge = seeds.merge(layer)?;
        while let Some(mut layer_seeds) = merge.next_group()? {
            // The merge gives the keys of a hash in order; a hash standing for more than one signature
            // (rare) is sorted by signature first.
            let sig0 = signature(&unpack(&layer_seeds[0]));
            if layer_seeds.iter().any(|k| signature(&unpack(k)) != sig0) {
                layer_seeds.sort_unstable_by_key(|k| (signature(&unpack(k)), *k));
            }
            let mut from = 0;
            while from < layer_seeds.len() {
                let sig = signature(&unpack(&layer_seeds[from]));
                let mut to = from + 1;
                while to < layer_seeds.len() && signature(&unpack(&layer_seeds[to])) == sig {
                    to += 1;
                }
                // A won position: the line to it, found again backwards.
                let won = |seeds: &Seeds,
                           res: LayeredResult,
                           set: &GroupSet,
                           target: Key,
                           tail: Option<Key>| {
                    let mut res = res;
                    res.positions = done + set.len() as u64;
                    res.chain = chain_to(&rules, seeds, target, tail, max_memory)?;
                    finish(res, LayeredOutcome::Won)
                };
                let mut set = GroupSet::for_group(&unpack(&layer_seeds[from]));
                for seed in &layer_seeds[from..to] {
                    let seed = unpack(seed);
                    if !set.insert(&seed) {
                        continue;
                    }
                    if rules.is_sorted(&seed) {
                        return won(&seeds, res, &set, seed, None);
                    }
                    stack.push(seed);
                    while let Some(key) = stack.pop() {
                        let p = rules.decode(&key);
                        rules.children(&p, &mut kids);
                        for k in &kids {
                            if *k == [0; 3] {
                                return won(&seeds, res, &set, key, Some(*k));
                            }
                            let l = progress(k);
                            debug_assert!(l >= layer, "a move lowered the progress");
                            if l > layer {
                                seeds.push(l, k, Some(&key))?;
                            } else if set.insert(k) {
                                debug_assert_eq!(
                                    signature(k),
                                    sig,
                                    "a move within a layer changed the signature"
                                );
                                if rules.is_sorted(k) {
                                    return won(&seeds, res, &set, *k, None);
                                }
                                stack.push(*k);
                            }
                        }
                        expanded += 1;
                        if expanded & 4095 == 0 {
                            res.positions = done + set.len() as u64;
                            if res.positions >= limits.max_positions {
                                return finish(res, LayeredOutcome::Undecided(Budget::Positions));
                            }
                            let bytes = set.memory()
                                + stack.capacity() * std::mem::size_of::<Key>()
                                + layer_seeds.capacity() * std::mem::size_of::<[u32; 5]>()
                                + merge.memory()
                                + seeds.memory();
                            res.peak_bytes = res.peak_bytes.max(bytes);
                            res.peak_disk = res.peak_disk.max(seeds.disk);
                            if max_memory.is_some_and(|m| bytes > m) {
                                return finish(res, LayeredOutcome::Undecided(Budget::Positions));
                            }
                            if let Some(ms) = limits.max_millis {
                                if start.elapsed().as_millis() as u64 >= ms {
                                    return finish(res, LayeredOutcome::Undecided(Budget::Time));
                                }
                            }
                        }
                    }
                }
                // Nothing reachable from here on has this layer and signature: drop the group.
                res.peak_positions = res.peak_positions.max(set.len() as u64);
                done += set.len() as u64;
                res.positions = done;
                if res.positions >= limits.max_positions {
                    return finish(res, LayeredOutcome::Undecided(Budget::Positions));
                }
                from = to;
            }
        }
    }
    finish(res, LayeredOutcome::Unsolvable)
}

/// The prover within its memory ([`Prover::max_memory`]). When the memory runs out before the position
/// budget, the reachable set is large: either the position is solvable and the depth-first search went
/// the wrong way, or it is a large proof. The heuristic solver then searches with as many positions as
/// the memory holds (it finds the lines of the first kind), and if it too runs out, the layered proof
/// decides (it holds fewer positions at once). A won position it reaches gives the line found again
/// backwards ([`chain_to`]), replayed like every line; when even that does not fit in the memory, the
/// answer is undecided.
pub fn prove_bounded(
    prover: &mut Prover,
    solver: &mut Solver,
    layout: &Layout,
    ncells: usize,
    limits: Limits,
) -> Result<SearchResult> {
    let r = prover.prove(layout, ncells, limits)?;
    let Some(memory) = prover.max_memory else {
        return Ok(r);
    };
    if r.outcome != Outcome::Undecided
        || r.exhausted != Some(Budget::Positions)
        || r.positions >= limits.max_positions
    {
        return Ok(r);
    }
    // The solver's positions cost BYTES_PER_POSITION on average, and up to twice that while its arena and
    // table double (deal 982 at 2 cells reached 13.5 GB under a 10 GiB budget with a 48-byte estimate).
    let s = solver.search(
        layout,
        ncells,
        Strategy::Solve,
        Limits {
            max_positions: ((memory / (2 * BYTES_PER_POSITION)) as u64).min(limits.max_positions),
            max_millis: limits.max_millis,
        },
    )?;
    // A solver this large gives its tables back now, not at its next search (the layered proof needs the
    // memory).
    *solver = Solver::new();
    if s.outcome != Outcome::Undecided {
        let mut s = s;
        s.elapsed_ms += r.elapsed_ms;
        return Ok(s);
    }
    let spent = r.elapsed_ms + s.elapsed_ms;
    let l = prove_layered(layout, ncells, limits, prover.max_memory)?;
    if l.outcome == LayeredOutcome::Won && !l.chain.is_empty() {
        let rules = Rules::new(layout, ncells);
        return Ok(SearchResult {
            outcome: Outcome::Solved,
            positions: l.positions,
            solution: checked_line(layout, ncells, &rules, l.chain, "the layered proof's line")?,
            elapsed_ms: spent + l.elapsed_ms,
            exhausted: None,
        });
    }
    Ok(SearchResult {
        outcome: match l.outcome {
            LayeredOutcome::Unsolvable => Outcome::Unsolvable,
            _ => Outcome::Undecided,
        },
        positions: l.positions,
        solution: vec![],
        elapsed_ms: spent + l.elapsed_ms,
        exhausted: match l.outcome {
            LayeredOutcome::Undecided(b) => Some(b),
            LayeredOutcome::Won => Some(Budget::Positions),
            LayeredOutcome::Unsolvable => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the disk budget for lines the search goes on, with the same count, and a win comes without
    /// a line.
    #[test]
    fn lines_forgotten_past_the_disk_budget() {
        let limits = Limits {
            max_positions: 2_000_000,
            max_millis: None,
        };
        let deal = Layout::deal(11982).unwrap();
        for max_kept in [0, 1 << 12, u64::MAX] {
            let r = search(&deal, 4, limits, None, 500, max_kept).unwrap();
            assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
            assert_eq!(r.positions, 61_643);
        }
        let mut late = Layout::deal(2).unwrap();
        for col in late.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 7);
        }
        late.foundations = [7; 4];
        let with = search(&late, 0, limits, None, 100, u64::MAX).unwrap();
        let without = search(&late, 0, limits, None, 100, 1 << 12).unwrap();
        assert_eq!(with.outcome, LayeredOutcome::Won);
        assert_eq!(without.outcome, LayeredOutcome::Won);
        assert_eq!(with.positions, without.positions);
        assert!(!with.chain.is_empty());
        assert!(without.chain.is_empty());
    }
}
