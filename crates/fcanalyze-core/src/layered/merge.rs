//! The k-way merge of a layer's sorted runs ([`Merge`]): its seeds group by group, each key once.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

use crate::error::Result;

use super::code::{decode_rec, order_key, rec_order, Order, Rec, LEAN, RECORD};
use super::spill::io_error;

/// One sorted run of a layer's file, being read: the bytes `pos..end` still to read, the bytes of its
/// records, and a chunk read.
pub(super) struct Run {
    pub(super) pos: u64,
    pub(super) end: u64,
    pub(super) width: usize,
    pub(super) buf: Vec<u8>,
    pub(super) at: usize,
}

/// A seed's place in the merge: its order, and its run.
pub(super) type Head = std::cmp::Reverse<(Order, usize)>;

/// The k-way merge of a layer's sorted runs: its seeds group by group, each key once.
#[derive(Default)]
pub(super) struct Merge {
    pub(super) file: Option<File>,
    pub(super) path: PathBuf,
    pub(super) chunk: usize,
    pub(super) runs: Vec<Run>,
    pub(super) heap: std::collections::BinaryHeap<Head>,
    /// The last key given (a key may be in several runs).
    pub(super) last: Option<[u32; 5]>,
}

/// A layer's file to merge: its path and the bytes of each sorted run (and whether it is lean).
pub(super) struct LayerFile {
    pub(super) path: PathBuf,
    pub(super) runs: Vec<(u64, u64, bool)>,
}

impl Merge {
    /// The merge of `file`'s runs, with a handle and read buffers of its own (each thread of the search
    /// merges the whole file and searches its share of the groups).
    pub(super) fn open(file: &LayerFile) -> Result<Merge> {
        let path = &file.path;
        // Each run reads its part in chunks (smaller when there are many).
        let chunk = ((16 << 20) / file.runs.len().max(1)).clamp(RECORD * 64, 1 << 16);
        let mut m = Merge {
            file: Some(File::open(path).map_err(|e| io_error(path, e))?),
            path: path.clone(),
            chunk,
            ..Merge::default()
        };
        for &(pos, end, lean) in &file.runs {
            m.runs.push(Run {
                pos,
                end,
                width: if lean { LEAN } else { RECORD },
                buf: Vec::new(),
                at: 0,
            });
        }
        for i in 0..m.runs.len() {
            if let Some(r) = m.next_of(i)? {
                m.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
        }
        Ok(m)
    }

    /// The next record of run `i`.
    pub(super) fn next_of(&mut self, i: usize) -> Result<Option<Rec>> {
        let run = &mut self.runs[i];
        if run.at == run.buf.len() {
            if run.pos == run.end {
                return Ok(None);
            }
            let n = (run.end - run.pos).min((self.chunk / run.width * run.width) as u64) as usize;
            run.buf.resize(n, 0);
            let f = self.file.as_mut().expect("an open file");
            let path = &self.path;
            std::io::Seek::seek(f, std::io::SeekFrom::Start(run.pos))
                .and_then(|_| f.read_exact(&mut run.buf))
                .map_err(|e| io_error(path, e))?;
            run.pos += n as u64;
            run.at = 0;
        }
        let bytes = &run.buf[run.at..run.at + run.width];
        run.at += run.width;
        Ok(Some(decode_rec(bytes)))
    }

    /// Bytes of the read buffers.
    pub(super) fn memory(&self) -> usize {
        self.runs.len() * self.chunk
    }

    /// The group hash of the next seed, if any.
    pub(super) fn peek_hash(&self) -> Option<u64> {
        self.heap.peek().map(|&std::cmp::Reverse(((h, _, _), _))| h)
    }

    /// The next seed key of group hash `h` (in key order, each key once), `None` past the last one.
    pub(super) fn next_in_group(&mut self, h: u64) -> Result<Option<[u32; 5]>> {
        while let Some(&std::cmp::Reverse((order, i))) = self.heap.peek() {
            if order.0 != h {
                return Ok(None);
            }
            self.heap.pop();
            if let Some(r) = self.next_of(i)? {
                self.heap.push(std::cmp::Reverse((rec_order(&r), i)));
            }
            let key = order_key(&order);
            if self.last != Some(key) {
                self.last = Some(key);
                return Ok(Some(key));
            }
        }
        Ok(None)
    }
}
