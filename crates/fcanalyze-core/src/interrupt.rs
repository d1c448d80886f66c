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
    /// The flag that stops this thread's searches, if any ([`StopHere`]).
    static HERE: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// While it lives, the searches of the thread that made it stop (as if their time had run out) once
/// its flag is raised, by any thread; the results of searches stopped so are the caller's to discard.
pub(crate) struct StopHere;

impl StopHere {
    pub(crate) fn on(flag: Arc<AtomicBool>) -> StopHere {
        HERE.with(|h| *h.borrow_mut() = Some(flag));
        StopHere
    }
}

impl Drop for StopHere {
    fn drop(&mut self) {
        HERE.with(|h| *h.borrow_mut() = None);
    }
}

/// Whether searches are asked to stop: all of them, or this thread's.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
        || HERE.with(|h| {
            h.borrow()
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
        })
}

/// The requests made so far: a search whose caller sees this change while it ran was interrupted.
pub fn count() -> u64 {
    COUNT.load(Ordering::SeqCst)
}
