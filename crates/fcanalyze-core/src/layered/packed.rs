//! The format of a level's files ([`super::level::Part`]): sorted codes stored as the differences
//! between neighbours, in blocks that can be read from anywhere.
//!
//! A sorted run of a group's codes differs little from one code to the next: the runs of deal 384243
//! with 2 cells (layers 47-48, by levels) differ by 13-14 bits on average, about 2.5 bytes each as
//! LEB128 varints against the code's 16. Levels are written and read several times each (the runs of
//! children, the merge into the next level, the level read to expand it and twice more in the merges
//! after it), and a giant group's levels hold billions of codes: written as differences, they take a
//! sixth of the disk as written, and far less again on a compressing file system (BENCHMARKS.md; the
//! time of the proofs measured did not change beyond the machine's noise).
//!
//! A file holds blocks of [`BLOCK`] codes (the last may hold fewer): each block's first code in 16
//! bytes (little-endian), then each next code as its difference from the one before (LEB128, at least 1:
//! a file's codes are distinct and increasing). Then the index, a block's first code (16 bytes) and its
//! byte offset (8 bytes) for each block, and a trailer: the codes, the blocks and [`MAGIC`] (8 bytes
//! each, little-endian). The index finds the block of any code's place, and of any code's value.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

use super::spill::io_error;

/// Codes in each block of a file.
pub(super) const BLOCK: usize = 4096;

/// The last 8 bytes of a file of codes.
const MAGIC: u64 = u64::from_le_bytes(*b"fcafclv1");

/// Bytes of the trailer.
const TRAILER: u64 = 24;

/// Bytes a writer encodes before it writes them.
const WRITE_BUFFER: usize = 1 << 20;

/// Bytes of an index entry.
const ENTRY: usize = 24;

/// Most bytes of a code's difference (128 bits, 7 a byte).
const MAX_VARINT: usize = 19;

/// A file's index: each block's first code and byte offset, and the file's codes and bytes.
#[derive(Debug, Default)]
pub(super) struct Index {
    pub(super) blocks: Vec<(u128, u64)>,
    pub(super) len: usize,
    pub(super) bytes: u64,
}

impl Index {
    /// The index of the file at `path`, read from its end; an error when the file is not a file of
    /// codes, or is cut short.
    pub(super) fn read(path: &Path) -> Result<Index> {
        let bad = || Error::Io(format!("{}: not a whole file of codes", path.display()));
        let mut f = File::open(path).map_err(|e| io_error(path, e))?;
        let bytes = f.metadata().map_err(|e| io_error(path, e))?.len();
        if bytes < TRAILER {
            return Err(bad());
        }
        let mut t = [0u8; TRAILER as usize];
        f.seek(SeekFrom::Start(bytes - TRAILER))
            .and_then(|_| f.read_exact(&mut t))
            .map_err(|e| io_error(path, e))?;
        let word = |i: usize| u64::from_le_bytes(t[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (len, nblocks) = (word(0) as usize, word(1) as usize);
        let table = match nblocks.checked_mul(ENTRY) {
            Some(t) if (t as u64) <= bytes - TRAILER => t as u64,
            _ => return Err(bad()),
        };
        if word(2) != MAGIC || nblocks != len.div_ceil(BLOCK) {
            return Err(bad());
        }
        let mut raw = vec![0u8; nblocks * ENTRY];
        f.seek(SeekFrom::Start(bytes - TRAILER - table))
            .and_then(|_| f.read_exact(&mut raw))
            .map_err(|e| io_error(path, e))?;
        let blocks = raw
            .chunks_exact(ENTRY)
            .map(|e| {
                let code = u128::from_le_bytes(e[..16].try_into().expect("16 bytes"));
                (
                    code,
                    u64::from_le_bytes(e[16..].try_into().expect("8 bytes")),
                )
            })
            .collect();
        Ok(Index { blocks, len, bytes })
    }

    /// The byte where the codes end (and the index begins).
    fn end(&self) -> u64 {
        self.bytes - TRAILER - (self.blocks.len() * ENTRY) as u64
    }

    /// The bytes of block `b`: where it starts, and how many.
    fn span(&self, b: usize) -> (u64, usize) {
        let start = self.blocks[b].1;
        let next = self.blocks.get(b + 1).map_or(self.end(), |n| n.1);
        (start, (next - start) as usize)
    }
}

/// Block `b` of the file `f` (at `path`, of index `index`): its bytes read into `bytes` and decoded
/// into `codes` (both cleared first).
fn read_block(
    (f, path): (&mut impl Read, &Path),
    index: &Index,
    b: usize,
    (bytes, codes): (&mut Vec<u8>, &mut Vec<u128>),
) -> Result<()> {
    bytes.resize(index.span(b).1, 0);
    f.read_exact(bytes).map_err(|e| io_error(path, e))?;
    codes.clear();
    if !decode_block(bytes, codes) {
        return Err(Error::Io(format!(
            "{}: a block of codes does not decode",
            path.display()
        )));
    }
    Ok(())
}

/// A file of codes being written ([`Writer::push`] them in increasing order, then
/// [`Writer::finish`]).
pub(super) struct Writer {
    f: File,
    path: PathBuf,
    /// Bytes encoded, not yet written.
    buf: Vec<u8>,
    index: Index,
    last: u128,
}

impl Writer {
    /// A new file at `path`.
    pub(super) fn create(path: PathBuf) -> Result<Writer> {
        let f = File::create(&path).map_err(|e| io_error(&path, e))?;
        Ok(Writer {
            f,
            path,
            buf: Vec::with_capacity(WRITE_BUFFER + 64),
            index: Index::default(),
            last: 0,
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Codes written so far.
    pub(super) fn len(&self) -> usize {
        self.index.len
    }

    /// Write `code`, greater than every code before it.
    #[inline]
    pub(super) fn push(&mut self, code: u128) -> Result<()> {
        let at = self.buf.len();
        if self.index.len % BLOCK == 0 {
            self.index.blocks.push((code, self.index.bytes));
            self.buf.extend_from_slice(&code.to_le_bytes());
        } else {
            debug_assert!(code > self.last, "codes out of order");
            let mut x = code - self.last;
            while x >= 0x80 {
                self.buf.push(x as u8 | 0x80);
                x >>= 7;
            }
            self.buf.push(x as u8);
        }
        self.index.bytes += (self.buf.len() - at) as u64;
        self.last = code;
        self.index.len += 1;
        if self.buf.len() >= WRITE_BUFFER {
            self.f
                .write_all(&self.buf)
                .map_err(|e| io_error(&self.path, e))?;
            self.buf.clear();
        }
        Ok(())
    }

    /// The index and trailer written, the file flushed and closed: its index.
    pub(super) fn finish(mut self) -> Result<Index> {
        let mut tail = Vec::with_capacity(self.index.blocks.len() * ENTRY + TRAILER as usize);
        for &(code, at) in &self.index.blocks {
            tail.extend_from_slice(&code.to_le_bytes());
            tail.extend_from_slice(&at.to_le_bytes());
        }
        for w in [self.index.len as u64, self.index.blocks.len() as u64, MAGIC] {
            tail.extend_from_slice(&w.to_le_bytes());
        }
        self.buf.extend_from_slice(&tail);
        self.f
            .write_all(&self.buf)
            .map_err(|e| io_error(&self.path, e))?;
        self.index.bytes += tail.len() as u64;
        Ok(self.index)
    }
}

/// Codes read in order from one file, from a given place on, a block at a time: each block's bytes
/// read whole (the index gives where it ends) and decoded in one loop.
pub(super) struct Reader {
    f: std::io::BufReader<File>,
    path: PathBuf,
    index: Arc<Index>,
    /// The next block to read.
    block: usize,
    bytes: Vec<u8>,
    /// The codes of the block read, and the next to give.
    codes: Vec<u128>,
    at: usize,
}

/// Bytes each reader reads at a time.
const READ_BUFFER: usize = 1 << 20;

impl Reader {
    /// The codes of the file at `path` (of index `index`) from the one at place `first` on.
    pub(super) fn at(path: &Path, index: &Arc<Index>, first: usize) -> Result<Reader> {
        // From the end on: no block left to read.
        let block = if first < index.len {
            first / BLOCK
        } else {
            index.blocks.len()
        };
        let start = index.blocks.get(block).map_or(index.end(), |b| b.1);
        let mut f = File::open(path).map_err(|e| io_error(path, e))?;
        f.seek(SeekFrom::Start(start))
            .map_err(|e| io_error(path, e))?;
        let mut r = Reader {
            f: std::io::BufReader::with_capacity(READ_BUFFER, f),
            path: path.to_path_buf(),
            index: Arc::clone(index),
            block,
            bytes: Vec::new(),
            codes: Vec::with_capacity(BLOCK),
            at: 0,
        };
        if first < index.len {
            r.next_block()?;
            r.at = first - block * BLOCK;
        }
        Ok(r)
    }

    /// Read and decode the next block into `codes` (none left: `codes` empty).
    fn next_block(&mut self) -> Result<()> {
        self.at = 0;
        if self.block == self.index.blocks.len() {
            self.codes.clear();
            return Ok(());
        }
        let bufs = (&mut self.bytes, &mut self.codes);
        read_block((&mut self.f, &self.path), &self.index, self.block, bufs)?;
        self.block += 1;
        Ok(())
    }

    /// The next code, or None at the file's end.
    #[inline]
    pub(super) fn next_code(&mut self) -> Result<Option<u128>> {
        if self.at == self.codes.len() {
            self.next_block()?;
            if self.codes.is_empty() {
                return Ok(None);
            }
        }
        let c = self.codes[self.at];
        self.at += 1;
        Ok(Some(c))
    }
}

/// The codes of a block's `bytes` appended to `codes`: false when the bytes are not a whole block.
fn decode_block(bytes: &[u8], codes: &mut Vec<u128>) -> bool {
    let Some(first) = bytes.get(..16) else {
        return false;
    };
    let mut last = u128::from_le_bytes(first.try_into().expect("16 bytes"));
    codes.push(last);
    let mut i = 16;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            // Most differences: one byte.
            last += u128::from(b);
            i += 1;
        } else {
            let (mut x, mut shift) = (0u128, 0u32);
            loop {
                let Some(&b) = bytes.get(i) else {
                    return false;
                };
                x |= u128::from(b & 0x7f) << shift;
                i += 1;
                if b < 0x80 {
                    break;
                }
                shift += 7;
                if shift >= 7 * MAX_VARINT as u32 {
                    return false;
                }
            }
            last += x;
        }
        codes.push(last);
    }
    codes.len() <= BLOCK
}

/// The place of the first code at least `x` in the file at `path` of index `index` (its length when
/// none is).
pub(super) fn first_at_least(path: &Path, index: &Index, x: u128) -> Result<usize> {
    // The first block whose first code is at least `x`: the code sought is its first, or in the block
    // before it, which alone is read.
    let b = index.blocks.partition_point(|&(c, _)| c < x);
    if b == 0 {
        return Ok(0);
    }
    let mut f = File::open(path).map_err(|e| io_error(path, e))?;
    f.seek(SeekFrom::Start(index.span(b - 1).0))
        .map_err(|e| io_error(path, e))?;
    let (mut bytes, mut codes) = (Vec::new(), Vec::new());
    read_block((&mut f, path), index, b - 1, (&mut bytes, &mut codes))?;
    Ok((b - 1) * BLOCK + codes.partition_point(|&c| c < x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of its own for test `name` (emptied).
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("fcanalyze-packed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(dir: &Path, codes: &[u128]) -> (PathBuf, Index) {
        let path = dir.join("codes");
        let mut w = Writer::create(path.clone()).unwrap();
        for &c in codes {
            w.push(c).unwrap();
        }
        let index = w.finish().unwrap();
        (path, index)
    }

    /// Codes read back from every place, found by value, and the index read from the file the same
    /// as the writer's: small and huge differences, blocks full and not.
    #[test]
    fn codes_read_back_from_any_place() {
        let dir = scratch("read");
        for n in [0, 1, 2, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17] {
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let mut c = 5u128;
            let codes: Vec<u128> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly small steps, some of up to 104 bits.
                    c += if i % 97 == 3 {
                        (x as u128) << 40
                    } else {
                        1 + (x % 50_000) as u128
                    };
                    c
                })
                .collect();
            let (path, written) = write(&dir, &codes);
            let index = Arc::new(Index::read(&path).unwrap());
            assert_eq!((index.len, index.bytes), (n, written.bytes));
            assert_eq!(index.blocks, written.blocks);
            assert_eq!(index.bytes, std::fs::metadata(&path).unwrap().len());
            for first in [0, 1, n / 2, n.saturating_sub(1), n, BLOCK, BLOCK + 5] {
                let mut r = Reader::at(&path, &index, first).unwrap();
                let mut got = Vec::new();
                while let Some(c) = r.next_code().unwrap() {
                    got.push(c);
                }
                assert_eq!(got, codes[first.min(n)..], "n {n} from {first}");
            }
            for (i, &c) in codes.iter().enumerate().step_by(37) {
                assert_eq!(first_at_least(&path, &index, c).unwrap(), i);
                assert_eq!(first_at_least(&path, &index, c - 1).unwrap(), i);
                assert_eq!(first_at_least(&path, &index, c + 1).unwrap(), i + 1);
            }
            assert_eq!(first_at_least(&path, &index, 0).unwrap(), 0);
            assert_eq!(first_at_least(&path, &index, u128::MAX).unwrap(), n);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file cut short, or of another kind, is refused.
    #[test]
    fn a_file_cut_short_is_refused() {
        let dir = scratch("cut");
        let codes: Vec<u128> = (1..=10_000u128).map(|i| i * 1_000_003).collect();
        let (path, index) = write(&dir, &codes);
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(index.bytes - 1).unwrap();
        assert!(Index::read(&path).is_err());
        std::fs::write(&path, vec![0u8; 16 * 10_000]).unwrap();
        assert!(Index::read(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
