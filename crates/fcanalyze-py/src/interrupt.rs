//! Searches that Ctrl-C can stop: each runs with the GIL released, on a thread of its own, while the
//! caller's thread runs Python's signal handlers ([`interruptible`]).

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;

use crate::errors::InternalError;

/// Stack of the thread a search runs on (as the main thread's).
const SEARCH_STACK: usize = 8 << 20;

/// Run `search` with the GIL released, on a thread of its own, while this thread runs Python's signal
/// handlers every 50 ms (Python runs them only between bytecodes, and a proof may take hours). When a
/// handler raises (Ctrl-C's `KeyboardInterrupt`, say), every search of the process is asked to stop
/// ([`fccore::interrupt`]) and the exception is raised once this one has ended: its result is thrown
/// away. A search that overlapped an interrupt raised elsewhere in the process raises
/// `KeyboardInterrupt` too, so that no interrupted search is ever reported, not even as undecided.
pub fn interruptible<T: Send>(py: Python<'_>, search: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let before = fccore::interrupts();
    let (out, raised) = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = channel();
            let worker = std::thread::Builder::new()
                .name("fcanalyze search".into())
                .stack_size(SEARCH_STACK)
                .spawn_scoped(s, move || {
                    let _ = tx.send(search());
                })
                .map_err(|e| PyOSError::new_err(format!("cannot start a search thread: {e}")))?;
            let mut raised = None;
            let out = loop {
                match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                    Ok(v) => break Some(v),
                    // The search panicked (its thread's end tells no more).
                    Err(RecvTimeoutError::Disconnected) => break None,
                    Err(RecvTimeoutError::Timeout) => {
                        if raised.is_none() {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                fccore::interrupt();
                                raised = Some(e);
                            }
                        }
                    }
                }
            };
            let _ = worker.join();
            Ok::<_, PyErr>((out, raised))
        })
    })?;
    if let Some(e) = raised {
        fccore::clear_interrupt();
        return Err(e);
    }
    if fccore::interrupts() != before {
        return Err(PyKeyboardInterrupt::new_err("interrupted"));
    }
    out.ok_or_else(|| InternalError::new_err("a search panicked (a bug in the core)"))
}
