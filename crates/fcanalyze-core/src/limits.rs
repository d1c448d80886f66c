//! The budgets of a search: how many positions it may store and how long it may run.

use std::time::Instant;

/// The budgets of one search.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most distinct positions to store.
    pub max_positions: u64,
    /// Most milliseconds to run, if any.
    pub max_millis: Option<u64>,
}

impl Limits {
    /// Whether a search started at `start` is out of time: its time budget spent, or an interrupt
    /// raised ([`crate::interrupt`]).
    #[inline]
    pub fn out_of_time(&self, start: Instant) -> bool {
        crate::interrupt::active()
            || self
                .max_millis
                .is_some_and(|ms| start.elapsed().as_millis() as u64 >= ms)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_positions: 10_000_000,
            max_millis: None,
        }
    }
}
