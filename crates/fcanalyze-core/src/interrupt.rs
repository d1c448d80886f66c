//! A request from outside to stop the searches running in this process (Ctrl-C or SIGTERM, seen by the
//! Python bindings): every search sees it where it checks its time budget, and ends as if its time had
//! run out. The caller that raised it counts the requests ([`count`]) and throws away the result of any
//! search that overlapped one: an interrupted search is never reported, not even as undecided.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Whether searches are asked to stop.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The requests made so far: a search whose caller sees this change while it ran was interrupted.
pub fn count() -> u64 {
    COUNT.load(Ordering::SeqCst)
}
