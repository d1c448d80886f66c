//! Memory for large tables: transparent huge pages (Linux). A search that looks up keys at random
//! places in a table of gigabytes otherwise misses the TLB on nearly every lookup.

/// Huge pages are this large (x86-64 and aarch64 with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Ask for huge pages under the whole huge pages inside a vector's buffer (its spare capacity
/// included), when it spans at least one. Only a hint: nothing changes but the page size, and an
/// error (an old kernel, huge pages switched off) is ignored.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE_PAGE {
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
            let huge = bytes >= HUGE_PAGE;
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
