//! A request from outside to stop the searches running in this process (Ctrl-C or SIGTERM, seen by the
//! Python bindings): every search sees it where it checks its time budget, and ends as if its time had
//! run out. The caller that raised it counts the requests ([`count`]) and throws away the result of any
//! search that overlapped one: an interrupted search is never reported, not even as undecided.
//!
//! A caller may also stop the searches of one thread ([`StopHere`]): the cascade stops the searches for a
//! line still running beside a wide beam that has found one.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicU64 = AtomicU64::new(0);

/// Ask every running search to stop (until [`clear`]).
pub fn raise() {
    COUNT.fetch_add(1, Ordering::SeqCst);
    ACTIVE.store(true, Ordering::SeqCst);
}

/// The request has been served: searches started from now on run normally.
pub fn clear() {
    ACTIVE.store(false, Ordering::SeqCst);
}

thread_local! {
    /// The flags that stop this thread's searches ([`StopHere`]), innermost last.
    static HERE: RefCell<Vec<Arc<AtomicBool>>> = const { RefCell::new(Vec::new()) };
}

/// While it lives, the searches of the thread that made it stop (as if their time had run out) once
/// its flag is raised, by any thread; the results of searches stopped so are the caller's to discard.
/// They nest: each flag made on a thread stops its searches until it is dropped. A flag reaches only
/// the thread that made it: the threads a search spawns do not see it (a search stopped so must run on
/// that one thread).
pub(crate) struct StopHere;

impl StopHere {
    pub(crate) fn on(flag: Arc<AtomicBool>) -> StopHere {
        HERE.with(|h| h.borrow_mut().push(flag));
        StopHere
    }
}

impl Drop for StopHere {
    fn drop(&mut self) {
        HERE.with(|h| h.borrow_mut().pop());
    }
}

/// Whether searches are asked to stop: all of them, or this thread's.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
        || HERE.with(|h| h.borrow().iter().any(|f| f.load(Ordering::Relaxed)))
}

/// The requests made so far: a search whose caller sees this change while it ran was interrupted.
pub fn count() -> u64 {
    COUNT.load(Ordering::SeqCst)
}
