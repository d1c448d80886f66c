//! Memory for large tables: transparent huge pages (Linux). A search that looks up keys at random
//! places in a table of gigabytes otherwise misses the TLB on nearly every lookup.

/// Huge pages are this large (x86-64 and aarch64 with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
pub(crate) mod sys {
    use std::ffi::c_void;
    extern "C" {
        pub fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> i32;
        pub fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
    }
    pub const PROT_READ: i32 = 1;
    pub const PROT_WRITE: i32 = 2;
    pub const MAP_PRIVATE: i32 = 2;
    pub const MAP_ANONYMOUS: i32 = 0x20;
    pub const MADV_HUGEPAGE: i32 = 14;
}

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
                sys::madvise(first as *mut _, end - first, sys::MADV_HUGEPAGE);
            }
        }
    }
}
