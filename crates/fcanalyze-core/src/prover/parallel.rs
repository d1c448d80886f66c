//! The lean search on several threads sharing one set ([`search`]): each thread runs its own depth-first
//! search ([`Worker`]); a thread out of work waits at a pool, and the busy ones, seeing it hungry, give it
//! their oldest waiting positions with the lines that lead to them (so a won position found anywhere
//! comes back with its whole line). The search ends when a thread wins or runs out of a budget, or when
//! every thread waits and the pool is empty: then every reachable position was stored and expanded once,
//! and the count is the sequential one.
//!
//! The first [`Prover::parallel_from`](super::Prover::parallel_from) positions are searched by the first
//! thread alone, exactly as one thread would (no work is given away before): a search that ends there gives the same answer, line and count
//! whatever the threads. Past it, which thread wins first, and so a solved search's line and count, may
//! vary from run to run; a proof's count never does.

use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::key::Key;

use super::worker::{Ctx, End, Worker};
use super::{Own, ProveStats};

/// Positions of the budget a thread takes at a time.
const CHUNK: u64 = 4096;

/// A waiting position given to another thread: the line of keys from the root to it (it last), and
/// the portfolio order it was waiting in.
pub(super) struct Work {
    pub(super) line: Vec<Key>,
    pub(super) order: u32,
}

/// The pool of given work, and who waits for it.
struct Pool {
    items: Vec<Work>,
    /// Threads waiting for work.
    waiting: usize,
    /// Threads searching (not waiting).
    active: usize,
}

/// What the threads of one search share besides the set.
pub(super) struct Shared {
    pool: Mutex<Pool>,
    cond: Condvar,
    /// Threads waiting minus the work in the pool, as of the pool's last change.
    wanted: Own<AtomicIsize>,
    stop: Own<AtomicBool>,
    /// Positions of the budget given out to the threads (the root's included).
    reserved: Own<AtomicU64>,
    /// Bytes each thread holds besides the set, as of its last memory check.
    held: Vec<Own<AtomicUsize>>,
}

impl Shared {
    fn new(threads: usize) -> Shared {
        Shared {
            pool: Mutex::new(Pool {
                items: Vec::new(),
                waiting: 0,
                active: threads,
            }),
            cond: Condvar::new(),
            wanted: Own(AtomicIsize::new(0)),
            stop: Own(AtomicBool::new(false)),
            reserved: Own(AtomicU64::new(1)),
            held: (0..threads).map(|_| Own(AtomicUsize::new(0))).collect(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Update [`Shared::wanted`] after a change of the pool.
    fn publish(&self, p: &Pool) {
        self.wanted.0.store(
            p.waiting as isize - p.items.len() as isize,
            Ordering::Relaxed,
        );
    }

    /// Positions given out so far (at most a chunk per thread more than stored).
    #[inline]
    pub(super) fn reserved(&self) -> u64 {
        self.reserved.0.load(Ordering::Relaxed)
    }

    /// Take up to a chunk more of a budget of `max` positions; the number taken (0: it is spent).
    pub(super) fn grant(&self, max: u64) -> u64 {
        let mut r = self.reserved();
        loop {
            if r >= max {
                return 0;
            }
            let to = (r + CHUNK).min(max);
            match self
                .reserved
                .0
                .compare_exchange_weak(r, to, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return to - r,
                Err(now) => r = now,
            }
        }
    }

    /// Whether the search is over.
    #[inline]
    pub(super) fn stopped(&self) -> bool {
        self.stop.0.load(Ordering::Relaxed)
    }

    /// Whether a thread waits for work that no one has given yet.
    #[inline]
    pub(super) fn hungry(&self) -> bool {
        self.wanted.0.load(Ordering::Relaxed) > 0
    }

    /// Thread `id` holds `mine` bytes besides the set: the bytes all threads hold.
    pub(super) fn held(&self, id: usize, mine: usize) -> usize {
        self.held[id].0.store(mine, Ordering::Relaxed);
        self.held.iter().map(|h| h.0.load(Ordering::Relaxed)).sum()
    }

    /// End the search: every thread stops at its next check, the waiting ones at once.
    fn stop(&self) {
        self.stop.0.store(true, Ordering::Relaxed);
        let _pool = self.lock();
        self.cond.notify_all();
    }

    /// Wait for work (a thread out of it); `None` when the search is over: stopped, or every thread
    /// waiting with the pool empty (nothing is left to search).
    pub(super) fn fetch(&self) -> Option<Work> {
        let mut p = self.lock();
        p.active -= 1;
        p.waiting += 1;
        self.publish(&p);
        loop {
            if self.stopped() {
                return None;
            }
            if let Some(w) = p.items.pop() {
                p.active += 1;
                p.waiting -= 1;
                self.publish(&p);
                return Some(w);
            }
            if p.active == 0 {
                self.stop.0.store(true, Ordering::Relaxed);
                self.cond.notify_all();
                return None;
            }
            p = self.cond.wait(p).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Give the waiting threads work from `next` (one each, while it has some).
    pub(super) fn give(&self, mut next: impl FnMut() -> Option<Work>) {
        let mut p = self.lock();
        let mut given = false;
        while p.waiting > p.items.len() {
            let Some(w) = next() else { break };
            p.items.push(w);
            given = true;
        }
        self.publish(&p);
        if given {
            self.cond.notify_all();
        }
    }
}

/// Ends the search when a thread leaves its search, however it leaves it (a panicking thread must not
/// leave the others waiting for it).
struct StopOnExit<'a>(&'a Shared);

impl Drop for StopOnExit<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// The search from `root` (stored, not sorted) on `threads` threads, `first` the calling thread's
/// worker; how it ended, and the statistics of all threads.
pub(super) fn search(first: &mut Worker, ctx: Ctx, threads: usize, root: Key) -> (End, ProveStats) {
    let shared = Shared::new(threads);
    let ctx = Ctx {
        shared: Some(&shared),
        ..ctx
    };
    let orders = ctx.orders.len().max(1);
    first.begin(orders, Some(root), 0);
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads)
            .map(|id| {
                let (ctx, shared) = (&ctx, &shared);
                s.spawn(move || {
                    let mut w = Worker::new();
                    w.begin(orders, None, 0);
                    let end = {
                        let _stop = StopOnExit(shared);
                        w.run(ctx, id)
                    };
                    w.leave(ctx);
                    (end, w.stats)
                })
            })
            .collect();
        let end = {
            let _stop = StopOnExit(&shared);
            first.run(&ctx, 0)
        };
        first.leave(&ctx);
        let mut stats = first.stats;
        let mut ends = vec![end];
        for h in others {
            let (end, s) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            stats.add(&s);
            ends.push(end);
        }
        // A won line first (a decided search), then a budget; when every thread simply ran out of
        // work, the search is exhaustive.
        let won = ends.iter().position(|e| matches!(e, End::Won(_)));
        let budget = ends.iter().position(|e| matches!(e, End::Budget(_)));
        let end = match won.or(budget) {
            Some(i) => ends.swap_remove(i),
            None => End::Done,
        };
        (end, stats)
    })
}
