//! The spill directory of a layered proof ([`SpillDir`]): its files' names (layers' seeds, the kept
//! seeds, the checkpoint, level files), its removal, the directories orphaned by killed processes, and
//! the free disk space it may use.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The file of a resumable search's checkpoint, in its directory.
pub(crate) const CHECKPOINT_FILE: &str = "checkpoint";

/// A directory of spill files, removed with everything in it when dropped, unless it persists (a
/// resumable search's).
pub(super) struct SpillDir(pub(super) PathBuf, pub(super) bool);

impl SpillDir {
    pub(super) fn create() -> Result<SpillDir> {
        let base = std::env::temp_dir();
        remove_orphans(&base);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("fcanalyze-layered-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        Ok(SpillDir(dir, false))
    }

    /// The directory `dir` (created if need be, its files left as they are, and not removed when
    /// dropped): a search that can be resumed keeps its files there.
    pub(super) fn at(dir: &Path) -> Result<SpillDir> {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        Ok(SpillDir(dir.to_path_buf(), true))
    }

    pub(super) fn file(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.keys"))
    }

    /// The checkpoint of a resumable search ([`Checkpoint`]).
    pub(super) fn state(&self) -> PathBuf {
        self.0.join(CHECKPOINT_FILE)
    }

    /// A finished layer's seeds, sorted by group, kept for [`chain_to`].
    pub(super) fn kept(&self, layer: usize) -> PathBuf {
        self.0.join(format!("layer-{layer:03}.seeds"))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if !self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Remove the spill directories of processes that are gone (killed in the middle of a layered proof).
/// Only where `/proc` tells which processes live.
pub(super) fn remove_orphans(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fcanalyze-layered-"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Tests: directories that stand for disks of their own, of a given size: the free disk under one is
/// its size less the bytes of the files in it, and the most bytes seen there is kept.
#[cfg(test)]
pub(super) static TEST_DISKS: std::sync::Mutex<Vec<TestDisk>> = std::sync::Mutex::new(Vec::new());

/// Tests: a directory standing for a disk ([`TEST_DISKS`]).
#[cfg(test)]
pub(super) struct TestDisk {
    pub(super) dir: std::path::PathBuf,
    pub(super) size: u64,
    /// The most bytes of files seen in the directory when the free disk was asked.
    pub(super) peak: u64,
}

/// Tests: the bytes of the files under `dir`.
#[cfg(test)]
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => bytes_under(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Bytes free for an unprivileged user on the file system of `path` (`None` where unknown).
pub(super) fn free_disk(path: &Path) -> Option<u64> {
    #[cfg(test)]
    if let Some(d) = TEST_DISKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter_mut()
        .find(|d| path.starts_with(&d.dir))
    {
        let used = bytes_under(&d.dir);
        d.peak = d.peak.max(used);
        return Some(d.size.saturating_sub(used));
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        /// `struct statvfs` of glibc and musl on 64-bit Linux.
        #[repr(C)]
        struct StatVfs {
            bsize: u64,
            frsize: u64,
            blocks: u64,
            bfree: u64,
            bavail: u64,
            files: u64,
            ffree: u64,
            favail: u64,
            fsid: u64,
            flag: u64,
            namemax: u64,
            spare: [i32; 6],
        }
        extern "C" {
            fn statvfs(path: *const std::ffi::c_char, buf: *mut StatVfs) -> i32;
        }
        if cfg!(not(target_pointer_width = "64")) {
            return None;
        }
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<StatVfs>::uninit();
        // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the layout statvfs fills on 64-bit
        // Linux; it is read only when the call succeeded.
        let st = unsafe {
            if statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
                return None;
            }
            st.assume_init()
        };
        Some(st.bavail.saturating_mul(st.frsize))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

pub(super) fn io_error(path: &Path, e: std::io::Error) -> Error {
    let m = format!("layered proof, {}: {e}", path.display());
    match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => Error::DiskFull(m),
        _ => Error::Io(m),
    }
}

/// The name of level file `made` of `thread`'s groups.
pub(super) fn level_name(thread: usize, made: u64) -> String {
    format!("level-{thread}-{made:06}.codes")
}

/// The number of a level file named by [`level_name`] (`None` for any other name, one with a path
/// in it among them).
pub(super) fn level_number(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("level-")?.strip_suffix(".codes")?;
    let (thread, made) = rest.split_once('-')?;
    thread.parse::<usize>().ok()?;
    made.parse().ok()
}
