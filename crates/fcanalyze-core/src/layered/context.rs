//! What a thread's search of its groups of a layer shares with the whole search ([`Cx`]): the rules,
//! its seed buffers and the spill files, its budgets, the layer's counters; its periodic check
//! ([`Cx::check`]) and the checkpoints after finished groups; and how the search of a group ends
//! ([`GroupEnd`]); the threads left without a group ([`Idle`]), which help the groups searched by levels.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::error::Result;
use crate::key::Key;
use crate::limits::Limits;
use crate::outcome::Budget;
use crate::prover::Rules;

use super::checkpoint::Finished;
use super::cone::Cone;
use super::merge::LayerFile;
use super::seeds::{lock, SeedBuf, Spill};
use super::twin::{Twin, Twins};
use super::{LayeredResult, Share};

/// How the search of one group ended.
pub(super) enum GroupEnd {
    /// Every position of the group was expanded: their number.
    Done(usize),
    /// A won or sorted position, or one whose child is won (`tail`); the group's positions so far.
    Won {
        target: Key,
        tail: Option<Key>,
        len: usize,
    },
    Out(Budget),
    /// Another thread ended the layer first.
    Stopped,
}

/// The threads of a layer that found no group left to claim, each with its seed buffers (given up by
/// the thread, which ends): a group searched by levels takes them at the start of a level to share it
/// out, and gives them back at its end. The search takes the buffers back at the layer's end.
///
/// Threads may also join a layer after its start, as idle threads: the proof's own threads
/// ([`Idle::own`], or those lent to the process, [`super::threads_now`]) once the searches beside it
/// have ended ([`Share::whole`]), numbered from [`Idle::threads`] on. A layer holds most of a giant
/// proof's hours: 384243's layer 52 with 2 cells ran on one thread for its whole first level after a
/// resume, because the searches beside the proof ended a few minutes into it.
pub(super) struct Idle<'a> {
    pub(super) waiting: Mutex<Vec<(usize, SeedBuf)>>,
    /// The proof's own threads.
    pub(super) own: usize,
    /// The part of the machine the proof has beside other searches, if any.
    pub(super) share: Option<&'a Share>,
    /// The layer's threads so far: those it started with, then those joined.
    pub(super) threads: AtomicUsize,
}

impl<'a> Idle<'a> {
    /// No thread idle yet in a layer of `threads` threads, of a proof of `own` threads with `share`.
    pub(super) fn new(threads: usize, own: usize, share: Option<&'a Share>) -> Idle<'a> {
        Idle {
            waiting: Mutex::new(Vec::new()),
            own,
            share,
            threads: AtomicUsize::new(threads),
        }
    }

    /// The threads the proof may run on now.
    fn now(&self) -> usize {
        match self.share.map_or(0, |s| s.now().0) {
            0 => super::threads_now(self.own),
            n => n,
        }
    }

    /// Whether a thread is idle, or may join.
    pub(super) fn any(&self) -> bool {
        !lock_idle(self).is_empty() || self.now() > self.threads.load(Ordering::Relaxed)
    }

    /// The idle threads, and those that may join now (each with empty seed buffers of `keys` keys),
    /// taken.
    pub(super) fn take(&self, keys: usize) -> Vec<(usize, SeedBuf)> {
        let mut crew = std::mem::take(&mut *lock_idle(self));
        let now = self.now();
        let mut have = self.threads.load(Ordering::Relaxed);
        while have < now {
            match self.threads.compare_exchange(
                have,
                have + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    #[cfg(test)]
                    super::levels::JOINED.fetch_add(1, Ordering::Relaxed);
                    crew.push((have, SeedBuf::new(keys)));
                    have += 1;
                }
                Err(h) => have = h,
            }
        }
        crew
    }
}

/// The idle threads, locked (a thread that panicked holding them ends the search anyway).
pub(super) fn lock_idle<'b>(idle: &'b Idle<'_>) -> MutexGuard<'b, Vec<(usize, SeedBuf)>> {
    idle.waiting.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a thread's search of its groups needs from the whole search.
pub(super) struct Cx<'a> {
    pub(super) rules: &'a Rules,
    /// This thread's seeds of later layers, and the files they go to.
    pub(super) seeds: &'a mut SeedBuf,
    pub(super) spill: &'a Spill,
    /// The thread (its files are named after it).
    pub(super) thread: usize,
    pub(super) limits: Limits,
    /// This thread's share of the memory budget.
    pub(super) max_memory: Option<usize>,
    pub(super) max_stack_bytes: usize,
    pub(super) max_set_len: usize,
    /// Whether groups searched by levels are searched by orbits where trades keep their seeds.
    pub(super) trades: bool,
    /// The positions a search for a line keeps to, if it is one: the other children are dropped.
    pub(super) cone: Option<Cone>,
    /// Codes a group searched by levels sorts in memory before it writes them as a run.
    pub(super) level_chunk: usize,
    /// The least time between two checkpoints within a layer after finished groups.
    pub(super) save_every: std::time::Duration,
    pub(super) start: Instant,
    pub(super) layer: usize,
    /// Positions of the groups finished before this layer.
    pub(super) before: u64,
    /// Positions of this layer's groups finished, by every thread.
    pub(super) layer_done: &'a AtomicU64,
    /// Positions of this layer's groups in progress, as each thread last told ([`Cx::check`]): the
    /// position budget counts every thread's groups, not only its own (pass 4 of 1-1,000,000 had
    /// 295997 with 2 cells end at 7.6 billion positions of a budget of 5, another giant group beside its
    /// own).
    pub(super) live: &'a AtomicU64,
    /// What this thread added to `live` for the positions it searches now.
    pub(super) told: u64,
    /// Set when a thread ends the layer early (a win, a budget, an error): the others stop.
    pub(super) stop: &'a AtomicBool,
    /// The number of the layer's next group no thread has claimed yet.
    pub(super) next_group: &'a AtomicU64,
    pub(super) expanded: u64,
    /// Bytes of the layer's merge (its read buffers).
    pub(super) merge_bytes: usize,
    pub(super) kids: Vec<Key>,
    /// Per child of the position expanded, the run its own children may leave unmoved
    /// ([`crate::prover::Rules::children_moved`]).
    pub(super) kids_moved: Vec<u8>,
    /// Per child of the position expanded: its layer, and when in the layer its code and hash.
    pub(super) codes: Vec<(usize, u128, u64)>,
    pub(super) res: LayeredResult,
    /// The layer's idle threads.
    pub(super) idle: &'a Idle<'a>,
    /// The layer's file and twin groups.
    pub(super) layer_file: &'a LayerFile,
    pub(super) twins: &'a Twins,
    /// The follower of the group being searched, until its search by levels takes it on.
    pub(super) twin: Option<Twin>,
    /// The positions of the follower that the search by levels of its owner counted, when it did.
    pub(super) replayed: Option<usize>,
}

/// What [`Cx::check`] found.
pub(super) enum Check {
    Go,
    /// The memory budget is passed (a group's set then goes over to levels).
    OverMemory,
    Out(Budget),
    /// Another thread ended the layer.
    Stopped,
}

impl<'a> Cx<'a> {
    /// The context of idle thread `thread` (its seed buffers `seeds`) helping this thread's group
    /// searched by levels: the same budgets and counters, its own seeds, counts and peaks.
    pub(super) fn helper<'b>(&self, thread: usize, seeds: &'b mut SeedBuf) -> Cx<'b>
    where
        'a: 'b,
    {
        Cx {
            rules: self.rules,
            seeds,
            spill: self.spill,
            thread,
            limits: self.limits,
            max_memory: self.max_memory,
            max_stack_bytes: self.max_stack_bytes,
            max_set_len: self.max_set_len,
            trades: self.trades,
            cone: self.cone,
            level_chunk: self.level_chunk,
            save_every: self.save_every,
            start: self.start,
            layer: self.layer,
            before: self.before,
            layer_done: self.layer_done,
            live: self.live,
            told: 0,
            stop: self.stop,
            next_group: self.next_group,
            expanded: 0,
            merge_bytes: 0,
            kids: Vec::with_capacity(128),
            kids_moved: Vec::with_capacity(128),
            codes: Vec::with_capacity(128),
            res: self.res.with_peaks_cleared(),
            idle: self.idle,
            layer_file: self.layer_file,
            twins: self.twins,
            twin: None,
            replayed: None,
        }
    }

    /// Group `group` of signature `sig` is finished, with `len` positions: in a resumable search, a
    /// checkpoint within the layer lists it when one is due (the group's seeds written first).
    pub(super) fn finished(&mut self, group: u64, sig: [u64; 6], len: usize) -> Result<()> {
        if !lock(self.spill).save_due(self.save_every) {
            return Ok(());
        }
        self.seeds.flush(self.spill)?;
        let mut s = lock(self.spill);
        if !s.finished.iter().any(|f| (f.group, f.sig) == (group, sig)) {
            s.finished.push(Finished {
                group,
                sig,
                len: len as u64,
            });
        }
        s.save_within()
    }

    /// This thread's positions in groups not finished yet are `own`: told to the other threads
    /// (`live`), and the search's positions so far, every thread's as last told, returned.
    pub(super) fn tell(&mut self, own: u64) -> u64 {
        let live = if own >= self.told {
            self.live.fetch_add(own - self.told, Ordering::Relaxed) + (own - self.told)
        } else {
            self.live.fetch_sub(self.told - own, Ordering::Relaxed) - (self.told - own)
        };
        self.told = own;
        self.with_live(live)
    }

    /// The search's positions as every thread last told them, this one's included.
    pub(super) fn positions_now(&self) -> u64 {
        self.with_live(self.live.load(Ordering::Relaxed))
    }

    /// The search's positions with `live` those of the groups in progress: the groups finished before
    /// this layer and in it, and those.
    fn with_live(&self, live: u64) -> u64 {
        self.before + self.layer_done.load(Ordering::Relaxed) + live
    }

    /// The periodic check of a group's search, this thread's positions in it not yet counted `own`
    /// ([`Cx::tell`]), the search's positions holding `set_bytes` and its stack (or other working
    /// lists) `held_bytes`: the counts and peaks brought up to date, then the budgets in order:
    /// positions, disk, memory, time; then the other threads. `len`, the positions of the group the
    /// memory holds, goes with the peaks.
    pub(super) fn check(
        &mut self,
        (own, len): (u64, usize),
        set_bytes: usize,
        held_bytes: usize,
    ) -> Check {
        let (disk, disk_low) = {
            let s = lock(self.spill);
            (s.disk, s.disk_low)
        };
        self.res.positions = self.tell(own);
        let res = &mut self.res;
        if res.positions >= self.limits.max_positions {
            return Check::Out(Budget::Positions);
        }
        let parts = [
            set_bytes,
            held_bytes,
            self.merge_bytes,
            self.seeds.memory(),
            len,
        ];
        let bytes = parts[..4].iter().sum();
        if bytes > res.peak_bytes {
            res.peak_bytes = bytes;
            res.peak_parts = parts;
        }
        res.peak_disk = res.peak_disk.max(disk);
        if disk_low {
            return Check::Out(Budget::Disk);
        }
        if self.max_memory.is_some_and(|m| bytes > m) {
            return Check::OverMemory;
        }
        if self.limits.out_of_time(self.start) {
            return Check::Out(Budget::Time);
        }
        if self.stop.load(Ordering::Relaxed) {
            return Check::Stopped;
        }
        Check::Go
    }
}
