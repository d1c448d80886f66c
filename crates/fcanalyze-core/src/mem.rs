//! Memory for large tables: transparent huge pages (Linux). A search that looks up keys at random
//! places in a table of gigabytes otherwise misses the TLB on nearly every lookup.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Huge pages are this large (x86-64 and aarch64 with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Whether mapped tables ask for huge pages ([`Zeroed::new`]): until the system is seen to map them
/// slowly ([`Zeroed::map_now`]). On most machines a huge page costs what its small pages would, and
/// spares TLB misses; on some virtual machines the system took ten times as long to hand out the huge
/// pages of the prover's set as its small pages (deal 26063 with 1 cell: 8-17 s of system time against
/// 1.5 s, up to a third of the proof's wall time), and there small pages are faster in all.
static HUGE_PAGES: AtomicBool = AtomicBool::new(true);

/// Huge pages are given up when each byte of them takes this much longer to map than a byte of small
/// pages (seconds a byte): about what they spare the lean prover in TLB misses. Measured on two kinds of
/// virtual machine, deal 26063 with 1 cell (its set's tables about 2 GB):
/// - Intel, 2026-12-03 morning: huge pages at 0.12-0.25 GB/s (8-17 s of system time), small ones at
///   about 1.3 GB/s, so 3.2-7.5 ns more a byte; small pages took 0.69 of the time on two threads and
///   0.88 on one;
/// - AMD, that afternoon: huge pages at 0.32-0.6 GB/s (the first 250 MB slowest), small ones at
///   1.5-1.8 GB/s, so at most 2.5 ns more a byte; huge pages took 0.85 of the time, on one thread and
///   on two (4 pairs each).
const SLOW_MAPPING: f64 = 3e-9;

/// Small pages are taken to map at this rate (bytes a second) until enough of them were timed
/// ([`SMALL_YARDSTICK`]).
const SMALL_RATE: f64 = 2e9;

/// Bytes of tables mapped by [`Zeroed::map_now`] so far in this process, and the nanoseconds it took,
/// in huge pages and in small ones: the rate of huge pages is judged once this many bytes of them are
/// mapped ([`JUDGED_FROM`]; a table of the prover's set is one of 64 shards, a few megabytes each).
static MAPPED: AtomicU64 = AtomicU64::new(0);
static MAPPED_NANOS: AtomicU64 = AtomicU64::new(0);
static MAPPED_SMALL: AtomicU64 = AtomicU64::new(0);
static MAPPED_SMALL_NANOS: AtomicU64 = AtomicU64::new(0);
const JUDGED_FROM: u64 = 64 << 20;
/// Small pages are a yardstick from this many bytes on.
const SMALL_YARDSTICK: u64 = 16 << 20;

/// Whether `bytes` of huge pages mapped in `nanos` are enough to judge, and each of their bytes took
/// more than [`SLOW_MAPPING`] longer than a byte of small pages (`small` bytes mapped in `small_nanos`,
/// or [`SMALL_RATE`] when fewer than [`SMALL_YARDSTICK`]). Memory that a virtual machine's host has not
/// backed yet comes slowly in either size (a 1 GB test table: 0.32 GB/s in small pages and 0.38 GB/s in
/// huge ones the first time, 2.1 and 8.8 GB/s once backed), and is no reason to give up huge pages.
fn judged_slow(bytes: u64, nanos: u64, small: u64, small_nanos: u64) -> bool {
    let per_byte_small = if small >= SMALL_YARDSTICK {
        small_nanos as f64 * 1e-9 / small as f64
    } else {
        1.0 / SMALL_RATE
    };
    bytes >= JUDGED_FROM && nanos as f64 * 1e-9 / bytes as f64 - per_byte_small > SLOW_MAPPING
}

/// Ask for huge pages under the whole huge pages inside a vector's buffer (its spare capacity
/// included), when it spans at least one and huge pages were not seen to be slow ([`HUGE_PAGES`]).
/// Only a hint: nothing changes but the page size, and an error (an old kernel, huge pages switched
/// off) is ignored.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE_PAGE || !HUGE_PAGES.load(Ordering::Relaxed) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: the range lies inside the vector's own allocation; madvise only sets a hint on
            // those pages and never changes their contents.
            unsafe {
                libc::madvise(first as *mut _, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Types whose all-zero bytes are a valid value, their default, so that a fresh mapping from the system
/// holds `len` of them.
///
/// # Safety
/// The all-zero bit pattern must be a valid value of the type, equal to `T::default()`.
pub(crate) unsafe trait ZeroIsDefault: Copy + Default {}

// SAFETY: zero is a byte's default.
unsafe impl ZeroIsDefault for u8 {}

/// A zeroed array of `T` for a large table. From `map_from` bytes on it is mapped from the system (Linux)
/// and given back to it when dropped, never left to fragment the allocator's heap; from [`HUGE_PAGE`] on
/// it starts at a huge page boundary, with transparent huge pages requested for every whole huge page in
/// it: lookups at random places in a table of megabytes otherwise miss the TLB on nearly every one (a
/// vector's buffer starts anywhere, so one under twice the huge page size gets no huge page at all). The
/// tail past the last whole huge page keeps small pages, so the memory held is the bytes asked for.
pub(crate) struct Zeroed<T: ZeroIsDefault> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
    /// The mapping to give back (start, bytes), when mapped; otherwise the array is a boxed slice.
    map: Option<(*mut u8, usize)>,
    /// Huge pages were asked for.
    huge: bool,
}

// SAFETY: a `Zeroed` owns its memory exclusively, like a `Vec`.
unsafe impl<T: ZeroIsDefault + Send> Send for Zeroed<T> {}
unsafe impl<T: ZeroIsDefault + Sync> Sync for Zeroed<T> {}

impl<T: ZeroIsDefault> Zeroed<T> {
    /// `len` zeroed values, mapped from the system when they take at least `map_from` bytes.
    pub(crate) fn new(len: usize, map_from: usize) -> Self {
        let bytes = len * std::mem::size_of::<T>();
        #[cfg(target_os = "linux")]
        if bytes >= map_from.max(1) {
            let huge = bytes >= HUGE_PAGE && HUGE_PAGES.load(Ordering::Relaxed);
            let maplen = if huge {
                bytes.next_multiple_of(HUGE_PAGE) + HUGE_PAGE
            } else {
                bytes
            };
            // SAFETY: a fresh private anonymous mapping (zeroed by the system, page-aligned, so aligned
            // for `T`), checked for failure; the aligned start leaves `bytes` inside it (one huge page
            // more is mapped); the huge-page advice is only a hint, on whole huge pages inside it.
            unsafe {
                let m = libc::mmap(
                    std::ptr::null_mut(),
                    maplen,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                if m != libc::MAP_FAILED {
                    let m = m as *mut u8;
                    let start = if huge {
                        let aligned = m.add(m.align_offset(HUGE_PAGE));
                        let whole = bytes / HUGE_PAGE * HUGE_PAGE;
                        libc::madvise(aligned as *mut _, whole, libc::MADV_HUGEPAGE);
                        aligned
                    } else {
                        m
                    };
                    return Zeroed {
                        ptr: std::ptr::NonNull::new(start as *mut T).expect("mapped"),
                        len,
                        map: Some((m, maplen)),
                        huge,
                    };
                }
            }
        }
        let _ = map_from;
        let b: Box<[T]> = vec![T::default(); len].into_boxed_slice();
        Zeroed {
            ptr: std::ptr::NonNull::new(Box::into_raw(b) as *mut T).expect("box"),
            len,
            map: None,
            huge: false,
        }
    }

    /// Map every page now (the system zeroes each on its first write) rather than at the first lookups
    /// that reach it, timed: once [`JUDGED_FROM`] bytes of huge pages are judged slow ([`judged_slow`]), no
    /// table asks for huge pages again in this process.
    pub(crate) fn map_now(&mut self) {
        let bytes = self.bytes();
        let start = Instant::now();
        let p = self.ptr.as_ptr() as *mut u8;
        for at in (0..bytes).step_by(4096) {
            // SAFETY: a write of the zero byte already there, inside the array (`T`'s zero bytes are a
            // valid value); volatile, so that it is made.
            unsafe { std::ptr::write_volatile(p.add(at), 0) };
        }
        let nanos = start.elapsed().as_nanos() as u64;
        if self.huge {
            let total = MAPPED.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
            let spent = MAPPED_NANOS.fetch_add(nanos, Ordering::Relaxed) + nanos;
            let small = MAPPED_SMALL.load(Ordering::Relaxed);
            let small_nanos = MAPPED_SMALL_NANOS.load(Ordering::Relaxed);
            if judged_slow(total, spent, small, small_nanos) {
                HUGE_PAGES.store(false, Ordering::Relaxed);
            }
        } else if self.map.is_some() {
            MAPPED_SMALL.fetch_add(bytes as u64, Ordering::Relaxed);
            MAPPED_SMALL_NANOS.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Bytes in use (a mapping's alignment slack is never touched).
    pub(crate) fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

impl<T: ZeroIsDefault> Drop for Zeroed<T> {
    fn drop(&mut self) {
        match self.map {
            #[cfg(target_os = "linux")]
            // SAFETY: the mapping made in `new`, given back once.
            Some((m, n)) => unsafe {
                libc::munmap(m as *mut _, n);
            },
            #[cfg(not(target_os = "linux"))]
            Some(_) => {}
            // SAFETY: the boxed slice given up in `new`, taken back once.
            None => unsafe {
                drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    self.ptr.as_ptr(),
                    self.len,
                )));
            },
        }
    }
}

impl<T: ZeroIsDefault> std::ops::Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised (zeroed) values owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroIsDefault> std::ops::DerefMut for Zeroed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mapping a table now leaves it zeroed; huge pages are given up only on enough bytes mapped slowly.
    #[test]
    fn tables_mapped_now_stay_zero_and_slow_huge_pages_are_judged() {
        let mut t: Zeroed<u8> = Zeroed::new(6 << 20, 64 << 10);
        t.map_now();
        assert!(t.iter().all(|&x| x == 0));
        let (mb, ms) = (1u64 << 20, 1_000_000u64);
        assert!(judged_slow(64 * mb, 1000 * ms, 0, 0)); // 67 MB/s
        assert!(!judged_slow(64 * mb, 10 * ms, 0, 0)); // 6.7 GB/s
        assert!(!judged_slow(8 * mb, 1000 * ms, 0, 0)); // too little to tell

        // The machines measured: 0.18 GB/s beside 1.3 GB/s is slow; 0.32 GB/s beside 1.6 GB/s is not;
        // nor 0.38 GB/s beside 0.32 GB/s (memory the host had not backed yet).
        assert!(judged_slow(64 * mb, 373 * ms, 32 * mb, 26 * ms));
        assert!(!judged_slow(64 * mb, 210 * ms, 32 * mb, 21 * ms));
        assert!(!judged_slow(64 * mb, 177 * ms, 32 * mb, 105 * ms));
        // Without enough small pages timed, against 2 GB/s: 0.25 GB/s is slow, 0.4 GB/s is not.
        assert!(judged_slow(64 * mb, 268 * ms, 8 * mb, 100 * ms));
        assert!(!judged_slow(64 * mb, 168 * ms, 0, 0));
    }
}
