//! A ring of byte ranges in a buffer, handed out in order and given back in the same order: where each
//! submission's query results are copied until the worker has read them.

use std::collections::VecDeque;

/// Ranges of a buffer of `size` bytes in use, oldest first.
#[derive(Debug)]
pub(crate) struct Ring {
    size: u64,
    /// Where the next range starts, if it fits.
    head: u64,
    live: VecDeque<(u64, u64)>,
}

impl Ring {
    /// An empty ring over `size` bytes.
    pub(crate) fn new(size: u64) -> Ring {
        Ring {
            size,
            head: 0,
            live: VecDeque::new(),
        }
    }

    /// `len` bytes (`len` > 0), at an offset that is a multiple of 8; `None` when they do not fit now.
    pub(crate) fn alloc(&mut self, len: u64) -> Option<u64> {
        let len = len.checked_add(7)? & !7;
        if len == 0 || len > self.size {
            return None;
        }
        let at = match (self.live.front(), self.live.back()) {
            (None, _) | (_, None) => 0,
            (Some(&(oldest, _)), Some(&(newest, _))) => {
                let wrapped = newest < oldest;
                if !wrapped {
                    // In use: [oldest, head).
                    if self.head + len <= self.size {
                        self.head
                    } else if len <= oldest {
                        0
                    } else {
                        return None;
                    }
                } else if self.head + len <= oldest {
                    // In use: [oldest, size) and [0, head).
                    self.head
                } else {
                    return None;
                }
            }
        };
        self.live.push_back((at, len));
        self.head = at + len;
        Some(at)
    }

    /// Gives back the range at `offset` (the oldest, as ranges come back in order).
    pub(crate) fn free(&mut self, offset: u64) {
        if let Some(i) = self.live.iter().position(|&(at, _)| at == offset) {
            self.live.remove(i);
        }
        if self.live.is_empty() {
            self.head = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_never_overlap_and_come_back_in_order() {
        let mut ring = Ring::new(100);
        assert_eq!(ring.alloc(30), Some(0));
        assert_eq!(ring.alloc(30), Some(32));
        assert_eq!(ring.alloc(30), Some(64));
        // Full to the end: the next would wrap onto the oldest.
        assert_eq!(ring.alloc(8), None);
        ring.free(0);
        assert_eq!(ring.alloc(24), Some(0));
        // Wrapped: in use [32, 96) and [0, 24).
        assert_eq!(ring.alloc(8), Some(24));
        assert_eq!(ring.alloc(8), None);
        ring.free(32);
        ring.free(64);
        assert_eq!(ring.alloc(64), Some(32));
        ring.free(0);
        ring.free(24);
        ring.free(32);
        assert_eq!(ring.alloc(100), None, "rounded up to 104");
        assert_eq!(ring.alloc(96), Some(0));
        assert_eq!(ring.alloc(0), None);
    }

    #[test]
    fn a_long_run_of_allocations_stays_within_the_buffer() {
        let mut ring = Ring::new(1000);
        let mut live: VecDeque<(u64, u64)> = VecDeque::new();
        for i in 0..10_000u64 {
            let len = 8 + (i * 37 % 200);
            match ring.alloc(len) {
                Some(at) => {
                    let len = (len + 7) & !7;
                    assert!(at + len <= 1000);
                    for &(o, l) in &live {
                        assert!(at + len <= o || o + l <= at, "overlap");
                    }
                    live.push_back((at, len));
                }
                None => {
                    let (o, _) = live.pop_front().expect("a full ring has ranges in use");
                    ring.free(o);
                }
            }
            if live.len() > 3 {
                let (o, _) = live.pop_front().unwrap();
                ring.free(o);
            }
        }
    }
}
