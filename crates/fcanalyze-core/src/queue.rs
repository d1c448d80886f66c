//! The bucket queue of the best-first searches: small integer priorities, the least first.

/// A priority queue of small integer priorities (`0..N`, larger ones counted as `N - 1`), LIFO within a
/// priority. Its buckets are allocated on first use.
pub(crate) struct BucketQueue<const N: usize> {
    buckets: Vec<Vec<u32>>,
    min: usize,
    len: usize,
}

impl<const N: usize> BucketQueue<N> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        BucketQueue {
            buckets: Vec::new(),
            min: N,
            len: 0,
        }
    }

    /// Entries waiting.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The least priority that may be waiting: no entry has a lower one (`N` when none was pushed).
    #[inline]
    pub(crate) fn min(&self) -> usize {
        self.min
    }

    /// Forget every entry, keeping the buckets.
    pub(crate) fn clear(&mut self) {
        if self.len > 0 {
            for b in &mut self.buckets[self.min.min(N - 1)..] {
                b.clear();
            }
        }
        self.min = N;
        self.len = 0;
    }

    /// Queue `idx` with priority `prio`.
    #[inline]
    pub(crate) fn push(&mut self, prio: u32, idx: u32) {
        if self.buckets.is_empty() {
            self.buckets = (0..N).map(|_| Vec::new()).collect();
        }
        let p = (prio as usize).min(N - 1);
        self.buckets[p].push(idx);
        self.min = self.min.min(p);
        self.len += 1;
    }

    /// The entry of least priority pushed last, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        while self.min < N {
            if let Some(i) = self.buckets[self.min].pop() {
                self.len -= 1;
                return Some(i);
            }
            self.min += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_priority_first_last_in_first_out_within_one() {
        let mut q = BucketQueue::<8>::new();
        assert_eq!(q.pop(), None);
        for (prio, idx) in [(3, 1), (1, 2), (3, 3), (20, 4), (1, 5)] {
            q.push(prio, idx);
        }
        assert_eq!(q.len(), 5);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [5, 2, 3, 1, 4]);
        q.push(2, 9);
        q.clear();
        assert_eq!((q.len(), q.pop()), (0, None));
    }
}
